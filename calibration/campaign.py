"""The campaign pipeline: data -> design -> surrogate -> Sobol groups -> grouped MCMC ->
posterior on the simulator (direct MCMC, or local refinement + importance weights + moves,
chosen by the simulator's cost) -> estimates, predictive, comparison, checks.

Each stage is a function of the immutable :class:`~mpiuq.calibration.config.Campaign`
and of earlier stages' frozen results. :func:`run_campaign` chains them and returns a
:class:`~mpiuq.calibration.campaign_result.CampaignResult`; the only file it touches is
the resumable design checkpoint ``design.h5``. It reports progress through a callback,
prints nothing and draws nothing; :mod:`mpiuq.calibration.artefacts` writes the
result files.

The numerics run with BLAS and OpenMP pools limited to one thread (threadpoolctl), so
the least-squares fits, and hence the chains, do not depend on the machine's thread
count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from mpiuq.calibration.bounds import bound_shares, bounds_check
from mpiuq.calibration.budget import check_campaign_budget
from mpiuq.calibration.campaign_result import CampaignResult, VariantResult
from mpiuq.calibration.checks import (
    KHAT_LIMIT,
    WARMUP_P,
    Check,
    coverage_threshold,
    importance_check,
)
from mpiuq.calibration.comparison import compare, psis_loo
from mpiuq.calibration.config import Campaign, SimulatorSpec
from mpiuq.calibration.design_reuse import DesignColumns, output_keys
from mpiuq.calibration.direct import DirectStats, direct_posterior, simulator_density
from mpiuq.calibration.discrepancy import Discrepancy, regime_discrepancy, regime_key
from mpiuq.calibration.estimates import estimate
from mpiuq.calibration.exact import ExactPosterior, exact_posterior, surrogate_only
from mpiuq.calibration.external import (
    budgeted_exact,
    external_path,
    runs_summary,
    simulator_runs_for,
    surrogate_target,
)
from mpiuq.calibration.grouping import Grouping, joint_grouping, sensitivity_grouping
from mpiuq.calibration.joint_model import NamedModel, joint
from mpiuq.calibration.likelihood import ModelPredictor
from mpiuq.calibration.noise import NoiseModel, noise_model
from mpiuq.calibration.observations import Observations, load_observations
from mpiuq.calibration.posterior import Posterior, Problem, sample_posterior
from mpiuq.calibration.posterior_path import (
    PathChoice,
    choose_path,
    population_settings,
    time_batch,
)
from mpiuq.calibration.predictive import predictive
from mpiuq.calibration.proposal import Proposal, evenly, refined_proposal
from mpiuq.calibration.refinement import surrogate_check
from mpiuq.calibration.run_budget import SimulatorRuns
from mpiuq.calibration.run_plan import run_plan
from mpiuq.calibration.sampler import SamplerProgress, SamplerSettings
from mpiuq.calibration.summaries import find_map
from mpiuq.calibration.symmetry import Groups, fold, swap_error, symmetrise
from mpiuq.calibration.units import unit_of
from mpiuq.calibration.validation import split_campaign, with_validation
from mpiuq.simulator.benchmarks import BenchmarkModel
from mpiuq.simulator.parameters import UNITS
from mpiuq.simulator.watch import usable_cores
from mpiuq.surrogate.box import ParameterBox
from mpiuq.surrogate.design_run import DesignProgress, load_design_outputs, run_design
from mpiuq.surrogate.designs import sparse_grid_design
from mpiuq.surrogate.executors import Executor, InProcessExecutor
from mpiuq.surrogate.pce import PolynomialChaos, fit_pce

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CampaignProgress:
    """One progress event: ``done`` of ``total`` units of ``stage`` (``note`` for humans)."""

    stage: str
    done: int
    total: int
    note: str = ""


ProgressFn = Callable[[CampaignProgress], None]


# --- stages -----------------------------------------------------------------------------------


def parameter_box(campaign: Campaign) -> ParameterBox:
    """The prior box of the calibrated parameters (eq. 6)."""
    p = campaign.parameters
    return ParameterBox(p.names, np.asarray(p.lower), np.asarray(p.upper))


def regime_thresholds(campaign: Campaign) -> tuple[int, ...]:
    """Largest message size of every protocol regime but the last, ascending."""
    return campaign.simulator.thresholds()


def observations_for(campaign: Campaign) -> Observations:
    """Stage 1: the data of eq. (7) of every data table, sizes chosen per protocol regime."""
    return load_observations(campaign.datasets, regime_thresholds(campaign))


def model_for(campaign: Campaign, observations: Observations, threads: int = 1) -> NamedModel:
    """The simulator benchmarks of the data tables as one function of the calibrated
    parameters (a :class:`~mpiuq.calibration.joint_model.JointModel` for several tables;
    ``threads`` simulator threads per call)."""
    parts: list[NamedModel] = []
    for k, spec in enumerate(campaign.datasets):
        parts.append(
            BenchmarkModel(
                benchmark=spec.model,
                sizes_bytes=tuple(
                    int(s) for s in observations.sizes_bytes[observations.outputs_of(k)]
                ),
                names=campaign.parameters.names,
                base=campaign.simulator.base_params(),
                observable=spec.observable,
                window=spec.window,
                threads=threads,
            )
        )
    return joint(parts, [spec.label for spec in campaign.datasets])


def noise_for(campaign: Campaign, observations: Observations) -> NoiseModel:
    """The likelihood family of every output and the Student-t degrees of freedom."""
    return noise_model(
        tuple(spec.likelihood for spec in campaign.datasets),
        observations.dataset,
        observations.labels,
        tuple(spec.nu for spec in campaign.datasets),
        observations.log_mean,
        observations.log_var,
    )


def threads_per_call(executor: Executor | None) -> int:
    """Simulator threads of one design chunk: every CPU of this process when the design
    runs in process, one inside worker processes (which already use the CPUs)."""
    if executor is None or isinstance(executor, InProcessExecutor):
        return usable_cores()
    return 1


def fit_surrogate(
    campaign: Campaign, design: FloatArray, outputs: FloatArray, output_names: tuple[str, ...]
) -> PolynomialChaos:
    """Stage 3: total-order Legendre PCE of eq. (8) fitted by least squares."""
    return fit_pce(
        design,
        outputs,
        parameter_box(campaign),
        campaign.surrogate.order,
        output_names=output_names,
    )


def discrepancy_for(campaign: Campaign, observations: Observations) -> Discrepancy:
    """The ``[discrepancy]`` model over the campaign's sizes (regimes from its thresholds;
    with several data sets, one regime per data set and protocol unless ``per_series`` is
    off; an external simulator's regimes are its named size ranges)."""
    # one term per data set and regime (their errors differ), unless per_series is off:
    # then one per regime, shared by the series (a series left out inherits its term)
    several = len(observations.labels) > 1 and campaign.discrepancy.per_series
    protocols = tuple(
        regime_key(observations.labels[d], campaign.simulator.regime_of(int(s)), several)
        for d, s in zip(observations.dataset, observations.sizes_bytes, strict=True)
    )
    d = campaign.discrepancy
    return regime_discrepancy(protocols, d.model, d.bias_rel, d.sd_rel)


def problem_for(
    campaign: Campaign,
    pce: PolynomialChaos,
    observations: Observations,
    discrepancy: Discrepancy | None = None,
) -> Problem:
    """The likelihood inputs: data moments, LOO RMSE, prior box, nominal values, discrepancy,
    likelihood families and noise parameters."""
    p = campaign.parameters
    disc = discrepancy if discrepancy is not None else Discrepancy()
    noise = noise_for(campaign, observations)
    return Problem(
        predictor=pce,
        names=p.names + disc.names + noise.names,
        lower=np.concatenate([np.asarray(p.lower, dtype=np.float64), disc.lower, noise.lower]),
        upper=np.concatenate([np.asarray(p.upper, dtype=np.float64), disc.upper, noise.upper]),
        nominal=np.concatenate(
            [np.asarray(p.nominal, dtype=np.float64), disc.nominal, noise.nominal]
        ),
        data_mean=observations.mean,
        data_var=observations.var,
        loo_rmse=np.asarray(pce.loo_rmse, dtype=np.float64),
        discrepancy=disc,
        noise=noise,
    )


def exact_problem(problem: Problem, model: NamedModel | None) -> Problem:
    """The same likelihood with the simulator as predictor and no surrogate error term."""
    if model is None:
        return problem
    return replace(
        problem, predictor=ModelPredictor(model), loo_rmse=np.zeros_like(problem.loo_rmse)
    )


def grouping_for(
    campaign: Campaign,
    sobol_total: FloatArray,
    discrepancy: Discrepancy | None = None,
    noise: NoiseModel | None = None,
) -> Grouping:
    """Stage 4: sensitivity groups (eq. 9) dropping no informed parameter, or one joint group.

    The outputs of all data sets are grouped together; discrepancy and noise parameters
    join the groups of the outputs they act on.
    """
    disc = discrepancy if discrepancy is not None else Discrepancy()
    nz = noise if noise is not None else NoiseModel()
    n_extra = disc.dim + nz.dim
    if campaign.calibration.grouping == "joint":
        return joint_grouping(sobol_total.shape[0], sobol_total.shape[1] + n_extra)
    extra = np.zeros((sobol_total.shape[0], n_extra), dtype=bool)
    for k in range(disc.dim):
        extra[list(disc.outputs_of(k)), k] = True
    for k in range(nz.dim):
        extra[list(nz.outputs_of(k)), disc.dim + k] = True
    return sensitivity_grouping(sobol_total, campaign.calibration.sobol_threshold, extra)


def sampler_settings(campaign: Campaign) -> SamplerSettings:
    """Ensemble settings from the ``[calibration]`` table."""
    c = campaign.calibration
    return SamplerSettings(
        c.walkers, c.steps, c.burn, c.max_steps, c.ensembles, c.target_rhat, c.target_ess, c.moves
    )


# --- orchestration ----------------------------------------------------------------------------


def design_outputs(
    campaign: Campaign,
    observations: Observations,
    model: NamedModel,
    path: Path,
    executor: Executor | None,
    emit: ProgressFn,
    reuse: DesignColumns | None = None,
) -> tuple[FloatArray, FloatArray, tuple[str, ...]]:
    """Stage 2: the simulator on the global sparse grid (resumable through ``path``).

    With ``reuse``, outputs it holds at the same points are taken from it instead
    (:mod:`~mpiuq.calibration.design_reuse`); otherwise the design runs.

    Returns
    -------
    (x, y, names)
        Design points, outputs and output names.
    """
    design = sparse_grid_design(parameter_box(campaign), campaign.surrogate.level)
    if reuse is not None:
        y = reuse.select(design, output_keys(campaign, observations))
        if y is not None:
            emit(CampaignProgress("design", design.shape[0], design.shape[0], "reused"))
            return design, y, model.output_names
    for p in run_design(
        model,
        design,
        path,
        executor=executor,
        chunk_size=128,
        output_names=model.output_names,
        model_id=model.model_id,
    ):
        emit(CampaignProgress("design", p.n_done, p.n_total))
    x, y, names = load_design_outputs(path)
    return x, y, tuple(names)


def run_campaign(
    campaign: Campaign,
    out_dir: str | Path,
    executor: Executor | None = None,
    on_progress: ProgressFn | None = None,
    design: DesignColumns | None = None,
) -> CampaignResult:
    """Run every stage of a campaign; resumable through ``design.h5``.

    A campaign with a ``[validation]`` table is fitted without its held-out data, which
    are then scored (:mod:`~mpiuq.calibration.validation`); the result is the fitted
    campaign's, with its ``validation``.

    Parameters
    ----------
    campaign
        The validated campaign.
    out_dir
        Folder receiving the design checkpoint ``design.h5``.
    executor
        Where the design runs (default in process); the caller owns it.
    on_progress
        Receives :class:`CampaignProgress` events.
    design
        Simulator outputs of an earlier design to take the global design's outputs from
        (a leave-one-series-out fold), if it holds them.

    Returns
    -------
    CampaignResult
        Deterministic for a given campaign seed (and design outputs), whatever the
        number of BLAS threads.

    Raises
    ------
    BudgetError
        If the campaign's settings need more memory or work than the resource budget
        (:func:`~mpiuq.calibration.budget.check_campaign_budget`), before anything runs.
    """
    check_campaign_budget(campaign)
    with threadpool_limits(limits=1):
        if not campaign.validation.present:
            return _run(campaign, Path(out_dir), executor, on_progress, design)
        split = split_campaign(campaign)
        result = _run(split.fit, Path(out_dir), executor, on_progress, design)
        t0 = time.perf_counter()
        if on_progress is not None:
            on_progress(CampaignProgress("validation", 0, len(split.groups)))
        validated = with_validation(result, split, threads_per_call(executor))
        if on_progress is not None:
            on_progress(CampaignProgress("validation", len(split.groups), len(split.groups)))
        timings = (*validated.timings_s, ("validation", time.perf_counter() - t0))
        return replace(validated, timings_s=timings)


def _run(
    campaign: Campaign,
    out: Path,
    executor: Executor | None,
    on_progress: ProgressFn | None,
    reuse: DesignColumns | None = None,
) -> CampaignResult:
    out.mkdir(parents=True, exist_ok=True)
    emit: ProgressFn = on_progress if on_progress is not None else (lambda _p: None)
    timings: list[tuple[str, float]] = []
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings.append((stage, now - clock))
        clock = now

    obs = observations_for(campaign)
    emit(CampaignProgress("data", 1, 1, f"{obs.sizes_bytes.size} sizes"))
    lap("data")

    model: NamedModel
    if campaign.simulator.external is not None:  # every run budgeted and checkpointed
        design = sparse_grid_design(parameter_box(campaign), campaign.surrogate.level)
        runs = simulator_runs_for(campaign, obs, out, executor, _runs_reporter(emit))
        x, y, names = design, runs.run(design, "design", out / "design.h5"), runs.output_names
        model = runs
    else:
        model = model_for(campaign, obs, threads_per_call(executor))
        x, y, names = design_outputs(
            campaign, obs, model, out / "design.h5", executor, emit, reuse
        )
    lap("design")

    pce = fit_surrogate(campaign, x, y, names)
    emit(CampaignProgress("surrogate", 1, 1, f"{pce.n_terms} terms"))
    lap("surrogate")

    disc = discrepancy_for(campaign, obs)
    sobol = np.asarray(pce.sobol_total(), dtype=np.float64)
    problem = problem_for(campaign, pce, obs, disc)
    grouping = grouping_for(campaign, sobol, disc, problem.noise)
    emit(CampaignProgress("sensitivity", 1, 1, f"{len(grouping.groups)} groups"))
    lap("sensitivity")

    root = np.random.SeedSequence(campaign.seed)
    seed_grouped, seed_map, seed_main, seed_alt = root.spawn(4)
    c = campaign.calibration
    if c.nominal_source == "map":
        x_map, _ = _map_from_prior(problem, np.random.default_rng(seed_map), c.map_starts)
        problem = replace(problem, nominal=x_map)
        emit(CampaignProgress("sensitivity", 1, 1, "nominal values = full-likelihood MAP"))
    settings = sampler_settings(campaign)
    grouped = sample_posterior(
        problem,
        grouping,
        settings,
        seed_grouped,
        on_progress=_sampling_reporter("sampling", emit, settings),
    )
    lap("sampling")

    groups = exchangeable_columns(campaign, problem.names)
    aux = np.random.default_rng(np.random.SeedSequence(campaign.seed, spawn_key=(25,)))
    swap = None
    if groups:
        nm0 = problem.n_model
        swap = swap_error(model, groups, problem.lower[:nm0], problem.upper[:nm0], aux)
    path = (
        external_path(campaign)
        if isinstance(model, SimulatorRuns)
        else _choose_path(campaign, problem, model, grouped, groups)
    )
    emit(CampaignProgress("posterior path", 1, 1, path.path))
    post = campaign.posterior
    direct = _Direct(path, groups, problem.names, post.target_ess, post.target_rhat)
    compared = replace(
        direct, target_ess=post.variant_target_ess, target_rhat=post.variant_target_rhat
    )

    comparing = disc.enabled and campaign.discrepancy.compare
    main = _variant(
        "discrepancy" if disc.enabled else "no discrepancy",
        campaign,
        problem,
        pce,
        grouped,
        model,
        seed_main,
        emit,
        lap,
        direct=direct,
        reserve_runs=run_plan(campaign).compare if comparing else 0,
    )
    alternatives: tuple[VariantResult, ...] = ()
    comparison: tuple[dict[str, object], ...] = ()
    if comparing:
        plain = problem_for(campaign, pce, obs)
        nm = plain.n_model
        plain = replace(
            plain,
            nominal=np.concatenate([problem.nominal[:nm], problem.nominal[nm + disc.dim :]]),
        )
        # the main variant's final local surrogate serves (its box is the wider one)
        alt = _variant(
            "no discrepancy",
            campaign,
            plain,
            main.proposal.surrogate,
            grouped,
            model,
            seed_alt,
            emit,
            lap,
            reuse_surrogate=True,
            direct=compared,
        )
        alternatives = (alt,)
    for spec, seed_v in zip(campaign.variants, root.spawn(len(campaign.variants)), strict=True):
        alternatives += (
            _model_variant(
                campaign,
                spec.name,
                spec.simulator(campaign.simulator),
                obs,
                pce,
                problem,
                grouped,
                seed_v,
                emit,
                lap,
                replace(compared, groups=()),
            ),
        )
    if alternatives:
        comparison = tuple(compare({v.name: v.exact.loglik for v in (main, *alternatives)}))
        lap("comparison")

    rng_est = np.random.default_rng(seed_main.spawn(1)[0])
    # a budgeted simulator's mode is searched on the surrogates (no runs)
    target = (
        surrogate_target(main.problem, main.proposal.surrogate, pce)
        if isinstance(model, SimulatorRuns)
        else main.problem.log_posterior()
    )
    units = tuple(UNITS.get(n, "") for n in main.problem.names)
    est = estimate(
        main.exact.draws,
        main.exact.loglik.sum(axis=1),
        target,
        main.problem.names,
        units,
        main.problem.lower,
        main.problem.upper,
        campaign.exact.map_starts,
        rng_est,
    )
    grouped_flat = grouped.draws.reshape(-1, grouped.draws.shape[-1])
    sd_exact = np.array([m.sd for m in est.marginals])
    shift = np.abs(grouped_flat.mean(axis=0) - main.exact.draws.mean(axis=0)) / np.maximum(
        sd_exact, 1e-300
    )
    emit(CampaignProgress("estimates", 1, 1))
    lap("estimates")
    checks = _checks(campaign, grouped, main, alternatives, shift) + _warmup_checks(campaign, obs)
    checks += _posterior_checks(campaign, main, alternatives, swap)
    return CampaignResult(
        campaign,
        obs,
        pce,
        sobol,
        grouping,
        problem,
        grouped,
        main,
        alternatives,
        est,
        shift,
        comparison,
        checks,
        y,
        tuple(timings),
        path,
        swap,
        simulator_runs=runs_summary(model) if isinstance(model, SimulatorRuns) else None,
    )


@dataclass(frozen=True, slots=True)
class _Direct:
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


def _choose_path(
    campaign: Campaign, problem: Problem, model: NamedModel, grouped: Posterior, groups: Groups
) -> PathChoice:
    """Time one batch of the simulator's log-posterior (one half-step of the direct sampler)
    at grouped posterior draws and choose the path (median of three calls)."""
    spec = campaign.posterior
    flat = grouped.draws.reshape(-1, grouped.draws.shape[-1])
    n = max(1, spec.populations * spec.walkers // 2)
    x = fold(evenly(flat, n), groups)
    density = simulator_density(exact_problem(problem, model).log_posterior(), groups)
    seconds = float(np.median([time_batch(density, x) for _ in range(3)]))
    return choose_path(spec, len(problem.names), x.shape[0], seconds)


def _variant(
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
    direct: _Direct | None = None,
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
        _sampling_reporter(stage, emit, settings)(k, p)

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
    direct: _Direct,
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


def _model_variant(
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
    direct: _Direct | None = None,
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
    return _variant(name, camp, prob, pce, grouped, model, seed, emit, lap, direct=direct)


def _checks(
    campaign: Campaign,
    grouped: Posterior,
    main: VariantResult,
    alternatives: tuple[VariantResult, ...],
    shift: FloatArray,
) -> tuple[Check, ...]:
    t = campaign.checks
    stages = [grouped.converged, main.proposal.posterior.converged]
    stages += [a.proposal.posterior.converged for a in alternatives]
    surrogate_mcmc = (
        "the grouped MCMC met the [calibration] R-hat/ESS targets"
        if main.direct is not None
        else "the grouped MCMC met the [calibration] R-hat/ESS targets and the final refined "
        "MCMC the [refinement] ones"
    )
    out = [
        Check(
            "mcmc_converged",
            all(stages),
            "fail",
            None,
            None,
            f"surrogate MCMC: {surrogate_mcmc}"
            if all(stages)
            else "a surrogate MCMC stage did not meet its R-hat/ESS targets within its "
            "max_steps (grouped: [calibration]; refined: [refinement])",
        )
    ]
    check = main.proposal.check
    worst = check.worst_sd
    by = main.proposal.checked_by
    out.append(
        Check(
            "surrogate_error",
            worst <= t.max_surrogate_error_sd and by == "simulator",
            # with a simulator the posterior is sampled on it (direct) or corrected on it
            # (judged by importance_sampling); without one the surrogate's is the answer
            "warn" if by == "simulator" else "fail",
            worst,
            t.max_surrogate_error_sd,
            f"largest RMS surrogate error at posterior draws: {worst:.3g} data sd"
            + ("" if by == "simulator" else " (LOO only: no simulator to check the posterior)"),
        )
    )
    w = main.exact.weights
    if main.exact.method == "surrogate":
        out.append(
            Check(
                "importance_sampling",
                False,
                "fail",
                None,
                t.max_khat,
                "no simulator: the posterior is the surrogate's, not corrected on the simulator",
            )
        )
    elif w is not None:
        out.append(importance_check("importance_sampling", w, t.max_khat, t.min_ess, "fail"))
    for a in alternatives:
        if a.exact.weights is not None:
            name = f"importance_sampling ({a.name})"
            out.append(importance_check(name, a.exact.weights, t.max_khat, t.min_ess, "warn"))
    n = main.predictive.inside.size
    need = coverage_threshold(n, t.coverage_alpha)
    got = main.predictive.n_inside
    out.append(
        Check(
            "predictive_coverage",
            got >= need,
            "fail",
            float(got),
            float(need),
            f"data inside the 90% simulator-predictive band at {got} of {n} sizes "
            f"(at least {need} expected; in-sample: scored on the sizes the "
            f"{'discrepancy was' if main.problem.discrepancy.enabled else 'parameters were'} "
            "fitted to)"
            + (
                "" if got >= need else ": model-form error; consider [discrepancy] model = 'regime'"
            ),
        )
    )
    worst_shift = float(np.max(shift))
    worst_name = main.problem.names[int(np.argmax(shift))]
    out.append(
        Check(
            "grouped_vs_posterior",
            worst_shift <= t.max_grouped_shift_sd,
            "warn",
            worst_shift,
            t.max_grouped_shift_sd,
            f"grouped (eq. 9) surrogate posterior means within {worst_shift:.2g} posterior sd "
            f"of the final posterior's (largest: {worst_name})",
        )
    )
    kmax = float(np.max(main.loo.pareto_k))
    out.append(
        Check(
            "loo_reliable",
            kmax <= KHAT_LIMIT,
            "warn",
            kmax,
            KHAT_LIMIT,
            f"largest pointwise PSIS-LOO k-hat {kmax:.2f}",
        )
    )
    p = main.problem
    shares = bound_shares(main.exact.draws, p.names, p.lower, p.upper, p.n_model, p.discrepancy.dim)
    out.append(bounds_check(shares, {n: unit_of(n) for n in p.names}))
    return tuple(out)


#: Largest relative output change under a swap of declared exchangeable parameters.
MAX_SWAP_ERROR = 1e-9


def _posterior_checks(
    campaign: Campaign,
    main: VariantResult,
    alternatives: tuple[VariantResult, ...],
    swap: float | None,
) -> tuple[Check, ...]:
    """Must-pass checks of the posterior path: the direct sampler's convergence, or the
    moves' mixing on the surrogate path, and the declared symmetry."""
    out: list[Check] = []
    for v in (main, *alternatives):
        suffix = "" if v is main else f" ({v.name})"
        severity = "fail" if v is main else "warn"
        d = v.direct
        if d is not None:
            ess = float(min(np.min(d.ess_bulk), np.min(d.ess_tail)))
            rhat = float(np.max(d.rhat))
            detail = (
                f"direct MCMC on the simulator, {d.populations} populations x {d.walkers} "
                f"walkers, {d.steps} steps ({d.evaluations} simulator runs, {d.seconds:.1f} s): "
                f"max R-hat {rhat:.4f} (<= {d.target_rhat}), min bulk/tail ESS {ess:.0f} "
                f"(>= {d.target_ess:.0f})"
            )
            if d.nonfinite:
                detail += f"; {d.nonfinite} simulator runs gave a NaN or infinite log-likelihood"
            if not d.converged:
                detail += ": not converged within posterior.max_steps"
            out.append(
                Check(
                    f"posterior_converged{suffix}", d.passed, severity, rhat, d.target_rhat, detail
                )
            )
        elif v.exact.moves is not None and v.exact.moves.steps == 0:
            # no move step (a run budget that paid for none, or exact.move_steps = 0):
            # nothing mixed, nothing to check but the importance weights (their own check)
            mv = v.exact.moves
            detail = (
                "resample-move: no move step (exact.move_steps = 0 or none fitted in "
                "[simulator] max_simulator_runs); the draws are the importance-resampled "
                f"proposal draws ({mv.unique_after} distinct), checked by importance_sampling "
                "only"
            )
            out.append(Check(f"moves_mixed{suffix}", False, "warn", None, None, detail))
        elif v.exact.moves is not None:
            mv = v.exact.moves
            rhat = float(np.nanmax(mv.rhat)) if np.isfinite(mv.rhat).any() else float("inf")
            target = campaign.posterior.target_rhat
            ok = rhat <= target and mv.nonfinite == 0
            detail = (
                f"resample-move: {mv.steps} steps of {mv.populations} sub-populations, "
                f"acceptance {mv.acceptance:.2f}, R-hat across sub-populations {rhat:.4f} "
                f"(<= {target}); {mv.unique_after} distinct draws"
                + (" (run budget reached)" if mv.budget_limited else "")
                + (f"; {mv.nonfinite} NaN or infinite log-likelihoods" if mv.nonfinite else "")
            )
            out.append(Check(f"moves_mixed{suffix}", ok, severity, rhat, target, detail))
    if swap is not None:
        names = "; ".join(", ".join(g) for g in campaign.posterior.exchangeable)
        out.append(
            Check(
                "exchangeable",
                swap <= MAX_SWAP_ERROR,
                "fail",
                swap,
                MAX_SWAP_ERROR,
                f"swapping the declared exchangeable parameters ({names}) at random prior "
                f"points changes the simulator's outputs by at most {swap:.2g} (relative)"
                + ("" if swap <= MAX_SWAP_ERROR else ": the declaration is wrong for this model"),
            )
        )
    return tuple(out)


def _warmup_checks(campaign: Campaign, obs: Observations) -> tuple[Check, ...]:
    """A warning for every data table that drops warm-up iterations it does not have."""
    out = []
    for k, spec in enumerate(campaign.datasets):
        if not spec.drop_warmup:
            continue
        p, excess = obs.warmup_p[k], obs.warmup_excess[k]
        ok = bool(np.isfinite(p) and p < WARMUP_P)
        detail = (
            f"first iterations of the bursts of {spec.burst_length} are {100 * excess:+.1f}% "
            f"(median over sizes; sign test p = {p:.2g})"
            if np.isfinite(p)
            else f"no size has two bursts of {spec.burst_length} to compare"
        )
        out.append(
            Check(
                f"warmup ({spec.label})",
                ok,
                "warn",
                None if not np.isfinite(p) else float(p),
                WARMUP_P,
                detail
                + (
                    ""
                    if ok
                    else ": no warm-up detected (synthetic data?), so drop_warmup = true discards "
                    f"1 in {spec.burst_length} clean replicas; set drop_warmup = false"
                ),
            )
        )
    return tuple(out)


def _map_from_prior(
    problem: Problem, rng: np.random.Generator, starts: int, n_prior: int = 4000
) -> tuple[FloatArray, float]:
    """MAP of the full surrogate log-posterior from the best prior draws (nominal values)."""
    full = problem.log_posterior()
    x = rng.uniform(problem.lower, problem.upper, size=(n_prior, problem.lower.size))
    lp = full(x)
    best = x[np.argsort(lp)[::-1][:starts]]
    return find_map(full, best, problem.lower, problem.upper)


def _sampling_reporter(
    stage: str, emit: ProgressFn, settings: SamplerSettings
) -> Callable[[int, SamplerProgress], None]:
    def report(group: int, p: SamplerProgress) -> None:
        diag = p.samples.diagnostics if p.samples is not None else None
        note = f"group {group}"
        if diag is not None:
            note += (
                f" rhat={np.max(diag.rhat):.3f} ess={np.min(diag.ess_bulk):.0f}"
                f"{' converged' if diag.converged else ''}"
            )
        emit(CampaignProgress(stage, p.steps_done, settings.max_steps, note))

    return report


def _runs_reporter(emit: ProgressFn) -> Callable[[str, DesignProgress], None]:
    def report(stage: str, p: DesignProgress) -> None:
        emit(CampaignProgress(stage, p.n_done, p.n_total, "simulator runs"))

    return report
