"""The posterior of one likelihood or model variant of a campaign: by direct MCMC on the
simulator, or by the refined surrogate corrected with importance weights and moves (the
path :mod:`~mpiuq.calibration.sampling.posterior_path` chose), then its predictive and PSIS-LOO.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import Campaign, SimulatorSpec
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.model.joint_model import NamedModel, model_work
from mpiuq.calibration.pipeline.campaign_stages import (
    CampaignProgress,
    ProgressFn,
    discrepancy_for,
    exact_problem,
    model_for,
    problem_for,
    sampler_settings,
    sampling_reporter,
)
from mpiuq.calibration.pipeline.external import budgeted_exact
from mpiuq.calibration.pipeline.run_budget import SimulatorRuns
from mpiuq.calibration.reporting.campaign_result import VariantResult
from mpiuq.calibration.reporting.comparison import psis_loo
from mpiuq.calibration.reporting.predictive import predictive
from mpiuq.calibration.sampling.direct import DirectStats, direct_posterior, simulator_density
from mpiuq.calibration.sampling.exact import ExactPosterior, exact_posterior, surrogate_only
from mpiuq.calibration.sampling.posterior import Posterior, Problem
from mpiuq.calibration.sampling.posterior_path import (
    PathChoice,
    choose_path,
    population_settings,
    time_batch,
)
from mpiuq.calibration.sampling.proposal import Proposal, evenly, refined_proposal
from mpiuq.calibration.sampling.refinement import surrogate_check
from mpiuq.calibration.sampling.sampler import SamplerProgress
from mpiuq.calibration.sampling.symmetry import Groups, fold, symmetrise
from mpiuq.surrogate.chaos.pce import PolynomialChaos

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PathSetting:
    """How a variant computes its posterior: the path, the exchangeable groups (columns of
    ``names``), the names of the start draws' columns and the ESS and R-hat targets."""

    path: PathChoice
    groups: Groups
    names: tuple[str, ...]
    target_ess: float
    target_rhat: float


def exchangeable_columns(campaign: Campaign, names: tuple[str, ...]) -> Groups:
    """The ``[posterior] exchangeable`` groups as column indices of ``names``."""
    return tuple(tuple(names.index(n) for n in group) for group in campaign.posterior.exchangeable)


def path_choice(
    campaign: Campaign, problem: Problem, model: NamedModel, grouped: Posterior, groups: Groups
) -> PathChoice:
    """Choose the path by the cost of one batch of the simulator's log-posterior (one
    half-step of the direct sampler) at grouped posterior draws: its counted work at
    nominal prices, or for a model that does not count its work, its time (median of
    three calls)."""
    spec = campaign.posterior
    flat = grouped.draws.reshape(-1, grouped.draws.shape[-1])
    n = max(1, spec.populations * spec.walkers // 2)
    x = fold(evenly(flat, n), groups)
    target = exact_problem(problem, model).log_posterior()
    work = model_work(model, target.full(x)[:, : target.n_model])
    if work is not None:
        return choose_path(spec, len(problem.names), x.shape[0], float("nan"), work)
    density = simulator_density(target, groups)
    seconds = float(np.median([time_batch(density, x) for _ in range(3)]))
    return choose_path(spec, len(problem.names), x.shape[0], seconds)


def fit_variant(
    name: str,
    campaign: Campaign,
    problem: Problem,
    pce: PolynomialChaos,
    grouped: Posterior,
    model: NamedModel,
    seed: np.random.SeedSequence,
    emit: ProgressFn,
    lap: Callable[[str], None],
    reuse_surrogate: bool = False,
    direct: PathSetting | None = None,
    reserve_runs: int = 0,
) -> VariantResult:
    """Sample (direct path) or refine and correct (surrogate path), predict and score one
    likelihood variant.

    With ``reuse_surrogate``, ``pce`` is an already refined local chaos: no new rounds.
    An external simulator's runs are counted per stage; ``reserve_runs`` of its budget
    are left to later variants.
    """
    if direct is not None and direct.path.path == "direct":
        return _direct_variant(
            name, campaign, problem, pce, grouped, model, seed, emit, lap, direct
        )
    r, e = campaign.refinement, campaign.exact
    seed_refine, seed_exact, seed_pred = seed.spawn(3)
    settings = replace(
        sampler_settings(campaign),
        max_steps=min(campaign.calibration.max_steps, r.max_steps),
        target_rhat=r.target_rhat,
    )
    stage = f"refine ({name})"
    start = grouped.draws.reshape(-1, grouped.draws.shape[-1])

    def report(k: int, p: SamplerProgress) -> None:
        sampling_reporter(stage, emit, settings)(k, p)

    suffix = "" if not reuse_surrogate else f" ({name})"
    if isinstance(model, SimulatorRuns):
        model.stage = "refinement" + suffix
    proposal = refined_proposal(
        problem,
        pce,
        start,
        model,
        settings,
        seed_refine,
        rounds=0 if reuse_surrogate else r.rounds,
        level=r.level if r.level is not None else campaign.surrogate.level,
        order=r.order if r.order is not None else campaign.surrogate.order,
        pad=r.pad,
        target_error_sd=r.target_error_sd,
        error_draws=r.error_draws,
        on_progress=report,
        box_given=reuse_surrogate,
    )
    lap(f"refinement ({name})")
    exact_p = exact_problem(problem, model)
    target = exact_p.log_posterior()
    rng = np.random.default_rng(seed_exact)
    draws = evenly(proposal.draws, e.proposal_draws)
    if proposal.checked_by == "loo":
        exact = surrogate_only(proposal.problem.log_posterior(), draws, e.draws, rng)
    elif isinstance(model, SimulatorRuns):
        model.stage = "exact" + suffix
        logq = proposal.problem.log_posterior()(draws)
        exact = budgeted_exact(
            model, target, draws, logq, e, campaign.checks, rng, reserve=reserve_runs
        )
    else:
        logq = proposal.problem.log_posterior()(draws)
        exact = exact_posterior(target, draws, logq, e.draws, e.move_steps, rng)
        if direct is not None and direct.groups:  # the swap check verifies the symmetry
            exact = replace(exact, draws=symmetrise(exact.draws, direct.groups, rng))
    emit(CampaignProgress("posterior", 1, 1, name))
    # a budgeted simulator's prior predictive comes from the surrogate (no runs)
    prior = pce.predict if isinstance(model, SimulatorRuns) else None
    return _scored(
        name, campaign, exact_p, proposal, exact, model, seed_pred, lap, prior_model=prior
    )


def _scored(
    name: str,
    campaign: Campaign,
    exact_p: Problem,
    proposal: Proposal,
    exact: ExactPosterior,
    model: NamedModel,
    seed_pred: np.random.SeedSequence,
    lap: Callable[[str], None],
    direct: DirectStats | None = None,
    prior_model: Callable[[FloatArray], FloatArray] | None = None,
) -> VariantResult:
    """Predictive and PSIS-LOO of a variant's final draws; the prior predictive comes from
    ``prior_model`` (default: the simulator)."""
    pred = predictive(
        exact_p,
        exact,
        prior_model if prior_model is not None else model,
        np.random.default_rng(seed_pred),
        campaign.calibration.predictive_draws,
    )
    loo = psis_loo(exact.loglik)
    lap(f"posterior ({name})")
    return VariantResult(name, exact_p, proposal, exact, pred, loo, direct)


def _direct_variant(
    name: str,
    campaign: Campaign,
    problem: Problem,
    pce: PolynomialChaos,
    grouped: Posterior,
    model: NamedModel,
    seed: np.random.SeedSequence,
    emit: ProgressFn,
    lap: Callable[[str], None],
    direct: PathSetting,
) -> VariantResult:
    """The direct path: MCMC on the simulator's posterior from the grouped surrogate draws;
    the surrogate's error at the final draws is reported, not used."""
    seed_run, seed_pred = seed.spawn(2)
    if isinstance(model, SimulatorRuns):
        model.stage = "direct"
    exact_p = exact_problem(problem, model)
    settings = population_settings(campaign.posterior, direct.target_ess, direct.target_rhat)
    flat = grouped.draws.reshape(-1, grouped.draws.shape[-1])
    start = np.tile(problem.nominal, (flat.shape[0], 1))
    for j, n in enumerate(problem.names):
        if n in direct.names:
            start[:, j] = flat[:, direct.names.index(n)]
    stage = f"posterior ({name})"

    def report(run: object) -> None:
        d = run.diagnostics  # type: ignore[attr-defined]
        note = (
            f"rhat={np.max(d.rhat):.3f} ess={min(np.min(d.ess_bulk), np.min(d.ess_tail)):.0f}"
            f"{' converged' if d.converged else ''}"
        )
        emit(CampaignProgress(stage, run.steps_done, settings.max_steps, note))  # type: ignore[attr-defined]

    exact, stats = direct_posterior(
        exact_p.log_posterior(),
        start,
        settings,
        direct.groups,
        # as many final draws as effective ones: fewer would throw precision away
        max(campaign.exact.draws, int(np.ceil(direct.target_ess))),
        np.random.default_rng(seed_run),
        exact_p.names,
        report,
    )
    nm = problem.n_model
    check = surrogate_check(
        pce.predict(exact.draws[:, :nm]), exact.outputs, np.sqrt(problem.data_var)
    )
    proposal = Proposal(problem, pce, grouped, check, (), "simulator")
    return _scored(name, campaign, exact_p, proposal, exact, model, seed_pred, lap, stats)


def model_variant(
    campaign: Campaign,
    name: str,
    simulator: SimulatorSpec,
    obs: Observations,
    pce: PolynomialChaos,
    problem: Problem,
    grouped: Posterior,
    seed: np.random.SeedSequence,
    emit: ProgressFn,
    lap: Callable[[str], None],
    direct: PathSetting | None = None,
) -> VariantResult:
    """The campaign's likelihood with another simulator (``[[variants]]``): same data, same
    priors and discrepancy form, started from the main grouped posterior's draws (no
    exchangeable folding: the swap check covers the campaign's own model only)."""
    camp = replace(campaign, simulator=simulator)
    model = model_for(camp, obs)
    disc = discrepancy_for(camp, obs)
    prob = problem_for(camp, pce, obs, disc)
    nm = prob.n_model
    prob = replace(prob, nominal=np.concatenate([problem.nominal[:nm], prob.nominal[nm:]]))
    return fit_variant(name, camp, prob, pce, grouped, model, seed, emit, lap, direct=direct)
