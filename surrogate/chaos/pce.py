"""Legendre polynomial chaos fitted by least squares, with closed-form leave-one-out errors.

The surrogate of eq. (8) of the reference paper (004): ``f_s(x) = sum_a c_a Psi_a(u(x))``
with ``u`` the box scaled to ``[-1, 1]^dim`` and ``Psi_a`` products of Legendre polynomials
of total degree ``<= order``.  All outputs are fitted at once from one SVD of the design
matrix; leave-one-out residuals come from the hat matrix, ``e_i = r_i / (1 - h_ii)``
(Allen's PRESS identity, ref. [41] of 004), without refitting.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from mpiuq.surrogate.budget import check_memory, pce_fit_bytes
from mpiuq.surrogate.chaos import sensitivity
from mpiuq.surrogate.chaos.basis import (
    EVAL_BLOCK,
    ProductPlan,
    legendre_derivatives,
    legendre_values,
    n_terms,
    norms_squared,
    total_order_indices,
)
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.errors import RankDeficiencyWarning, RankDeficientError, SurrogateInputError

#: Hat-matrix diagonal entries closer than this to 1 make a LOO residual infinite.
LEVERAGE_ONE_TOL = 1e-10
#: Largest magnitude of a training output: sums of squares of up to 10^8 such values stay
#: finite in float64 (1e150^2 * 1e8 < 1.8e308), so the fit and its LOO errors cannot overflow.
MAX_ABS_OUTPUT = 1e150


@dataclass(frozen=True, slots=True, eq=False)
class PolynomialChaos:
    """A fitted Legendre chaos surrogate of a vector-valued function on a box.

    Attributes
    ----------
    box : ParameterBox
        Parameter names and ranges (inputs are in the parameters' own units).
    order : int
        Total-order truncation ``K`` (sum of degrees ``<= K``).
    multi_indices : numpy.ndarray, shape (n_terms, dim), int
        Degrees of each basis function; row 0 is the constant.
    coefficients : numpy.ndarray, shape (n_terms, n_out)
        Coefficients on the (non-normalised) Legendre basis, in output units.
    output_names : tuple of str
    loo_rmse : numpy.ndarray, shape (n_out,)
        Root mean square leave-one-out error, in output units (``inf`` if a training point
        has leverage 1).
    loo_rel_error : numpy.ndarray, shape (n_out,)
        ``loo_rmse`` divided by the standard deviation of the training outputs
        (0 for a constant output fitted to rounding level, ``inf`` if constant but not fitted).
    train_x : numpy.ndarray, shape (n_train, dim)
    train_y : numpy.ndarray, shape (n_train, n_out)
    rank : int
        Numerical rank of the design matrix (``n_terms`` when well posed).

    Equality is identity (``eq=False``): compare predictions or arrays explicitly.
    """

    box: ParameterBox
    order: int
    multi_indices: np.ndarray
    coefficients: np.ndarray
    output_names: tuple[str, ...]
    loo_rmse: np.ndarray
    loo_rel_error: np.ndarray
    train_x: np.ndarray
    train_y: np.ndarray
    rank: int
    _plan: ProductPlan = field(init=False, repr=False)
    _coef_t: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mi = np.asarray(self.multi_indices, dtype=np.int64)
        coef = np.asarray(self.coefficients, dtype=float)
        if mi.ndim != 2 or mi.shape[1] != self.box.dim:
            raise SurrogateInputError(
                f"multi_indices must have shape (n_terms, {self.box.dim}), got {mi.shape}"
            )
        if coef.ndim != 2 or coef.shape[0] != mi.shape[0]:
            raise SurrogateInputError(
                f"coefficients must have shape ({mi.shape[0]}, n_out), got {coef.shape}"
            )
        if len(self.output_names) != coef.shape[1]:
            raise SurrogateInputError(
                f"expected {coef.shape[1]} output names, got {len(self.output_names)}"
            )
        if mi.size and (mi.min() < 0 or mi.sum(axis=1).max() > self.order):
            raise SurrogateInputError(
                f"multi_indices must be non-negative with total degree <= order={self.order}"
            )
        if mi.shape[0] == 0 or np.any(mi[0] != 0):
            raise SurrogateInputError("the first multi-index must be the constant term (all 0)")
        if np.unique(mi, axis=0).shape[0] != mi.shape[0]:
            raise SurrogateInputError("multi_indices must be distinct (a repeated term)")
        for arr in (mi, coef):
            arr.setflags(write=False)
        object.__setattr__(self, "multi_indices", mi)
        object.__setattr__(self, "coefficients", coef)
        object.__setattr__(self, "output_names", tuple(self.output_names))
        object.__setattr__(self, "_plan", ProductPlan.build(mi, self.order))
        object.__setattr__(self, "_coef_t", np.ascontiguousarray(coef.T))

    @property
    def n_terms(self) -> int:
        """Number of basis functions."""
        return int(self.multi_indices.shape[0])

    @property
    def n_outputs(self) -> int:
        """Number of outputs."""
        return int(self.coefficients.shape[1])

    def _unit_points(self, x: ArrayLike) -> tuple[np.ndarray, bool]:
        arr = np.asarray(x, dtype=float)
        single = arr.ndim == 1
        u = self.box.to_unit(arr.reshape(1, -1) if single else arr)
        return u, single

    def predict(self, x: ArrayLike) -> np.ndarray:
        """Evaluate the surrogate.

        Parameters
        ----------
        x : array_like, shape (n, dim) or (dim,)
            Points in the parameters' own units.

        Returns
        -------
        numpy.ndarray, shape (n, n_out) or (n_out,)
            Outputs in output units.
        """
        u, single = self._unit_points(x)
        out = np.empty((u.shape[0], self.n_outputs))
        width = self.order + 1
        block = min(EVAL_BLOCK, u.shape[0])
        work = np.empty((self._plan.workspace_rows(self.n_terms), block))
        for start in range(0, u.shape[0], block):
            chunk = u[start : start + block]
            n = chunk.shape[0]
            if n < block:  # pad the last block so the workspace keeps its shape
                chunk = np.concatenate([chunk, np.zeros((block - n, chunk.shape[1]))])
            table = legendre_values(chunk, self.order).reshape(self.box.dim * width, -1)
            cols = self._plan.columns(table, self.n_terms, work)
            out[start : start + n] = (self._coef_t @ cols).T[:n]
        return out[0] if single else out

    def gradient(self, x: ArrayLike) -> np.ndarray:
        """Gradient of every output with respect to the parameters.

        Parameters
        ----------
        x : array_like, shape (n, dim) or (dim,)
            Points in the parameters' own units.

        Returns
        -------
        numpy.ndarray, shape (n, n_out, dim) or (n_out, dim)
            ``d y_k / d x_j`` in output units per parameter unit.
        """
        u, single = self._unit_points(x)
        dim, width = self.box.dim, self.order + 1
        out = np.empty((u.shape[0], self.n_outputs, dim))
        active = self.multi_indices > 0
        scale = 1.0 / self.box.half_width
        for start in range(0, u.shape[0], EVAL_BLOCK):
            block = u[start : start + EVAL_BLOCK]
            values = legendre_values(block, self.order)
            derivs = legendre_derivatives(values)
            for j in range(dim):
                mixed = values.copy()
                mixed[j] = derivs[j]
                cols = self._plan.columns(mixed.reshape(dim * width, -1), self.n_terms)
                cols[~active[:, j]] = 0.0
                out[start : start + EVAL_BLOCK, :, j] = (cols.T @ self.coefficients) * scale[j]
        return out[0] if single else out

    def mean(self) -> np.ndarray:
        """Mean of each output under the uniform law on the box, ``(n_out,)``."""
        return sensitivity.chaos_mean(self.multi_indices, self.coefficients)

    def variance(self) -> np.ndarray:
        """Variance of each output under the uniform law on the box, ``(n_out,)``."""
        return sensitivity.chaos_variance(self.multi_indices, self.coefficients)

    def sobol_first(self) -> np.ndarray:
        """First-order Sobol indices, ``(n_out, dim)``; 0 for constant outputs."""
        return sensitivity.sobol_first_order(self.multi_indices, self.coefficients)

    def sobol_total(self) -> np.ndarray:
        """Total Sobol indices, ``(n_out, dim)``; 0 for constant outputs."""
        return sensitivity.sobol_total(self.multi_indices, self.coefficients)


def _validate_names(output_names: Sequence[str] | None, n_out: int) -> tuple[str, ...]:
    if output_names is None:
        return tuple(f"y{k}" for k in range(n_out))
    names = tuple(output_names)
    if len(names) != n_out:
        raise SurrogateInputError(f"expected {n_out} output names, got {len(names)}: {names}")
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise SurrogateInputError(f"output names must be non-empty strings, got {name!r}")
    if len(set(names)) != len(names):
        raise SurrogateInputError(f"output names must be unique, got {names}")
    return names


def _validate_training(
    x: ArrayLike, y: ArrayLike, box: ParameterBox
) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 2 or xa.shape[1] != box.dim:
        raise SurrogateInputError(
            f"training points must have shape (n, {box.dim}) for parameters {box.names}, "
            f"got {xa.shape}"
        )
    if ya.ndim == 1:
        ya = ya[:, None]
    if ya.ndim != 2:
        raise SurrogateInputError(f"outputs must have shape (n, n_out), got {ya.shape}")
    if ya.shape[0] != xa.shape[0]:
        raise SurrogateInputError(
            f"outputs have {ya.shape[0]} rows but the design has {xa.shape[0]} rows"
        )
    if ya.shape[1] == 0:
        raise SurrogateInputError("outputs have no columns")
    bad_x = np.argwhere(~np.isfinite(xa))
    if bad_x.size:
        i, j = bad_x[0]
        raise SurrogateInputError(
            f"design point {i} has a non-finite value {xa[i, j]} for parameter {box.names[j]!r}"
        )
    bad_y = np.argwhere(~np.isfinite(ya))
    if bad_y.size:
        i, k = bad_y[0]
        raise SurrogateInputError(
            f"outputs must be finite: row {i}, column {k} is {ya[i, k]} "
            f"({bad_y.shape[0]} non-finite values in total)"
        )
    huge = np.argwhere(np.abs(ya) > MAX_ABS_OUTPUT)
    if huge.size:
        i, k = huge[0]
        raise SurrogateInputError(
            f"outputs must be at most {MAX_ABS_OUTPUT:g} in magnitude (their squares must not "
            f"overflow; rescale the unit): row {i}, column {k} is {ya[i, k]} "
            f"({huge.shape[0]} such values in total)"
        )
    outside = np.flatnonzero(~box.contains(xa))
    if outside.size:
        i = int(outside[0])
        raise SurrogateInputError(
            f"design point {i} = {xa[i].tolist()} lies outside the box "
            f"{box.bounds()} ({outside.size} points outside)"
        )
    return xa, ya


def design_matrix(u: np.ndarray, multi_indices: np.ndarray, order: int) -> np.ndarray:
    """Vandermonde-like matrix ``V[i, k] = Psi_k(u_i)`` for points in ``[-1, 1]^dim``.

    Parameters
    ----------
    u : numpy.ndarray, shape (n, dim)
    multi_indices : numpy.ndarray, shape (n_terms, dim), row 0 constant
    order : int

    Returns
    -------
    numpy.ndarray, shape (n, n_terms)
    """
    mi = np.asarray(multi_indices, dtype=np.int64)
    plan = ProductPlan.build(mi, order)
    table = legendre_values(u, order).reshape(u.shape[1] * (order + 1), -1)
    return np.ascontiguousarray(plan.columns(table, mi.shape[0]).T)


def loo_residuals(residuals: np.ndarray, leverage: np.ndarray) -> np.ndarray:
    """Leave-one-out residuals ``e_i = r_i / (1 - h_ii)`` (``inf`` where ``h_ii ~ 1``).

    Parameters
    ----------
    residuals : numpy.ndarray, shape (n, n_out)
        Training residuals ``y - V c`` of the full fit.
    leverage : numpy.ndarray, shape (n,)
        Diagonal of the hat matrix ``V (V^T V)^-1 V^T``.
    """
    denom = 1.0 - leverage
    one = denom <= LEVERAGE_ONE_TOL
    safe = np.where(one, 1.0, denom)
    out = residuals / safe[:, None]
    out[one] = np.inf
    return np.asarray(out)


def relative_loo_error(loo_rmse: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LOO RMS error divided by the standard deviation of each output column.

    A constant column (zero standard deviation) gets 0 when its LOO error is at rounding
    level (``<= 1e-10 max|y|``) and ``inf`` otherwise.
    """
    std = y.std(axis=0)
    varying = std > 0
    rel = loo_rmse / np.where(varying, std, 1.0)
    rounding = loo_rmse <= 1e-10 * np.abs(y).max(axis=0)
    return np.asarray(np.where(varying, rel, np.where(rounding, 0.0, np.inf)))


def _fit_inputs(
    x: ArrayLike,
    y: ArrayLike,
    box: ParameterBox,
    order: int,
    output_names: Sequence[str] | None,
    on_rank_deficiency: str,
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """The validated training points, outputs and output names of :func:`fit_pce`, after
    its argument, size and memory checks."""
    if on_rank_deficiency not in ("raise", "warn"):
        raise SurrogateInputError(
            f"on_rank_deficiency must be 'raise' or 'warn', got {on_rank_deficiency!r}"
        )
    if isinstance(order, bool) or not isinstance(order, int | np.integer) or order < 0:
        raise SurrogateInputError(f"polynomial order must be an integer >= 0, got {order!r}")
    xa, ya = _validate_training(x, y, box)
    names = _validate_names(output_names, ya.shape[1])
    n_train = xa.shape[0]
    terms = n_terms(box.dim, int(order))
    if n_train <= terms:
        raise SurrogateInputError(
            f"order {order} is too high for {n_train} points: a total-order-{order} expansion "
            f"in {box.dim} dimensions has {terms} terms and least squares with LOO errors "
            f"needs more than {terms} points"
        )
    check_memory(
        f"fitting an order-{order} chaos ({terms} terms) to {n_train} points",
        pce_fit_bytes(n_train, terms, ya.shape[1], box.dim),
        "design matrix, its SVD and the basis workspace",
    )
    return xa, ya, names


def fit_pce(
    x: ArrayLike,
    y: ArrayLike,
    box: ParameterBox,
    order: int,
    output_names: Sequence[str] | None = None,
    *,
    on_rank_deficiency: Literal["raise", "warn"] = "raise",
) -> PolynomialChaos:
    """Fit a total-order Legendre chaos to all outputs at once by least squares.

    The design matrix (columns scaled to the orthonormal basis) is factorised once by a
    thin SVD ``V = U S W^T``; coefficients are ``W S^-1 U^T y`` for every output, the hat
    diagonal is ``h = rowsum(U^2)`` and LOO residuals are ``r_i / (1 - h_ii)``.

    Parameters
    ----------
    x : array_like, shape (n_train, dim)
        Training points inside ``box``, in the parameters' own units.
    y : array_like, shape (n_train, n_out) or (n_train,)
        Finite outputs, one row per training point.
    box : ParameterBox
    order : int
        Total-order truncation; needs ``n_train > C(dim + order, order)`` points.
    output_names : sequence of str, optional
        Defaults to ``("y0", "y1", ...)``.
    on_rank_deficiency : {"raise", "warn"}
        When the numerical rank (singular values above ``s_max * max(n, n_terms) * eps``)
        is below ``n_terms``: raise :class:`RankDeficientError`, or issue a
        :class:`RankDeficiencyWarning` and return the minimum-norm solution with
        ``rank < n_terms`` recorded.

    Returns
    -------
    PolynomialChaos

    Raises
    ------
    SurrogateInputError
        Mismatched shapes, non-finite values, points outside the box, or too few points.
    RankDeficientError
        Rank-deficient design matrix with ``on_rank_deficiency="raise"``.

    Examples
    --------
    >>> box = ParameterBox.from_bounds({"a": (0.0, 2.0), "b": (-1.0, 1.0)})
    >>> grid = np.meshgrid(np.linspace(0.0, 2.0, 5), np.linspace(-1.0, 1.0, 5))
    >>> x = np.stack(grid, axis=-1).reshape(-1, 2)
    >>> pce = fit_pce(x, x[:, 0] * x[:, 1] + 3.0, box, order=2)
    >>> bool(np.allclose(pce.predict([1.5, 0.5]), [3.75]))
    True
    """
    xa, ya, names = _fit_inputs(x, y, box, order, output_names, on_rank_deficiency)
    n_train = xa.shape[0]
    terms = n_terms(box.dim, int(order))
    mi = total_order_indices(box.dim, int(order))
    vmat = design_matrix(box.to_unit(xa), mi, int(order))
    inv_norm = np.sqrt(1.0 / norms_squared(mi))
    u_mat, s, wt = np.linalg.svd(vmat * inv_norm, full_matrices=False)
    tol = s[0] * max(vmat.shape) * np.finfo(float).eps if s.size else 0.0
    rank = int(np.count_nonzero(s > tol))
    if rank < terms:
        msg = (
            f"design matrix of {n_train} points x {terms} terms (order {order}) is rank "
            f"deficient: numerical rank {rank} < {terms}; use more or better spread points "
            f"or a lower order"
        )
        if on_rank_deficiency == "raise":
            raise RankDeficientError(msg, rank=rank, n_terms=terms)
        warnings.warn(msg, RankDeficiencyWarning, stacklevel=2)
    ur = u_mat[:, :rank]
    coef_scaled = wt[:rank].T @ ((ur.T @ ya) / s[:rank, None])
    coef = coef_scaled * inv_norm[:, None]
    leverage = np.einsum("ij,ij->i", ur, ur)
    resid = ya - vmat @ coef
    loo = loo_residuals(resid, leverage)
    with np.errstate(over="ignore", invalid="ignore"):
        loo_rmse = np.sqrt(np.mean(loo**2, axis=0))
    rel = relative_loo_error(loo_rmse, ya)
    return PolynomialChaos(
        box=box,
        order=int(order),
        multi_indices=mi,
        coefficients=coef,
        output_names=names,
        loo_rmse=loo_rmse,
        loo_rel_error=rel,
        train_x=xa.copy(),
        train_y=ya.copy(),
        rank=rank,
    )
