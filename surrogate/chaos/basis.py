"""Total-order Legendre basis on [-1, 1]^d: multi-indices, values, derivatives, norms.

A basis function is ``Psi_a(u) = prod_j P_{a_j}(u_j)`` with ``P_k`` the Legendre
polynomial of degree ``k`` (``P_k(1) = 1``), as in eq. (8) of the reference paper (004).
Under the uniform distribution on ``[-1, 1]``, ``E[P_k^2] = 1 / (2k + 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from mpiuq.surrogate.errors import SurrogateInputError

#: Number of points per block when building Vandermonde matrices (bounds memory use).
EVAL_BLOCK = 2048


def n_terms(dim: int, order: int) -> int:
    """Number of multi-indices of total degree ``<= order`` in ``dim`` dimensions."""
    return comb(dim + order, order)


def total_order_indices(dim: int, order: int) -> np.ndarray:
    """All multi-indices ``a`` with ``sum(a) <= order``, graded by total degree.

    Within one degree the order is reverse lexicographic (the first dimension's degree
    decreases first).  Row 0 is the constant term.

    Returns
    -------
    numpy.ndarray, shape (C(dim+order, order), dim), dtype int64
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise SurrogateInputError(f"dimension must be an integer >= 1, got {dim!r}")
    if isinstance(order, bool) or not isinstance(order, int | np.integer) or order < 0:
        raise SurrogateInputError(f"polynomial order must be an integer >= 0, got {order!r}")
    rows: list[tuple[int, ...]] = []

    def compositions(total: int, parts: int) -> list[tuple[int, ...]]:
        if parts == 1:
            return [(total,)]
        out: list[tuple[int, ...]] = []
        for first in range(total, -1, -1):
            out.extend((first, *rest) for rest in compositions(total - first, parts - 1))
        return out

    for degree in range(int(order) + 1):
        rows.extend(compositions(degree, int(dim)))
    return np.array(rows, dtype=np.int64).reshape(-1, int(dim))


def legendre_values(u: np.ndarray, order: int) -> np.ndarray:
    """Legendre values by the three-term recurrence ``(k+1) P_{k+1} = (2k+1) u P_k - k P_{k-1}``.

    Parameters
    ----------
    u : numpy.ndarray, shape (n, dim)
        Points in ``[-1, 1]^dim`` (values outside extrapolate the polynomials).
    order : int
        Highest degree.

    Returns
    -------
    numpy.ndarray, shape (dim, order + 1, n)
        ``values[j, k, i] = P_k(u[i, j])``.
    """
    ut = np.ascontiguousarray(np.asarray(u, dtype=float).T)
    dim, n = ut.shape
    p = np.empty((dim, order + 1, n))
    p[:, 0] = 1.0
    if order >= 1:
        p[:, 1] = ut
    for k in range(1, order):
        p[:, k + 1] = ((2 * k + 1) * ut * p[:, k] - k * p[:, k - 1]) / (k + 1)
    return p


def legendre_derivatives(values: np.ndarray) -> np.ndarray:
    """Derivatives ``P_k'`` from a table of values: ``P'_{k+1} = P'_{k-1} + (2k+1) P_k``.

    Parameters
    ----------
    values : numpy.ndarray, shape (dim, order + 1, n)
        Output of :func:`legendre_values`.

    Returns
    -------
    numpy.ndarray, same shape
        ``derivatives[j, k, i] = P_k'(u[i, j])``.
    """
    order = values.shape[1] - 1
    dp = np.empty_like(values)
    dp[:, 0] = 0.0
    if order >= 1:
        dp[:, 1] = 1.0
    for k in range(1, order):
        dp[:, k + 1] = dp[:, k - 1] + (2 * k + 1) * values[:, k]
    return dp


@dataclass(frozen=True, slots=True)
class ProductPlan:
    """How to build every basis column with one multiplication each.

    Basis functions are built degree by degree: column ``k`` (degree ``d >= 1``) is
    ``column[parent[k]] * P_{a_j}(u_j)`` where ``j`` is the last dimension with
    ``a_j > 0`` and ``parent`` is ``a`` with ``a_j`` set to zero (lower degree, built
    before).  ``factor[k] = j * (order + 1) + a_j`` indexes the flattened Legendre table.
    """

    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]  # (cols, parents, factors)
    last_dim: np.ndarray  # (n_terms,) the dimension multiplied in last (-1 for constant)

    @classmethod
    def build(cls, multi_indices: np.ndarray, order: int) -> ProductPlan:
        """Plan the products for ``multi_indices`` (must contain every parent)."""
        mi = np.asarray(multi_indices, dtype=np.int64)
        lookup = {tuple(row): k for k, row in enumerate(mi.tolist())}
        degree = mi.sum(axis=1)
        n = mi.shape[0]
        parent = np.full(n, -1, dtype=np.int64)
        factor = np.full(n, -1, dtype=np.int64)
        last = np.full(n, -1, dtype=np.int64)
        for k, row in enumerate(mi.tolist()):
            nz = [j for j, a in enumerate(row) if a > 0]
            if not nz:
                continue
            j = nz[-1]
            par = list(row)
            par[j] = 0
            key = tuple(par)
            if key not in lookup:
                raise SurrogateInputError(
                    f"multi-index set is not downward closed: {tuple(row)} lacks {key}"
                )
            parent[k] = lookup[key]
            factor[k] = j * (order + 1) + row[j]
            last[k] = j
        levels = []
        for d in range(1, int(degree.max(initial=0)) + 1):
            cols = np.flatnonzero(degree == d)
            if cols.size and not np.array_equal(cols, np.arange(cols[0], cols[-1] + 1)):
                raise SurrogateInputError(
                    "multi-indices must be graded: all terms of one total degree contiguous"
                )
            levels.append((cols, parent[cols], factor[cols]))
        return cls(levels=tuple(levels), last_dim=last)

    def columns(
        self, table: np.ndarray, n_terms_: int, workspace: np.ndarray | None = None
    ) -> np.ndarray:
        """Basis values, transposed: ``out[k, i] = Psi_k(u_i)`` from a flattened table.

        Parameters
        ----------
        table : numpy.ndarray, shape (dim * (order + 1), n)
            ``table[j * (order + 1) + k, i]`` is the degree-``k`` factor of dimension ``j``.
        n_terms_ : int
            Number of basis functions.
        workspace : numpy.ndarray, shape ``(n_terms_ + 2 * max_level, n)``, optional
            Reused scratch memory (avoids page faults from fresh large allocations when
            called block after block); the result is a view into it.
        """
        n = table.shape[1]
        widest = max((len(c) for c, _, _ in self.levels), default=0)
        if workspace is None:
            workspace = np.empty((n_terms_ + 2 * widest, n))
        out = workspace[:n_terms_]
        out[0] = 1.0
        for cols, parents, factors in self.levels:
            m = len(cols)
            left = workspace[n_terms_ : n_terms_ + m]
            right = workspace[n_terms_ + widest : n_terms_ + widest + m]
            np.take(out, parents, axis=0, out=left, mode="clip")
            np.take(table, factors, axis=0, out=right, mode="clip")
            # graded ordering: the columns of one degree are a contiguous range
            np.multiply(left, right, out=out[cols[0] : cols[-1] + 1])
        return out

    def workspace_rows(self, n_terms_: int) -> int:
        """Rows of the scratch array :meth:`columns` needs."""
        widest = max((len(c) for c, _, _ in self.levels), default=0)
        return n_terms_ + 2 * widest


def norms_squared(multi_indices: np.ndarray) -> np.ndarray:
    """``E[Psi_a^2] = prod_j 1 / (2 a_j + 1)`` under the uniform law on ``[-1, 1]^dim``."""
    mi = np.asarray(multi_indices, dtype=np.int64)
    return np.asarray(np.prod(1.0 / (2.0 * mi + 1.0), axis=1))
