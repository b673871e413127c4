"""The Student-t family: ``y_i ~ t_nu(m_i, sqrt(v_i))``, one ``nu_<label>`` per data set.

The degrees of freedom are calibrated with the other parameters (uniform prior,
``[data] nu``). Sizes the model cannot fit (a step it lacks, an outlier-ridden centre)
then pull the parameters less than under a Gaussian; small ``nu`` in the posterior says
the data set has such sizes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.families.family import FamilyOutputs, LikelihoodFamily, ShapeParameter

FloatArray = npt.NDArray[np.float64]


def student_t_logpdf(y: FloatArray, m: FloatArray, v: FloatArray, nu: FloatArray) -> FloatArray:
    """Log density of a Student-t with location ``m``, scale ``sqrt(v)`` and ``nu`` degrees
    of freedom.

    Examples
    --------
    >>> from scipy.stats import t
    >>> y, m, v, nu = np.array([1.5]), np.array([[10.0]]), np.array([[4.0]]), np.array([[3.0]])
    >>> bool(abs(student_t_logpdf(y, m, v, nu)[0, 0] - t.logpdf(1.5, 3.0, 10.0, 2.0)) < 1e-12)
    True
    """
    from scipy.special import gammaln  # here, not at import: the validator reads this module

    s = np.sqrt(v)
    z = (y - m) / s
    half = 0.5 * (nu + 1.0)
    out = (
        gammaln(half)
        - gammaln(0.5 * nu)
        - 0.5 * np.log(nu * np.pi)
        - np.log(s)
        - half * np.log1p(z * z / nu)
    )
    return np.asarray(out, dtype=np.float64)


def student_t_draw(
    m: FloatArray, v: FloatArray, nu: FloatArray, u: FloatArray, positive: bool
) -> FloatArray:
    """Inverse-CDF draws of a Student-t (truncated to positive values if ``positive``)
    from uniforms ``u``."""
    from scipy.special import stdtr, stdtrit  # here, not at import: the validator reads this module

    s = np.sqrt(v)
    lo = stdtr(nu, -m / s) if positive else 0.0
    return np.asarray(m + s * stdtrit(nu, lo + u * (1.0 - lo)), dtype=np.float64)


def _nu(o: FamilyOutputs) -> FloatArray:
    if o.shape is None:  # the noise model always passes the shape of a family with one
        raise ValueError("the Student-t family needs its degrees of freedom")
    return o.shape


def _logpdf(y: FloatArray, o: FamilyOutputs) -> FloatArray:
    return student_t_logpdf(y, o.mean, o.var, _nu(o))


def _draw(o: FamilyOutputs, u: FloatArray, positive: bool) -> FloatArray:
    return student_t_draw(o.mean, o.var, _nu(o), u, positive)


STUDENT_T = LikelihoodFamily(
    name="student_t",
    summary="y ~ t_nu(m, sqrt(v)), one calibrated nu_<label> per data table (heavier tails)",
    logpdf=_logpdf,
    draw=_draw,
    shape=ShapeParameter("nu", 0.5, 1000.0, (1.0, 30.0), "degrees of freedom"),
)
