"""The Gaussian family (eq. 7): ``y_i ~ N(m_i, v_i)``, ``v_i = sigma_i^2 + e_i + d_i``.

Its predictive draws are truncated to positive values for positive observables.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.families.family import FamilyOutputs, LikelihoodFamily

FloatArray = npt.NDArray[np.float64]


def gaussian_logpdf(y: FloatArray, m: FloatArray, v: npt.ArrayLike) -> FloatArray:
    """``log N(y; m, v)`` (eq. 7).

    Examples
    --------
    >>> y, m, v = np.array([0.0]), np.array([[0.0]]), np.array([1.0])
    >>> round(float(gaussian_logpdf(y, m, v)[0, 0]), 12)
    -0.918938533205
    """
    var = np.asarray(v, dtype=np.float64)
    return np.asarray(-0.5 * ((y - m) ** 2 / var + np.log(2.0 * np.pi * var)), dtype=np.float64)


def gaussian_draw(m: FloatArray, v: FloatArray, u: FloatArray, positive: bool) -> FloatArray:
    """Inverse-CDF draws of ``N(m, v)`` (truncated to positive values if ``positive``) from
    uniforms ``u``."""
    from scipy.special import ndtr, ndtri  # here, not at import: the validator reads this module

    s = np.sqrt(v)
    lo = ndtr(-m / s) if positive else 0.0
    return np.asarray(m + s * ndtri(lo + u * (1.0 - lo)), dtype=np.float64)


def _logpdf(y: FloatArray, o: FamilyOutputs) -> FloatArray:
    return gaussian_logpdf(y, o.mean, o.var)


def _draw(o: FamilyOutputs, u: FloatArray, positive: bool) -> FloatArray:
    return gaussian_draw(o.mean, o.var, u, positive)


GAUSSIAN = LikelihoodFamily(
    name="gaussian",
    summary="y ~ N(m, v), v = replica + surrogate + model-error variance (eq. 7)",
    logpdf=_logpdf,
    draw=_draw,
)
