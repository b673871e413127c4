"""Likelihood of the per-size data (eq. 7: Gaussian; or Student-t or log-normal per data set,
:mod:`~mpiuq.calibration.model.noise`) with surrogate-error inflation, optional model discrepancy
(:mod:`~mpiuq.calibration.model.discrepancy`) and uniform priors (eq. 6).

The log-posterior is vectorized: it takes many parameter vectors at once, as
emcee's ``vectorize=True`` expects, and evaluates the predictor (surrogate or
simulator) once per call. A parameter vector holds the ``n_model`` inputs of the
predictor, then the discrepancy parameters, then the noise parameters (Student-t
degrees of freedom).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.noise import NoiseModel

FloatArray = npt.NDArray[np.float64]


class Predictor(Protocol):
    """Anything with ``predict(x) -> (n, n_out)``, e.g. a ``PolynomialChaos`` surrogate."""

    def predict(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs at parameter vectors ``x`` of shape (n, dim)."""
        ...


class ModelPredictor:
    """Wrap a batch model ``f(X) -> Y`` (e.g. a ``BenchmarkModel``) as a :class:`Predictor`."""

    def __init__(self, model: object) -> None:
        if not callable(model):
            raise SamplerError(f"model {model!r} is invalid: expected a callable f(X) -> Y")
        self.model = model

    def predict(self, x: npt.ArrayLike) -> FloatArray:
        """Model outputs at ``x`` (n, dim), shape (n, n_out)."""
        out = self.model(np.atleast_2d(np.asarray(x, dtype=np.float64)))  # type: ignore[operator]
        return np.asarray(out, dtype=np.float64)


def gaussian_pointwise(pred: FloatArray, mean: FloatArray, var: npt.ArrayLike) -> FloatArray:
    """Log density of every output: ``-((mu - f)^2 / v + log(2 pi v)) / 2``.

    Parameters
    ----------
    pred
        Model means, shape (n, n_out).
    mean
        Data means, shape (n_out,).
    var
        Variances, shape (n_out,) or (n, n_out), all > 0.

    Returns
    -------
    ndarray
        Shape (n, n_out).
    """
    v = np.asarray(var, dtype=np.float64)
    return np.asarray(-0.5 * ((pred - mean) ** 2 / v + np.log(2.0 * np.pi * v)), dtype=np.float64)


def gaussian_loglik(pred: FloatArray, mean: FloatArray, var: FloatArray) -> FloatArray:
    """Log of eq. (7): independent Gaussian noise around the data means.

    Parameters
    ----------
    pred
        Model outputs ``f_i(lambda)``, shape (n, n_out).
    mean
        Data means ``mu_i``, shape (n_out,).
    var
        Total variances ``sigma_i^2 (+ loo_i^2)``, shape (n_out,), all > 0.

    Returns
    -------
    ndarray
        Log-likelihood of every row, shape (n,).

    Examples
    --------
    >>> float(gaussian_loglik(np.array([[0.0]]), np.array([0.0]), np.array([1.0]))[0])
    -0.9189385332046727
    """
    resid = (pred - mean) ** 2 / var
    return -0.5 * (resid.sum(axis=-1) + np.sum(np.log(2.0 * np.pi * var)))


@dataclass(frozen=True, slots=True)
class LogPosterior:
    """Vectorized log-posterior over a subset of the parameters (one group of eq. 9).

    Parameters not sampled are held at ``nominal``; only the outputs in
    ``outputs`` enter the likelihood. The prior is uniform on ``[lower, upper]``
    of the sampled parameters (eq. 6), so the log-posterior is the log-likelihood
    inside the box (up to a constant) and ``-inf`` outside.

    Attributes
    ----------
    predictor
        Surrogate (or model) over the first ``n_model`` entries of the parameter vector.
    data_mean
        ``mu_i`` of the selected outputs, shape (n_sel,).
    data_var
        ``sigma_i^2`` of the selected outputs, shape (n_sel,).
    surrogate_var
        ``loo_rmse_i^2`` of the selected outputs, shape (n_sel,).
    outputs
        Indices of the selected outputs among the predictor's outputs.
    columns
        Indices of the sampled parameters in the full parameter vector.
    nominal
        Full parameter vector used for the parameters not sampled, shape (dim,).
    lower, upper
        Prior bounds of the sampled parameters, shape (len(columns),).
    n_model
        Inputs of the predictor (the rest of the vector are discrepancy parameters).
    discrepancy
        The discrepancy model over all outputs (none by default).
    noise
        The likelihood family of every output and its noise parameters (all Gaussian
        by default).
    """

    predictor: Predictor
    data_mean: FloatArray
    data_var: FloatArray
    surrogate_var: FloatArray
    outputs: tuple[int, ...]
    columns: tuple[int, ...]
    nominal: FloatArray
    lower: FloatArray
    upper: FloatArray
    n_model: int
    discrepancy: Discrepancy
    noise: NoiseModel

    @property
    def var_total(self) -> FloatArray:
        """``sigma_i^2 + loo_rmse_i^2`` of the selected outputs, shape (n_sel,)."""
        return np.asarray(self.data_var + self.surrogate_var, dtype=np.float64)

    @property
    def dim(self) -> int:
        """Number of sampled parameters."""
        return len(self.columns)

    def full(self, theta: npt.ArrayLike) -> FloatArray:
        """Embed sampled vectors (n, dim) into full parameter vectors (n, n_params)."""
        t = np.atleast_2d(np.asarray(theta, dtype=np.float64))
        out = np.tile(self.nominal, (t.shape[0], 1))
        out[:, list(self.columns)] = t
        return out

    def in_box(self, theta: FloatArray) -> npt.NDArray[np.bool_]:
        """Whether every row lies inside the prior box (bounds included)."""
        return np.all((theta >= self.lower) & (theta <= self.upper), axis=-1)

    def pointwise(self, full: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Pointwise log-likelihood and predictor outputs at full parameter vectors.

        Parameters
        ----------
        full
            Full parameter vectors (model inputs then discrepancy), shape (n, n_params).

        Returns
        -------
        (loglik, f)
            ``loglik`` of the selected outputs, shape (n, n_sel); ``f`` the predictor's
            outputs at every output, shape (n, n_out).
        """
        f = np.asarray(self.predictor.predict(full[:, : self.n_model]), dtype=np.float64)
        return self.loglik_at(f[:, list(self.outputs)], full), f

    def loglik_at(self, selected: FloatArray, full: FloatArray) -> FloatArray:
        """Pointwise log-likelihood given the predictor's selected outputs (no prediction).

        Parameters
        ----------
        selected
            Predictor outputs of the selected outputs, shape (n, n_sel).
        full
            Full parameter vectors (their discrepancy and noise entries are used), shape
            (n, n_params).

        Returns
        -------
        ndarray
            Shape (n, n_sel).
        """
        nm, nd = self.n_model, self.discrepancy.dim
        mean, dvar = self.discrepancy.mean_and_var(selected, full[:, nm : nm + nd], self.outputs)
        return self.noise.loglik(
            mean,
            dvar,
            selected,
            self.data_mean,
            self.data_var,
            self.surrogate_var,
            full[:, nm + nd :],
            self.outputs,
        )

    def __call__(self, theta: npt.ArrayLike) -> FloatArray:
        """Log-posterior (up to a constant) of every row of ``theta`` (n, dim), shape (n,)."""
        t = np.atleast_2d(np.asarray(theta, dtype=np.float64))
        logp = np.full(t.shape[0], -np.inf)
        inside = self.in_box(t)
        if inside.any():
            ll = self.pointwise(self.full(t[inside]))[0].sum(axis=1)
            logp[inside] = np.where(np.isfinite(ll), ll, -np.inf)
        return logp


def make_log_posterior(
    predictor: Predictor,
    data_mean: npt.ArrayLike,
    data_var: npt.ArrayLike,
    loo_rmse: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    nominal: npt.ArrayLike,
    columns: tuple[int, ...] | None = None,
    outputs: tuple[int, ...] | None = None,
    discrepancy: Discrepancy | None = None,
    noise: NoiseModel | None = None,
) -> LogPosterior:
    """Build the log-posterior of eq. (6)-(7) for one group (eq. 9) or all parameters.

    Parameters
    ----------
    predictor
        Model or surrogate over all calibrated parameters.
    data_mean, data_var
        Per-output data mean ``mu_i`` and variance ``sigma_i^2`` (all outputs), in the
        observable's unit (squared for the variance).
    loo_rmse
        Leave-one-out RMSE of the surrogate per output (same unit); 0 for an exact model.
        The likelihood variance is ``sigma_i^2 + loo_rmse_i^2``.
    lower, upper, nominal
        Prior bounds and nominal values of all parameters (model inputs, then the
        discrepancy parameters).
    columns
        Sampled parameters (default: all).
    outputs
        Outputs in the likelihood (default: all).
    discrepancy
        Discrepancy model (default: none); its parameters follow the model's.
    noise
        Likelihood families and noise parameters (default: all Gaussian, none); its
        parameters are the last entries.

    Raises
    ------
    SamplerError
        If shapes disagree, a variance is not positive, or an index is out of range.
    """
    mean = np.asarray(data_mean, dtype=np.float64).ravel()
    dvar = np.asarray(data_var, dtype=np.float64).ravel()
    svar = np.asarray(loo_rmse, dtype=np.float64).ravel() ** 2
    var = dvar + svar
    lo = np.asarray(lower, dtype=np.float64).ravel()
    hi = np.asarray(upper, dtype=np.float64).ravel()
    nom = np.asarray(nominal, dtype=np.float64).ravel()
    if var.shape != mean.shape or svar.shape != mean.shape:
        raise SamplerError(f"variance shape {var.shape} is invalid: expected {mean.shape}")
    if not np.all(np.isfinite(var) & (var > 0.0)):
        raise SamplerError(f"likelihood variances {var.tolist()} are invalid: expected all > 0")
    if not (lo.shape == hi.shape == nom.shape) or np.any(hi <= lo):
        raise SamplerError(
            f"prior bounds lower={lo.tolist()} upper={hi.tolist()} are invalid: "
            "expected equal lengths with lower < upper"
        )
    cols = tuple(range(lo.size)) if columns is None else tuple(int(c) for c in columns)
    outs = tuple(range(mean.size)) if outputs is None else tuple(int(o) for o in outputs)
    if not cols or min(cols) < 0 or max(cols) >= lo.size:
        raise SamplerError(f"columns {cols} are invalid: expected indices in [0, {lo.size})")
    if not outs or min(outs) < 0 or max(outs) >= mean.size:
        raise SamplerError(f"outputs {outs} are invalid: expected indices in [0, {mean.size})")
    disc = discrepancy if discrepancy is not None else Discrepancy()
    if disc.enabled and len(disc.output_regime) != mean.size:
        raise SamplerError(
            f"discrepancy covers {len(disc.output_regime)} outputs: expected {mean.size}"
        )
    nz = noise if noise is not None else NoiseModel()
    if nz.family and len(nz.family) != mean.size:
        raise SamplerError(f"noise model covers {len(nz.family)} outputs: expected {mean.size}")
    n_model = lo.size - disc.dim - nz.dim
    if n_model < 1:
        raise SamplerError(
            f"{lo.size} parameters leave no model input for {disc.dim} discrepancy and "
            f"{nz.dim} noise terms"
        )
    sel = list(outs)
    return LogPosterior(
        predictor,
        mean[sel],
        dvar[sel],
        svar[sel],
        outs,
        cols,
        nom,
        lo[list(cols)],
        hi[list(cols)],
        n_model,
        disc,
        nz,
    )
