"""A campaign around an external simulator: its model, its budgeted runs, its exact stage.

The campaign pipeline (:mod:`~mpiuq.calibration.pipeline.campaign`) is the same as for mpiuq's own
simulator: same data, likelihoods, discrepancy, surrogate, MCMC, checks, figures and
``summary.json``. What differs is the price of a run, so every run goes through
:class:`~mpiuq.calibration.pipeline.run_budget.SimulatorRuns` (executor, checkpoints, budget), and
the stages that would call the simulator freely for a cheap model call the surrogate
instead:

* the prior predictive and the multi-start mode search use the surrogates (no runs);
* the exact stage (:func:`budgeted_exact`) weights ``[exact] proposal_draws`` surrogate
  posterior draws by the simulator's likelihood and, only if those weights pass the
  ``importance_sampling`` check, resamples them and moves them on the simulator's
  posterior as far as the budget left allows. The posterior is then the simulator's
  (``source = "simulator"``); when the check fails it stays the surrogate's
  (``source = "surrogate"``: its draws, with the simulator's outputs at them for the
  predictive) and the campaign fails its check loudly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.checking.checks import importance_check
from mpiuq.calibration.config import Campaign, ChecksSpec, ExactSpec
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.likelihood import LogPosterior
from mpiuq.calibration.pipeline.run_budget import SimulatorRuns
from mpiuq.calibration.sampling.exact import ExactPosterior, corrected_posterior
from mpiuq.calibration.sampling.posterior import Problem
from mpiuq.calibration.sampling.posterior_path import PathChoice
from mpiuq.surrogate.chaos.pce import PolynomialChaos
from mpiuq.surrogate.design.design_run import DesignProgress
from mpiuq.surrogate.executors import Executor
from mpiuq.surrogate.external_model import CommandModel, PythonModel

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ExternalModel:
    """The user's simulator as the campaign's model: its outputs at the data's sizes.

    Picklable (executors ship it to workers).

    Attributes
    ----------
    simulator
        The adapter that runs the user's callable or command (all its outputs).
    columns
        Index of every campaign output among the simulator's outputs.
    names
        The campaign's output names (:attr:`Observations.output_names`).
    """

    simulator: PythonModel | CommandModel
    columns: tuple[int, ...]
    names: tuple[str, ...]

    @property
    def output_names(self) -> tuple[str, ...]:
        """One name per campaign output."""
        return self.names

    @property
    def model_id(self) -> str:
        """Fingerprint of the simulator (its code) and of the outputs taken from it."""
        text = repr((self.simulator.model_id, self.columns, self.names))
        return "external-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """The campaign's outputs at the rows of ``x``, shape (n, n_out)."""
        y = self.simulator(x)
        return np.asarray(y[:, list(self.columns)], dtype=np.float64)


def external_model_for(campaign: Campaign, observations: Observations) -> ExternalModel:
    """The model of a campaign around an external simulator.

    Raises
    ------
    CampaignError
        If the campaign has no external simulator.
    """
    ext = campaign.simulator.external
    if ext is None:
        raise CampaignError(
            "simulator.callable", "(missing)", "an external simulator (callable or command)"
        )
    offsets, start = [], 0
    for _, sizes in ext.output_sizes:
        offsets.append(start)
        start += len(sizes)
    columns = []
    for d, s in zip(observations.dataset, observations.sizes_bytes, strict=True):
        k = 0 if len(ext.output_sizes) == 1 else int(d)
        columns.append(offsets[k] + ext.output_sizes[k][1].index(int(s)))
    names = campaign.parameters.names
    raw_names = ext.output_names()
    simulator: PythonModel | CommandModel
    if ext.callable is not None:
        simulator = PythonModel(
            ext.callable, names, len(raw_names), raw_names, (str(ext.base_dir),)
        )
    else:
        simulator = CommandModel(
            ext.command or (), names, raw_names, str(ext.base_dir), ext.timeout_s
        )
    return ExternalModel(simulator, tuple(columns), observations.output_names)


def simulator_runs_for(
    campaign: Campaign,
    observations: Observations,
    out: Path,
    executor: Executor | None,
    on_progress: Callable[[str, DesignProgress], None] | None = None,
) -> SimulatorRuns:
    """The budgeted, checkpointed door to the campaign's external simulator."""
    ext = campaign.simulator.external
    model = external_model_for(campaign, observations)
    return SimulatorRuns(
        model,
        out,
        executor,
        ext.max_simulator_runs if ext is not None else None,
        ext.batch_size if ext is not None else 1,
        on_progress,
    )


def external_path(campaign: Campaign) -> PathChoice:
    """The posterior path of an external simulator, chosen without spending runs.

    ``posterior.sampler = "auto"`` or ``"surrogate"``: the refined surrogate corrected on
    the simulator within ``max_simulator_runs`` (timing a batch to compare the paths would
    spend runs); ``"direct"``: MCMC on the simulator itself, its runs counted against the
    budget (the campaign stops with :class:`~mpiuq.calibration.errors.RunBudgetError` when
    it runs out).
    """
    spec = campaign.posterior
    ext = campaign.simulator.external
    budget = (
        "no run budget"
        if ext is None or ext.max_simulator_runs is None
        else (f"max_simulator_runs = {ext.max_simulator_runs}")
    )
    if spec.sampler == "direct":
        reason = f"posterior.sampler = 'direct' on the external simulator ({budget})"
        path = "direct"
    else:
        reason = (
            f"external simulator ({budget}): the refined surrogate's posterior corrected on "
            "the simulator (importance weights, moves as the budget allows)"
        )
        path = "surrogate"
    return PathChoice(
        path, spec.sampler, 0, float("nan"), float("nan"), spec.max_direct_seconds, reason
    )


def budgeted_exact(
    runs: SimulatorRuns,
    target: LogPosterior,
    proposal: FloatArray,
    proposal_log_post: FloatArray,
    spec: ExactSpec,
    checks: ChecksSpec,
    rng: np.random.Generator,
    reserve: int = 0,
) -> ExactPosterior:
    """The exact stage on a run budget: importance weights, then moves as affordable.

    :func:`~mpiuq.calibration.sampling.exact.corrected_posterior` twice: once without moves (the
    weights of the proposal draws), then, only if the weights pass the
    ``importance_sampling`` check, with the moves the budget left pays for (the proposal
    draws' runs are reused from :class:`SimulatorRuns`' memory).

    Parameters
    ----------
    runs
        The simulator door (``target``'s predictor); counts the runs.
    target
        The simulator's log-posterior (all parameters; no surrogate error term).
    proposal, proposal_log_post
        Surrogate posterior draws (full vectors, shape (m, dim)) and the surrogate's
        log-posterior at them.
    spec
        ``[exact]``: ``draws`` (the population moved), ``move_steps`` (at most).
    checks
        ``[checks]``: ``max_khat`` and ``min_ess`` of the weights.
    rng
        Resampling and moves.
    reserve
        Runs to leave for later stages (the comparison model).

    Returns
    -------
    ExactPosterior
        ``source = "simulator"`` (weighted, resampled and moved draws) when the weights
        pass the check; otherwise ``"surrogate"``: the proposal draws themselves, with the
        simulator's outputs and pointwise log-likelihood at them, and no moves.
    """
    x = np.atleast_2d(np.asarray(proposal, dtype=np.float64))
    m = x.shape[0]
    cols = list(target.columns)
    lo = np.full(x.shape[1], -np.inf)
    hi = np.full(x.shape[1], np.inf)
    lo[cols], hi[cols] = target.lower, target.upper
    logq = np.asarray(proposal_log_post, dtype=np.float64)
    weighted = corrected_posterior(target.pointwise, lo, hi, x, logq, spec.draws, 0, rng)
    w = weighted.weights
    if w is None or not importance_check("w", w, checks.max_khat, checks.min_ess, "fail").passed:
        ll_point, f = target.pointwise(x)  # remembered by the door: no new runs
        return ExactPosterior(x, f, ll_point, w, None, "surrogate", "surrogate")
    left = runs.remaining()
    # the proposal draws' runs are remembered: the budget pays for the moves only
    budget = None if left is None else m + max(left - reserve, 0)
    return corrected_posterior(
        target.pointwise, lo, hi, x, logq, spec.draws, spec.move_steps, rng, budget
    )


@dataclass(frozen=True, slots=True)
class PatchedSurrogate:
    """The local chaos inside its box, the global chaos elsewhere (a :class:`Predictor`)."""

    local: PolynomialChaos
    fallback: PolynomialChaos

    def predict(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs at the rows of ``x``, shape (n, n_out)."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        out = np.asarray(self.fallback.predict(xs), dtype=np.float64)
        inside = np.asarray(self.local.box.contains(xs), dtype=bool)
        if inside.any():
            out[inside] = self.local.predict(xs[inside])
        return out


def surrogate_target(
    problem: Problem, local: PolynomialChaos, fallback: PolynomialChaos
) -> LogPosterior:
    """The log-posterior of ``problem`` (its prior box) on the surrogates, with the local
    chaos' LOO error: what the mode search maximises when every run is budgeted."""
    patched = replace(
        problem,
        predictor=PatchedSurrogate(local, fallback),
        loo_rmse=np.asarray(local.loo_rmse, dtype=np.float64),
    )
    return patched.log_posterior()


def runs_summary(runs: SimulatorRuns) -> dict[str, object]:
    """The ``simulator_runs`` entry of ``summary.json``: runs per stage and in all."""
    stages = runs.stages()
    return {
        "stages": {s.stage: s.runs for s in stages},
        "total": runs.spent,
        "budget": runs.budget,
        "computed_by_this_run": sum(s.computed for s in stages),
        "from_checkpoints": sum(s.runs - s.computed for s in stages),
        "calls": sum(s.calls for s in stages),
    }
