"""Sensitivity-based grouping of parameters and outputs (eq. 9 of the reference paper).

An output depends on a parameter when its total Sobol index exceeds a threshold.
Groups are the connected components of the bipartite outputs-parameters graph;
each group is later sampled with only its own outputs in the likelihood.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError


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
    n_out, n_par = s.shape
    edges = s > threshold
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
