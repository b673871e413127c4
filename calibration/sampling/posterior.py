"""Grouped (eq. 9) or joint posterior sampling on a surrogate, and the combined draws.

Each group of :mod:`~mpiuq.calibration.sampling.grouping` is sampled by its own set of
independent emcee ensembles over its parameters, with the other parameters at
their nominal values and only the group's outputs in the likelihood. Parameters
that no output depends on keep their uniform prior. The combined draws pair the
groups' draws index by index, the product approximation of eq. (9).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.likelihood import LogPosterior, Predictor, make_log_posterior
from mpiuq.calibration.model.noise import NoiseModel
from mpiuq.calibration.sampling.grouping import Grouping
from mpiuq.calibration.sampling.population import spread_rows
from mpiuq.calibration.sampling.sampler import EnsembleSamples, SamplerProgress, SamplerSettings
from mpiuq.calibration.sampling.sampler import run_ensembles as _run_ensembles

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Problem:
    """Everything the likelihood needs, for all calibrated parameters and outputs.

    Attributes
    ----------
    predictor
        Surrogate (or simulator) over the calibrated model parameters.
    names
        Parameter names: the model parameters, then the discrepancy parameters, then the
        noise parameters.
    lower, upper, nominal
        Prior bounds (eq. 6) and nominal values, shape (dim,).
    data_mean, data_var
        Per-output data mean and variance (eq. 7), shape (n_out,).
    loo_rmse
        Surrogate error added to the likelihood variance per output, shape (n_out,)
        (0 for the simulator itself).
    discrepancy
        Model-discrepancy terms (none by default); their parameters follow the model's.
    noise
        Likelihood family per output and noise parameters (all Gaussian, none, by
        default); its parameters are the last entries.
    """

    predictor: Predictor
    names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    nominal: FloatArray
    data_mean: FloatArray
    data_var: FloatArray
    loo_rmse: FloatArray
    discrepancy: Discrepancy = field(default_factory=Discrepancy)
    noise: NoiseModel = field(default_factory=NoiseModel)

    @property
    def n_model(self) -> int:
        """Number of model (simulator) parameters: the predictor's inputs."""
        return len(self.names) - self.discrepancy.dim - self.noise.dim

    @property
    def model_names(self) -> tuple[str, ...]:
        """Names of the model parameters."""
        return self.names[: self.n_model]

    def log_posterior(
        self, columns: tuple[int, ...] | None = None, outputs: tuple[int, ...] | None = None
    ) -> LogPosterior:
        """Log-posterior over ``columns`` with the likelihood of ``outputs`` (default: all)."""
        return make_log_posterior(
            self.predictor,
            self.data_mean,
            self.data_var,
            self.loo_rmse,
            self.lower,
            self.upper,
            self.nominal,
            columns=columns,
            outputs=outputs,
            discrepancy=self.discrepancy,
            noise=self.noise,
        )

    @property
    def var_total(self) -> FloatArray:
        """Likelihood variance ``sigma_i^2 + loo_rmse_i^2`` per output."""
        return np.asarray(self.data_var + self.loo_rmse**2, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class GroupPosterior:
    """Samples of one group: the group's parameter columns and output indices."""

    parameters: tuple[int, ...]
    outputs: tuple[int, ...]
    samples: EnsembleSamples


@dataclass(frozen=True, slots=True)
class Posterior:
    """Result of grouped or joint sampling.

    Attributes
    ----------
    groups
        One entry per sampled group.
    unconstrained
        Parameters not sampled (prior kept).
    draws
        Combined draws of all parameters, shape (n_chains, n_draws, dim); chain ``c``
        pairs ensemble ``c`` of every group, unconstrained parameters are prior draws.
    converged
        Whether every group met its convergence targets.
    """

    groups: tuple[GroupPosterior, ...]
    unconstrained: tuple[int, ...]
    draws: FloatArray
    converged: bool


def sample_posterior(
    problem: Problem,
    grouping: Grouping,
    settings: SamplerSettings,
    seed: np.random.SeedSequence,
    max_draws_per_chain: int = 1000,
    on_progress: Callable[[int, SamplerProgress], None] | None = None,
) -> Posterior:
    """Sample every group of ``grouping`` and combine the draws (eq. 9).

    Parameters
    ----------
    problem
        Surrogate, priors and data.
    grouping
        Groups to sample (use ``joint_grouping`` for a single joint posterior).
    settings
        Ensemble settings shared by all groups.
    seed
        Spawned once per group, then per ensemble; the last child draws the prior
        values of unconstrained parameters and the pairing of draws.
    max_draws_per_chain
        Cap on combined draws per chain (evenly spaced thinned draws are kept).
    on_progress
        Called with ``(group index, progress)`` after every block.
    """
    children = seed.spawn(len(grouping.groups) + 1)
    results = []
    for g, group in enumerate(grouping.groups):
        lp = problem.log_posterior(group.parameters, group.outputs)

        def report(p: SamplerProgress, g: int = g) -> None:
            if on_progress is not None:
                on_progress(g, p)

        samples = _run_ensembles(lp, lp.lower, lp.upper, settings, children[g], report)
        results.append(GroupPosterior(group.parameters, group.outputs, samples))
    rng = np.random.default_rng(children[-1])
    draws = combine_draws(
        problem, results, grouping.unconstrained, settings.ensembles, max_draws_per_chain, rng
    )
    converged = all(r.samples.diagnostics.converged for r in results)
    return Posterior(tuple(results), grouping.unconstrained, draws, converged)


def combine_draws(
    problem: Problem,
    groups: list[GroupPosterior],
    unconstrained: tuple[int, ...],
    n_chains: int,
    max_draws_per_chain: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Pair thinned group draws into full parameter vectors, shape (n_chains, n_draws, dim).

    Every group contributes the same number of thinned draws per chain (the smallest
    count over groups, capped), at evenly spaced steps with its walkers taken in turn
    (:func:`~.population.spread_rows`); unconstrained parameters are drawn
    uniformly from their prior.
    """
    thinned = [g.samples.thinned() for g in groups]
    n_draws = min([t.shape[1] for t in thinned] + [max_draws_per_chain])
    out = np.tile(problem.nominal, (n_chains, n_draws, 1))
    for g, t in zip(groups, thinned, strict=True):
        walkers = g.samples.chain.shape[2]  # rows of t: thinned steps, walkers inner
        idx = spread_rows(1, t.shape[1] // walkers, walkers, n_draws)
        out[:, :, list(g.parameters)] = t[:, idx, :]
    for j in unconstrained:
        out[:, :, j] = rng.uniform(problem.lower[j], problem.upper[j], size=(n_chains, n_draws))
    return out
