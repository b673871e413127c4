"""Prior and posterior predictive distributions computed by the simulator.

The posterior predictive of an output is the distribution of a new measurement centre
given the posterior: the simulator's output at a posterior draw, shifted by the draw's
discrepancy bias, plus noise of the likelihood's family and variance (data variance and
discrepancy spread; :meth:`~mpiuq.calibration.model.noise.NoiseModel.draw`): truncated to
positive values for Gaussian and Student-t data sets, log-normal otherwise, so the bands
never go below zero. It is computed from the simulator's outputs at the exact
posterior's draws (:mod:`~mpiuq.calibration.sampling.exact`), so it says how the *simulator*
fits the data, not how the surrogate does (``source`` says which was used).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.sampling.exact import ExactPosterior
from mpiuq.calibration.sampling.posterior import Problem

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Predictive:
    """Prior and posterior predictive of every output; arrays of shape (n_out,) unless noted.

    Attributes
    ----------
    source
        ``"simulator"`` (or ``"surrogate"`` for a fixed design with no model to call).
    prior_mean, prior_lo, prior_hi
        Mean and 5%/95% quantiles of the prior predictive.
    post_mean, post_sd, post_lo, post_hi
        Mean, sd and 5%/95% quantiles of the posterior predictive (noise included).
    model_median, model_lo, model_hi
        Median and 5%/95% quantiles of the model's mean ``f (1 + b)`` over the posterior.
    inside
        Whether each data mean lies inside ``[post_lo, post_hi]``.
    draws
        Posterior predictive draws, shape (n, n_out).
    prior_draws, prior_x
        Prior predictive draws (n_prior, n_out) and their parameter draws (n_prior, dim).
    """

    source: str
    prior_mean: FloatArray
    prior_lo: FloatArray
    prior_hi: FloatArray
    post_mean: FloatArray
    post_sd: FloatArray
    post_lo: FloatArray
    post_hi: FloatArray
    model_median: FloatArray
    model_lo: FloatArray
    model_hi: FloatArray
    inside: npt.NDArray[np.bool_]
    draws: FloatArray
    prior_draws: FloatArray
    prior_x: FloatArray

    @property
    def n_inside(self) -> int:
        """Data means inside their 90% posterior predictive band."""
        return int(self.inside.sum())


def replicate(
    problem: Problem, f: FloatArray, full: FloatArray, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Model means and replicated data at parameter draws.

    Parameters
    ----------
    problem
        Data and discrepancy (its ``loo_rmse`` is the surrogate error term, 0 for the
        simulator).
    f
        Model outputs at the draws, shape (n, n_out).
    full
        Full parameter vectors of the draws, shape (n, dim).
    rng
        Noise generator.
    """
    nm, nd = problem.n_model, problem.discrepancy.dim
    mean, dvar = problem.discrepancy.mean_and_var(f, full[:, nm : nm + nd])
    y = problem.noise.draw(
        mean, dvar, f, problem.data_var, problem.loo_rmse**2, full[:, nm + nd :], rng
    )
    return mean, y


def predictive(
    problem: Problem,
    exact: ExactPosterior,
    prior_model: Callable[[FloatArray], FloatArray],
    rng: np.random.Generator,
    n_prior: int = 1000,
) -> Predictive:
    """Prior and posterior predictive from the exact posterior's simulator outputs.

    Parameters
    ----------
    problem
        The exact problem (simulator predictor, no surrogate error) over the prior box.
    exact
        Posterior draws with the simulator's outputs at them.
    prior_model
        Batch model for the prior draws (the simulator, or the surrogate without one).
    rng
        Noise and prior draws.
    n_prior
        Prior predictive draws.
    """
    mean, y = replicate(problem, exact.outputs, exact.draws, rng)
    x_prior = rng.uniform(problem.lower, problem.upper, size=(n_prior, problem.lower.size))
    f_prior = np.asarray(prior_model(x_prior[:, : problem.n_model]), dtype=np.float64)
    _, y_prior = replicate(problem, f_prior, x_prior, rng)
    lo, hi = np.quantile(y, [0.05, 0.95], axis=0)
    return Predictive(
        source=exact.source,
        prior_mean=y_prior.mean(axis=0),
        prior_lo=np.quantile(y_prior, 0.05, axis=0),
        prior_hi=np.quantile(y_prior, 0.95, axis=0),
        post_mean=y.mean(axis=0),
        post_sd=y.std(axis=0, ddof=1),
        post_lo=lo,
        post_hi=hi,
        model_median=np.median(mean, axis=0),
        model_lo=np.quantile(mean, 0.05, axis=0),
        model_hi=np.quantile(mean, 0.95, axis=0),
        inside=(problem.data_mean >= lo) & (problem.data_mean <= hi),
        draws=y,
        prior_draws=y_prior,
        prior_x=x_prior,
    )
