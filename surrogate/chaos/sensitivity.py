"""Variance-based (Sobol) sensitivity indices read off Legendre chaos coefficients.

With an orthogonal basis, the variance of ``f = sum_a c_a Psi_a`` under the uniform law is
``D = sum_{a != 0} c_a^2 E[Psi_a^2]`` and every Sobol partial variance is a sum of some of
these terms (Sudret 2008, ref. [42] of the reference paper 004):

* first order ``S_j``: multi-indices with only ``a_j > 0``;
* total ``T_j``: multi-indices with ``a_j > 0``.

Outputs whose standard deviation is at most ``ZERO_VARIANCE_RTOL * |mean|`` (or whose
variance is exactly zero) are treated as constant: all their indices are defined as 0.
"""

from __future__ import annotations

import numpy as np

from mpiuq.surrogate.chaos.basis import norms_squared

#: Relative standard deviation below which an output counts as constant.
ZERO_VARIANCE_RTOL = 1e-10


def _constant_index(multi_indices: np.ndarray) -> int:
    zero_rows = np.flatnonzero(~np.any(multi_indices != 0, axis=1))
    return int(zero_rows[0]) if zero_rows.size else -1


def partial_variances(multi_indices: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Variance contribution ``c_a^2 E[Psi_a^2]`` of every term (the constant gives 0).

    Returns
    -------
    numpy.ndarray, shape (n_terms, n_out)
    """
    mi = np.asarray(multi_indices, dtype=np.int64)
    coef = np.asarray(coefficients, dtype=float)
    w = coef**2 * norms_squared(mi)[:, None]
    const = _constant_index(mi)
    if const >= 0:
        w[const] = 0.0
    return np.asarray(w)


def chaos_mean(multi_indices: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Mean of each output: the coefficient of the constant term (0 if absent)."""
    const = _constant_index(np.asarray(multi_indices))
    coef = np.asarray(coefficients, dtype=float)
    if const < 0:
        return np.zeros(coef.shape[1])
    return np.array(coef[const], dtype=float)


def chaos_variance(multi_indices: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Variance of each output under the uniform law on the box, ``(n_out,)``."""
    return np.asarray(partial_variances(multi_indices, coefficients).sum(axis=0))


def _normalise(parts: np.ndarray, variance: np.ndarray, mean: np.ndarray) -> np.ndarray:
    constant = (variance <= 0.0) | (np.sqrt(variance) <= ZERO_VARIANCE_RTOL * np.abs(mean))
    safe = np.where(constant, 1.0, variance)
    out = parts / safe[:, None]
    out[constant] = 0.0
    return np.asarray(out)


def sobol_first_order(multi_indices: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """First-order Sobol indices ``S_j = sum_{a: only a_j > 0} c_a^2 E[Psi_a^2] / D``.

    Parameters
    ----------
    multi_indices : numpy.ndarray, shape (n_terms, dim)
    coefficients : numpy.ndarray, shape (n_terms, n_out)

    Returns
    -------
    numpy.ndarray, shape (n_out, dim)
        Dimensionless, in [0, 1]; rows of constant outputs are 0.
    """
    mi = np.asarray(multi_indices, dtype=np.int64)
    w = partial_variances(mi, coefficients)
    active = mi > 0
    only = active & (active.sum(axis=1) == 1)[:, None]
    parts = (only.T.astype(float) @ w).T
    return _normalise(parts, w.sum(axis=0), chaos_mean(mi, coefficients))


def sobol_total(multi_indices: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Total Sobol indices ``T_j = sum_{a: a_j > 0} c_a^2 E[Psi_a^2] / D``.

    Returns
    -------
    numpy.ndarray, shape (n_out, dim)
        Dimensionless, in [0, 1]; rows of constant outputs are 0.

    Examples
    --------
    ``f = P1(u1) + P1(u1) P1(u2)``: variances 1/3 and 1/9, so ``T = (1, 0.25)``.

    >>> mi = np.array([[0, 0], [1, 0], [1, 1]])
    >>> sobol_total(mi, np.array([[5.0], [1.0], [1.0]])).round(12).tolist()
    [[1.0, 0.25]]
    """
    mi = np.asarray(multi_indices, dtype=np.int64)
    w = partial_variances(mi, coefficients)
    parts = ((mi > 0).T.astype(float) @ w).T
    return _normalise(parts, w.sum(axis=0), chaos_mean(mi, coefficients))
