"""Prior and posterior predictive distributions of the calibrated outputs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.posterior import Posterior, Problem

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Predictive:
    """Prior and posterior predictive of every output (eq. 7 noise included).

    All arrays have shape (n_out,) except ``draws``; units are the observable's.

    Attributes
    ----------
    prior_mean, prior_lo, prior_hi
        Mean and 5%/95% quantiles of the prior predictive.
    post_mean, post_sd, post_lo, post_hi
        Mean, sd and 5%/95% quantiles of the posterior predictive ``f(lambda) + noise``.
    post_model_sd
        Sd of the surrogate output ``f(lambda)`` over the posterior (no noise).
    draws
        Posterior predictive draws, shape (n_chains, n_draws, n_out).
    prior_draws
        Prior predictive draws, shape (n_prior, n_out).
    prior_x
        The prior parameter draws behind ``prior_draws``, shape (n_prior, dim).
    """

    prior_mean: FloatArray
    prior_lo: FloatArray
    prior_hi: FloatArray
    post_mean: FloatArray
    post_sd: FloatArray
    post_lo: FloatArray
    post_hi: FloatArray
    post_model_sd: FloatArray
    draws: FloatArray
    prior_draws: FloatArray
    prior_x: FloatArray


def predictive(
    problem: Problem, posterior: Posterior, rng: np.random.Generator, n_prior: int = 1000
) -> Predictive:
    """Prior and posterior predictive distributions through the surrogate plus eq. (7) noise.

    The noise variance is ``sigma_i^2 + loo_rmse_i^2``, the likelihood's. Prior draws are
    uniform on the prior box.
    """
    chains, n_draws, dim = posterior.draws.shape
    f = problem.predictor.predict(posterior.draws.reshape(-1, dim))
    sd_noise = np.sqrt(problem.var_total)
    y = f + rng.normal(size=f.shape) * sd_noise
    x_prior = rng.uniform(problem.lower, problem.upper, size=(n_prior, dim))
    y_prior = (
        problem.predictor.predict(x_prior) + rng.normal(size=(n_prior, sd_noise.size)) * sd_noise
    )
    return Predictive(
        prior_mean=y_prior.mean(axis=0),
        prior_lo=np.quantile(y_prior, 0.05, axis=0),
        prior_hi=np.quantile(y_prior, 0.95, axis=0),
        post_mean=y.mean(axis=0),
        post_sd=y.std(axis=0, ddof=1),
        post_lo=np.quantile(y, 0.05, axis=0),
        post_hi=np.quantile(y, 0.95, axis=0),
        post_model_sd=f.std(axis=0, ddof=1),
        draws=y.reshape(chains, n_draws, -1),
        prior_draws=y_prior,
        prior_x=x_prior,
    )
