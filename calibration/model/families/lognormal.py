"""The log-normal family: multiplicative noise, ``log y_i ~ N(log m_i, w_i)``.

``y_i`` is the exponential of the centre of the *log* replicas (a geometric mean or
median) and ``w_i = sigma_log,i^2 + e_i / f_i^2 + d_i / f_i^2`` (relative errors are
log-scale variances to first order). Positive by construction; the density includes the
Jacobian ``-log y_i`` so that it is a density of ``y_i`` like the other families.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.families.family import FamilyOutputs, LikelihoodFamily

FloatArray = npt.NDArray[np.float64]


def lognormal_logpdf(log_y: FloatArray, m: FloatArray, w: FloatArray) -> FloatArray:
    """Log density of ``y = exp(log_y)`` when ``log y ~ N(log m, w)`` (Jacobian included).

    Examples
    --------
    >>> float(lognormal_logpdf(np.array([0.0]), np.array([[1.0]]), np.array([[1.0]]))[0, 0])
    -0.9189385332046727
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        log_m = np.log(m)
    out = -0.5 * ((log_y - log_m) ** 2 / w + np.log(2.0 * np.pi * w)) - log_y
    return np.asarray(np.where(m > 0.0, out, -np.inf), dtype=np.float64)


def _log_var(o: FamilyOutputs) -> FloatArray:
    """``w``: the log replicas' variance plus the relative surrogate and model errors."""
    return np.asarray(o.log_var + (o.surrogate_var + o.model_var) / o.f**2, dtype=np.float64)


def _logpdf(log_y: FloatArray, o: FamilyOutputs) -> FloatArray:
    return lognormal_logpdf(log_y, o.mean, _log_var(o))


def _draw(o: FamilyOutputs, u: FloatArray, positive: bool) -> FloatArray:
    from scipy.special import ndtri  # here, not at import: the validator reads this module

    return np.asarray(np.exp(np.log(o.mean) + np.sqrt(_log_var(o)) * ndtri(u)), dtype=np.float64)


LOGNORMAL = LikelihoodFamily(
    name="lognormal",
    summary="log y ~ N(log m, w), y the centre of the log replicas (multiplicative noise)",
    logpdf=_logpdf,
    draw=_draw,
    log_scale=True,
)
