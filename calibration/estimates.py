"""Per-parameter estimates from combined posterior draws: MAP, marginal summaries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.posterior import Posterior, Problem
from mpiuq.calibration.summaries import Marginal, find_map, marginal

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
