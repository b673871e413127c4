"""Estimates and predictive distributions from combined posterior draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.estimates import Marginal, find_map, marginal
from mpiuq.calibration.posterior import Posterior, Problem

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Estimates:
    """Per-parameter estimates, in the parameters' units.

    Attributes
    ----------
    map
        Maximum a posteriori point of the full likelihood (all parameters, all outputs),
        shape (dim,).
    map_log_post
        Log-posterior at ``map`` (up to a constant).
    marginals
        Mean, sd and 90% HDI of every parameter.
    constrained
        Whether the data constrain each parameter: it was sampled in some group and its
        posterior sd is below ``sd_ratio`` times its prior sd.
    """

    map: FloatArray
    map_log_post: float
    marginals: tuple[Marginal, ...]
    constrained: tuple[bool, ...]


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


def estimate(
    problem: Problem, posterior: Posterior, map_starts: int = 5, sd_ratio: float = 0.8
) -> Estimates:
    """MAP by bounded L-BFGS-B from the best combined draws, and marginal summaries.

    Parameters
    ----------
    problem
        Surrogate, priors and data; the MAP maximises the full log-posterior.
    posterior
        Combined draws of :func:`~mpiuq.calibration.posterior.sample_posterior`.
    map_starts
        Number of best draws (under the full log-posterior) used as starts.
    sd_ratio
        Threshold of posterior sd / prior sd (uniform prior sd = width / sqrt(12))
        above which a sampled parameter is reported as unconstrained.
    """
    full = problem.log_posterior()
    flat = posterior.draws.reshape(-1, posterior.draws.shape[-1])
    lp = full(flat)
    best = flat[np.argsort(lp)[::-1][:map_starts]]
    x_map, lp_map = find_map(full, best, problem.lower, problem.upper)
    marginals = tuple(marginal(flat[:, j]) for j in range(flat.shape[1]))
    prior_sd = (problem.upper - problem.lower) / np.sqrt(12.0)
    sampled = {j for g in posterior.groups for j in g.parameters}
    constrained = tuple(
        bool(j in sampled and marginals[j].sd < sd_ratio * prior_sd[j])
        for j in range(flat.shape[1])
    )
    return Estimates(x_map, lp_map, marginals, constrained)


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


def map_from_prior(
    problem: Problem, rng: np.random.Generator, n_prior: int = 4000, starts: int = 5
) -> tuple[FloatArray, float]:
    """MAP of the full log-posterior, started from the best of ``n_prior`` prior draws.

    Used before sampling as nominal values of the parameters outside each group
    (``nominal_source = "map"``).
    """
    full = problem.log_posterior()
    x = rng.uniform(problem.lower, problem.upper, size=(n_prior, problem.lower.size))
    lp = full(x)
    best = x[np.argsort(lp)[::-1][:starts]]
    return find_map(full, best, problem.lower, problem.upper)
