"""Sensitivity-based grouping of parameters and outputs (eq. 9 of the reference paper).

An output depends on a parameter when its total Sobol index exceeds a threshold.
Groups are the connected components of the bipartite outputs-parameters graph;
each group is later sampled with only its own outputs in the likelihood.

:func:`sensitivity_grouping` is the campaign's grouping: a parameter below the
threshold for every output is not dropped but joins the group of the output it
influences most (a weak influence can still be constrained by precise data), and
discrepancy parameters join the group of the outputs of their regime. Only a
parameter with no influence at all (Sobol index at rounding level everywhere) keeps its
prior in the grouped stage; the exact posterior samples every parameter jointly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError

#: A total Sobol index at most this (rounding level of a fitted chaos) is no influence.
NO_INFLUENCE = 1e-6


@dataclass(frozen=True, slots=True)
class Group:
    """One factor of eq. (9): parameters sampled together and the outputs they explain.

    Attributes
    ----------
    parameters
        Column indices of the group's parameters, ascending.
    outputs
        Indices of the group's outputs, ascending.
    """

    parameters: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Grouping:
    """Result of :func:`group_by_sobol`.

    Attributes
    ----------
    groups
        Connected components with at least one parameter and one output.
    unconstrained
        Parameters no output depends on: they keep their prior.
    unexplained
        Outputs that depend on no parameter above the threshold (left out of the likelihood).
    """

    groups: tuple[Group, ...]
    unconstrained: tuple[int, ...]
    unexplained: tuple[int, ...]


def group_by_sobol(sobol_total: npt.ArrayLike, threshold: float) -> Grouping:
    """Split parameters and outputs into independent groups from total Sobol indices.

    Parameters
    ----------
    sobol_total
        Total Sobol indices, shape (n_outputs, n_parameters), values in [0, 1].
    threshold
        Output ``i`` depends on parameter ``j`` when ``sobol_total[i, j] > threshold``.

    Returns
    -------
    Grouping
        Groups ordered by their smallest output index.

    Examples
    --------
    >>> s = np.array([[0.9, 0.0, 0.0], [0.0, 0.6, 0.0], [0.0, 0.5, 0.0]])
    >>> [g.parameters for g in group_by_sobol(s, 0.1).groups]
    [(0,), (1,)]
    """
    s = np.asarray(sobol_total, dtype=np.float64)
    if s.ndim != 2 or s.size == 0 or not np.all(np.isfinite(s)):
        raise SamplerError(
            f"Sobol matrix of shape {s.shape} is invalid: expected a finite "
            "(n_outputs, n_parameters) array"
        )
    if not 0.0 <= threshold < 1.0:
        raise SamplerError(f"sobol_threshold={threshold!r} is invalid: expected 0 <= t < 1")
    return group_by_edges(s > threshold)


def sensitivity_grouping(
    sobol_total: npt.ArrayLike,
    threshold: float,
    extra_edges: npt.ArrayLike | None = None,
) -> Grouping:
    """Groups of eq. (9) that drop no parameter the data can inform.

    Parameters
    ----------
    sobol_total
        Total Sobol indices of the model parameters, shape (n_outputs, n_parameters).
    threshold
        Output ``i`` depends on parameter ``j`` when ``sobol_total[i, j] > threshold``.
    extra_edges
        Dependencies of further (discrepancy) parameters, boolean (n_outputs, n_extra);
        their columns follow the model parameters'.

    Returns
    -------
    Grouping
        As :func:`group_by_sobol`, except that a model parameter above the threshold for
        no output is linked to the output with its largest index (if that index exceeds
        :data:`NO_INFLUENCE`).

    Examples
    --------
    >>> s = np.array([[0.9, 0.01], [0.0, 0.03]])
    >>> [g.parameters for g in sensitivity_grouping(s, 0.05).groups]
    [(0,), (1,)]
    """
    s = np.asarray(sobol_total, dtype=np.float64)
    if s.ndim != 2 or s.size == 0 or not np.all(np.isfinite(s)):
        raise SamplerError(
            f"Sobol matrix of shape {s.shape} is invalid: expected a finite "
            "(n_outputs, n_parameters) array"
        )
    if not 0.0 <= threshold < 1.0:
        raise SamplerError(f"sobol_threshold={threshold!r} is invalid: expected 0 <= t < 1")
    edges = s > threshold
    for j in range(s.shape[1]):
        if not edges[:, j].any() and s[:, j].max() > NO_INFLUENCE:
            edges[int(np.argmax(s[:, j])), j] = True
    if extra_edges is not None:
        extra = np.asarray(extra_edges, dtype=bool)
        if extra.ndim != 2 or extra.shape[0] != s.shape[0]:
            raise SamplerError(
                f"extra dependencies of shape {extra.shape} are invalid: expected "
                f"({s.shape[0]}, n_extra)"
            )
        edges = np.concatenate([edges, extra], axis=1)
    return group_by_edges(edges)


def group_by_edges(edges: npt.ArrayLike) -> Grouping:
    """Connected components of the bipartite graph given by a boolean dependency matrix.

    Parameters
    ----------
    edges
        ``edges[i, j]``: output ``i`` depends on parameter ``j``, shape (n_outputs, n_parameters).
    """
    edges = np.asarray(edges, dtype=bool)
    n_out, n_par = edges.shape
    # union-find over nodes 0..n_out-1 (outputs) and n_out..n_out+n_par-1 (parameters)
    parent = list(range(n_out + n_par))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j in zip(*np.nonzero(edges), strict=True):
        ra, rb = find(int(i)), find(n_out + int(j))
        if ra != rb:
            parent[rb] = ra
    components: dict[int, tuple[list[int], list[int]]] = {}
    for i in range(n_out):
        if edges[i].any():
            components.setdefault(find(i), ([], []))[0].append(i)
    for j in range(n_par):
        if edges[:, j].any():
            components.setdefault(find(n_out + j), ([], []))[1].append(j)
    groups = sorted(
        (Group(tuple(sorted(p)), tuple(sorted(o))) for o, p in components.values()),
        key=lambda g: g.outputs[0],
    )
    unconstrained = tuple(int(j) for j in range(n_par) if not edges[:, j].any())
    unexplained = tuple(int(i) for i in range(n_out) if not edges[i].any())
    return Grouping(tuple(groups), unconstrained, unexplained)


def joint_grouping(n_outputs: int, n_parameters: int) -> Grouping:
    """A single group with every parameter and every output (``grouping = "joint"``)."""
    return Grouping((Group(tuple(range(n_parameters)), tuple(range(n_outputs))),), (), ())
