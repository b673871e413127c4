"""Experimental designs on a :class:`ParameterBox`: sparse grids and random designs."""

from __future__ import annotations

import warnings

import numpy as np

from mpiuq.surrogate.budget import F8, check_memory, sparse_grid_bytes, sparse_grid_size
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.errors import SurrogateInputError

RANDOM_METHODS = ("sobol", "lhs", "uniform")
#: Highest sparse-grid level (2^29 + 1 nodes per axis; any real budget stops far below).
MAX_SPARSE_GRID_LEVEL = 30


def sparse_grid_unit(dim: int, level: int) -> np.ndarray:
    """Clenshaw-Curtis Smolyak sparse grid on ``[-1, 1]^dim``.

    Nodes come from ``chaospy.generate_quadrature(level, U(-1, 1)^dim,
    rule="clenshaw_curtis", sparse=True, growth=True)`` (nested 1-D rules with
    ``2^l + 1`` points at level ``l >= 1``); in 7-D levels 3 and 4 give 589 and 2465 nodes,
    the design of the reference paper (appendix of 004).  Coordinates within ``1e-14`` of
    zero are set to exactly zero and the nodes are sorted lexicographically, so the
    order is deterministic.

    Parameters
    ----------
    dim : int
        Number of dimensions, >= 1.
    level : int
        Smolyak level, 0..30 (level 0 is the single centre point); the node count
        (:func:`~mpiuq.surrogate.budget.sparse_grid_size`) is checked against the memory
        budget before anything is built.

    Returns
    -------
    numpy.ndarray, shape (n_nodes, dim)
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise SurrogateInputError(f"sparse grid dimension must be an integer >= 1, got {dim!r}")
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or level < 0:
        raise SurrogateInputError(f"sparse grid level must be an integer >= 0, got {level!r}")
    if level > MAX_SPARSE_GRID_LEVEL:
        raise SurrogateInputError(
            f"sparse grid level {level} is too high: expected at most {MAX_SPARSE_GRID_LEVEL}"
        )
    check_memory(
        f"a level-{level} sparse grid in {dim} dimensions",
        sparse_grid_bytes(int(dim), int(level)),
        f"{sparse_grid_size(int(dim), int(level))} nodes",
    )
    import chaospy  # heavy import, only needed here

    dist = chaospy.Iid(chaospy.Uniform(-1.0, 1.0), int(dim))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nodes, _ = chaospy.generate_quadrature(
            int(level), dist, rule="clenshaw_curtis", sparse=True, growth=True
        )
    pts = np.asarray(nodes, dtype=float).reshape(int(dim), -1).T.copy()
    pts[np.abs(pts) < 1e-14] = 0.0
    pts = np.clip(pts, -1.0, 1.0)
    order = np.lexsort(pts.T[::-1])
    return np.ascontiguousarray(pts[order])


def sparse_grid_design(box: ParameterBox, level: int) -> np.ndarray:
    """Clenshaw-Curtis Smolyak sparse grid of a given level on a parameter box.

    Parameters
    ----------
    box : ParameterBox
        The parameter ranges; nodes are in the parameters' own units.
    level : int
        Smolyak level (>= 0).  In 7-D, level 3 -> 589 nodes, level 4 -> 2465 nodes.

    Returns
    -------
    numpy.ndarray, shape (n_nodes, box.dim)
        Nodes in a deterministic (lexicographic in unit coordinates) order.

    Examples
    --------
    >>> box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (10.0, 20.0)})
    >>> sparse_grid_design(box, 1).shape
    (5, 2)
    """
    return box.from_unit(sparse_grid_unit(box.dim, level))


def random_design(
    box: ParameterBox,
    n: int,
    rng: np.random.Generator | int,
    method: str = "sobol",
) -> np.ndarray:
    """Random (validation) design of ``n`` points uniformly covering the box.

    Parameters
    ----------
    box : ParameterBox
        The parameter ranges.
    n : int
        Number of points, >= 1.
    rng : numpy.random.Generator or int
        Source of randomness (an int is used as a seed); the same seed gives the same design.
    method : {"sobol", "lhs", "uniform"}
        Scrambled Sobol' sequence (first ``n`` points of a base-2 block), Latin hypercube,
        or i.i.d. uniform points (all from :mod:`scipy.stats.qmc` / numpy).

    Returns
    -------
    numpy.ndarray, shape (n, box.dim)
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise SurrogateInputError(f"number of design points must be an integer >= 1, got {n!r}")
    if method not in RANDOM_METHODS:
        raise SurrogateInputError(
            f"unknown random design method {method!r}; expected one of {RANDOM_METHODS}"
        )

    check_memory(
        f"a random design of {n} points in {box.dim} dimensions",
        6.0 * F8 * float(n) * box.dim,
        "the points, a base-2 Sobol' block of up to twice as many, and their scaled copy",
    )
    from scipy.stats import qmc  # heavy import, only needed here

    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if method == "sobol":
        m = int(np.ceil(np.log2(max(int(n), 1))))
        unit01 = qmc.Sobol(box.dim, scramble=True, rng=gen).random_base2(m)[: int(n)]
    elif method == "lhs":
        unit01 = qmc.LatinHypercube(box.dim, rng=gen).random(int(n))
    else:
        unit01 = gen.random((int(n), box.dim))
    return box.from_unit(2.0 * unit01 - 1.0)
