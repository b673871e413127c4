"""Error models of the per-size data summaries: Gaussian, Student-t and log-normal.

Every output ``i`` (one message size of one data set) has a data centre ``y_i`` (the
replicas' mean, median or trimmed mean, :func:`~mpiuq.calibration.observations.replica_summary`)
and a replica spread ``sigma_i``; the model predicts ``m_i = f_i(lambda) (1 + b_r)``
(:mod:`~mpiuq.calibration.discrepancy`) with a model-error variance ``d_i = (s_r f_i)^2``
and a surrogate error variance ``e_i`` (the chaos's LOO error, 0 for the simulator).
The data sets of a campaign choose their family (``[data] likelihood``):

``gaussian`` (eq. 7)
    ``y_i ~ N(m_i, v_i)``, ``v_i = sigma_i^2 + e_i + d_i``.
``student_t``
    ``y_i ~ t_nu(m_i, sqrt(v_i))``, with one degrees-of-freedom parameter ``nu_<label>``
    per data set calibrated with the others (uniform prior, ``[data] nu``). Sizes the
    model cannot fit (a step it lacks, an outlier-ridden centre) then pull the parameters
    less than under a Gaussian; small ``nu`` in the posterior says the data set has such
    sizes.
``lognormal``
    multiplicative noise: ``log y_i ~ N(log m_i, w_i)`` with ``y_i`` the exponential of
    the centre of the *log* replicas (a geometric mean or median) and
    ``w_i = sigma_log,i^2 + e_i / f_i^2 + d_i / f_i^2`` (relative errors are log-scale
    variances to first order). Positive by construction; the density includes the
    Jacobian ``-log y_i`` so that it is a density of ``y_i`` like the other two.

Positivity. Times and throughputs are positive, so the posterior predictive draws new
centres truncated to positive values (Gaussian, Student-t; ``positive = True``) or
log-normal ones, and its bands never go below zero. The *likelihood* is not truncated:
renormalising by ``Phi(m / sd)`` is nil where the model is many sd above zero, and where
it is not (a surrogate predicting a negative time in a corner of the prior) it would
reward the corner (a truncated normal with a negative mean still puts its mass near
zero), which made the stock job's surrogate MCMC wander there (importance k-hat 0.95
against 0.37 without it on a synthetic recovery).

The degrees-of-freedom parameters follow the discrepancy parameters in the parameter
vector. The posterior predictive draws new data centres from the same family (so its
bands respect positivity: truncated draws for Gaussian and Student-t, log-normal draws).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln, ndtr, ndtri, stdtr, stdtrit

from mpiuq.calibration.errors import SamplerError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Likelihood families, in code order (``NoiseModel.family`` holds the codes).
FAMILIES: tuple[str, ...] = ("gaussian", "student_t", "lognormal")
GAUSSIAN, STUDENT_T, LOGNORMAL = range(3)


@dataclass(frozen=True, slots=True)
class NoiseModel:
    """Per-output likelihood family and the Student-t degrees-of-freedom parameters.

    Attributes
    ----------
    family
        Family code (index into :data:`FAMILIES`) of every output, shape (n_out,).
    nu_index
        Index into ``nu_names`` of every Student-t output's degrees of freedom (-1 for
        the others), shape (n_out,).
    nu_names
        Names of the degrees-of-freedom parameters (``nu_<label>``).
    nu_lower, nu_upper
        Their uniform prior bounds.
    log_mean, log_var
        Centre and squared spread of the log replicas of every output (used by
        log-normal outputs), shape (n_out,).
    positive
        The data are positive: Gaussian and Student-t predictive draws are truncated to
        positive values (a campaign's times and throughputs); False for generic models.
    """

    family: tuple[int, ...] = ()
    nu_index: tuple[int, ...] = ()
    nu_names: tuple[str, ...] = ()
    nu_lower: tuple[float, ...] = ()
    nu_upper: tuple[float, ...] = ()
    log_mean: tuple[float, ...] = ()
    log_var: tuple[float, ...] = ()
    positive: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the noise parameters."""
        return self.nu_names

    @property
    def dim(self) -> int:
        """Number of noise parameters."""
        return len(self.nu_names)

    @property
    def lower(self) -> FloatArray:
        """Lower prior bounds, shape (dim,)."""
        return np.asarray(self.nu_lower, dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        """Upper prior bounds, shape (dim,)."""
        return np.asarray(self.nu_upper, dtype=np.float64)

    @property
    def nominal(self) -> FloatArray:
        """Prior midpoints, shape (dim,)."""
        return (self.lower + self.upper) / 2.0

    @property
    def all_gaussian(self) -> bool:
        """Whether every output is Gaussian (the fast path)."""
        return all(f == GAUSSIAN for f in self.family)

    def outputs_of(self, k: int) -> tuple[int, ...]:
        """Outputs whose likelihood noise parameter ``k`` enters."""
        return tuple(i for i, j in enumerate(self.nu_index) if j == k)

    def loglik(
        self,
        mean: FloatArray,
        model_var: FloatArray,
        f: FloatArray,
        data_mean: FloatArray,
        data_var: FloatArray,
        surrogate_var: FloatArray,
        nu: FloatArray,
        outputs: tuple[int, ...],
    ) -> FloatArray:
        """Pointwise log-likelihood of the selected outputs, shape (n, n_sel).

        Parameters
        ----------
        mean, model_var
            Model mean ``m`` and discrepancy variance ``d`` of the selected outputs,
            shape (n, n_sel).
        f
            Model outputs of the selected outputs (for relative errors), shape (n, n_sel).
        data_mean, data_var, surrogate_var
            Data centre ``y``, replica variance ``sigma^2`` and surrogate variance ``e``
            of the selected outputs, shape (n_sel,).
        nu
            Noise parameters, shape (n, dim).
        outputs
            Indices of the selected outputs.
        """
        var = data_var + surrogate_var + model_var
        if not self.family or self.all_gaussian:
            return gaussian_logpdf(data_mean, mean, var)
        fam = np.asarray(self.family, dtype=np.int64)[list(outputs)]
        var = np.broadcast_to(var, mean.shape)
        out = np.empty_like(mean)
        g = fam == GAUSSIAN
        if g.any():
            out[:, g] = gaussian_logpdf(data_mean[g], mean[:, g], var[:, g])
        t = fam == STUDENT_T
        if t.any():
            k = np.asarray(self.nu_index, dtype=np.int64)[list(outputs)][t]
            out[:, t] = student_t_logpdf(data_mean[t], mean[:, t], var[:, t], nu[:, k])
        ln = fam == LOGNORMAL
        if ln.any():
            log_y = np.asarray(self.log_mean, dtype=np.float64)[list(outputs)][ln]
            log_v = np.asarray(self.log_var, dtype=np.float64)[list(outputs)][ln]
            out[:, ln] = lognormal_logpdf(
                log_y,
                mean[:, ln],
                log_v + (surrogate_var[ln] + model_var[:, ln]) / f[:, ln] ** 2,
            )
        return out

    def draw(
        self,
        mean: FloatArray,
        model_var: FloatArray,
        f: FloatArray,
        data_var: FloatArray,
        surrogate_var: FloatArray,
        nu: FloatArray,
        rng: np.random.Generator,
    ) -> FloatArray:
        """Replicated data centres of every output at parameter draws, shape (n, n_out).

        Gaussian and Student-t draws are truncated to positive values when ``positive``;
        log-normal draws are positive by construction.
        """
        var = np.broadcast_to(data_var + surrogate_var + model_var, mean.shape)
        pos = self.positive
        u = rng.random(mean.shape)
        fam = (
            np.asarray(self.family, dtype=np.int64)
            if self.family
            else np.zeros(mean.shape[1], dtype=np.int64)
        )
        out = np.empty_like(mean)
        g = fam == GAUSSIAN
        if g.any():
            out[:, g] = gaussian_draw(mean[:, g], var[:, g], u[:, g], pos)
        t = fam == STUDENT_T
        if t.any():
            k = np.asarray(self.nu_index, dtype=np.int64)[t]
            out[:, t] = student_t_draw(mean[:, t], var[:, t], nu[:, k], u[:, t], pos)
        ln = fam == LOGNORMAL
        if ln.any():
            log_v = np.asarray(self.log_var, dtype=np.float64)[ln]
            w = log_v + (surrogate_var[ln] + model_var[:, ln]) / f[:, ln] ** 2
            out[:, ln] = np.exp(np.log(mean[:, ln]) + np.sqrt(w) * ndtri(u[:, ln]))
        return out


def noise_model(
    families: tuple[str, ...],
    dataset: npt.ArrayLike,
    labels: tuple[str, ...],
    nu_priors: tuple[tuple[float, float], ...],
    log_mean: npt.ArrayLike,
    log_var: npt.ArrayLike,
    positive: bool = True,
) -> NoiseModel:
    """The noise model of a campaign's data sets (positive observables by default).

    Parameters
    ----------
    families
        Likelihood family of every data set (:data:`FAMILIES`).
    dataset
        Data set index of every output.
    labels
        Label of every data set (names ``nu_<label>``).
    nu_priors
        Prior ``(low, high)`` of every data set's degrees of freedom (used for Student-t).
    log_mean, log_var
        Log-scale centre and squared spread of every output.
    positive
        Truncate Gaussian and Student-t predictive draws to positive values.

    Examples
    --------
    >>> m = noise_model(("gaussian", "student_t"), [0, 1, 1], ("a", "b"), ((1, 30), (2, 20)),
    ...                 [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    >>> m.names, m.family, m.nu_index
    (('nu_b',), (0, 1, 1), (-1, 0, 0))
    """
    for name in families:
        if name not in FAMILIES:
            raise SamplerError(f"likelihood {name!r} is unknown: expected one of {list(FAMILIES)}")
    ds = np.asarray(dataset, dtype=np.int64)
    t_sets = [k for k, name in enumerate(families) if name == "student_t"]
    index = {k: j for j, k in enumerate(t_sets)}
    return NoiseModel(
        family=tuple(FAMILIES.index(families[d]) for d in ds),
        nu_index=tuple(index.get(int(d), -1) for d in ds),
        nu_names=tuple(f"nu_{labels[k]}" for k in t_sets),
        nu_lower=tuple(float(nu_priors[k][0]) for k in t_sets),
        nu_upper=tuple(float(nu_priors[k][1]) for k in t_sets),
        log_mean=tuple(float(v) for v in np.asarray(log_mean, dtype=np.float64)),
        log_var=tuple(float(v) for v in np.asarray(log_var, dtype=np.float64)),
        positive=positive,
    )


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


def gaussian_draw(m: FloatArray, v: FloatArray, u: FloatArray, positive: bool) -> FloatArray:
    """Inverse-CDF draws of ``N(m, v)`` (truncated to positive values if ``positive``) from
    uniforms ``u``."""
    s = np.sqrt(v)
    lo = ndtr(-m / s) if positive else 0.0
    return np.asarray(m + s * ndtri(lo + u * (1.0 - lo)), dtype=np.float64)


def student_t_draw(
    m: FloatArray, v: FloatArray, nu: FloatArray, u: FloatArray, positive: bool
) -> FloatArray:
    """Inverse-CDF draws of a Student-t (truncated to positive values if ``positive``)
    from uniforms ``u``."""
    s = np.sqrt(v)
    lo = stdtr(nu, -m / s) if positive else 0.0
    return np.asarray(m + s * stdtrit(nu, lo + u * (1.0 - lo)), dtype=np.float64)
