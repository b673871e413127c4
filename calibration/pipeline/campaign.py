"""The campaign pipeline: data -> design -> surrogate -> Sobol groups -> grouped MCMC ->
posterior on the simulator (direct MCMC, or local refinement + importance weights + moves,
chosen by the simulator's cost) -> estimates, predictive, comparison, checks.

Each stage is a function of the immutable :class:`~mpiuq.calibration.config.Campaign`
and of earlier stages' frozen results. :func:`run_campaign` chains them and returns a
:class:`~mpiuq.calibration.reporting.campaign_result.CampaignResult`; the only file it touches is
the resumable design checkpoint ``design.h5``. It reports progress through a callback,
prints nothing and draws nothing; :mod:`mpiuq.calibration.reporting.artefacts` writes the
result files.

The numerics run with BLAS and OpenMP pools limited to one thread (threadpoolctl), so
the least-squares fits, and hence the chains, do not depend on the machine's thread
count.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from mpiuq.calibration.checking.campaign_checks import (
    campaign_checks,
    posterior_checks,
    warmup_checks,
)
from mpiuq.calibration.checking.validation import split_campaign, with_validation
from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.design_reuse import DesignColumns
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.model.joint_model import NamedModel
from mpiuq.calibration.pipeline.budget import check_campaign_budget
from mpiuq.calibration.pipeline.campaign_stages import (
    CampaignProgress,
    ProgressFn,
    design_outputs,
    discrepancy_for,
    exact_problem,
    fit_surrogate,
    grouping_for,
    map_from_prior,
    model_for,
    noise_for,
    observations_for,
    parameter_box,
    problem_for,
    regime_thresholds,
    runs_reporter,
    sampler_settings,
    sampling_reporter,
    threads_per_call,
)
from mpiuq.calibration.pipeline.campaign_variants import (
    PathSetting,
    exchangeable_columns,
    fit_variant,
    model_variant,
    path_choice,
)
from mpiuq.calibration.pipeline.external import (
    external_path,
    runs_summary,
    simulator_runs_for,
    surrogate_target,
)
from mpiuq.calibration.pipeline.run_budget import SimulatorRuns
from mpiuq.calibration.pipeline.run_plan import run_plan
from mpiuq.calibration.reporting.artefacts import run_fingerprint
from mpiuq.calibration.reporting.campaign_result import CampaignResult, VariantResult
from mpiuq.calibration.reporting.comparison import compare
from mpiuq.calibration.reporting.estimates import Estimates, estimate
from mpiuq.calibration.sampling.grouping import Grouping
from mpiuq.calibration.sampling.path_record import read_path_choice, write_path_choice
from mpiuq.calibration.sampling.posterior import Posterior, Problem, sample_posterior
from mpiuq.calibration.sampling.posterior_path import PathChoice
from mpiuq.calibration.sampling.symmetry import Groups, swap_error
from mpiuq.simulator.parameters import UNITS
from mpiuq.surrogate.chaos.pce import PolynomialChaos
from mpiuq.surrogate.design.designs import sparse_grid_design
from mpiuq.surrogate.executors import Executor

FloatArray = npt.NDArray[np.float64]

#: The pipeline (:func:`run_campaign`) and its stages (:mod:`.campaign_stages`), the names
#: callers import from here.
__all__ = [
    "CampaignProgress",
    "ProgressFn",
    "design_outputs",
    "discrepancy_for",
    "exact_problem",
    "fit_surrogate",
    "grouping_for",
    "model_for",
    "noise_for",
    "observations_for",
    "parameter_box",
    "problem_for",
    "regime_thresholds",
    "run_campaign",
    "sampler_settings",
    "threads_per_call",
]


def run_campaign(
    campaign: Campaign,
    out_dir: str | Path,
    executor: Executor | None = None,
    on_progress: ProgressFn | None = None,
    design: DesignColumns | None = None,
) -> CampaignResult:
    """Run every stage of a campaign; resumable through ``design.h5``.

    A campaign with a ``[validation]`` table is fitted without its held-out data, which
    are then scored (:mod:`~mpiuq.calibration.checking.validation`); the result is the fitted
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
        (:func:`~mpiuq.calibration.pipeline.budget.check_campaign_budget`), before anything runs.
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


def _design_and_surrogate(
    campaign: Campaign,
    obs: Observations,
    out: Path,
    executor: Executor | None,
    emit: ProgressFn,
    lap: Callable[[str], None],
    reuse: DesignColumns | None,
) -> tuple[NamedModel, FloatArray, PolynomialChaos]:
    """The model, the global design and its outputs (resumable), and the chaos fitted to them."""
    model: NamedModel
    if campaign.simulator.external is not None:  # every run budgeted and checkpointed
        design = sparse_grid_design(parameter_box(campaign), campaign.surrogate.level)
        runs = simulator_runs_for(campaign, obs, out, executor, runs_reporter(emit))
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
    return model, y, pce


def _posterior_path(
    campaign: Campaign,
    problem: Problem,
    model: NamedModel,
    grouped: Posterior,
    groups: Groups,
    out: Path,
) -> PathChoice:
    """The external simulator's path, the path a first attempt of this run recorded, or a
    newly timed choice (recorded for a resumed run)."""
    if isinstance(model, SimulatorRuns):
        return external_path(campaign)
    # a resumed run takes the path its first attempt chose (a timed choice may differ)
    fingerprint = run_fingerprint(campaign)
    recorded = read_path_choice(out, fingerprint)
    path = recorded or path_choice(campaign, problem, model, grouped, groups)
    if recorded is None:
        write_path_choice(out, fingerprint, path)
    return path


def _alternatives(
    campaign: Campaign,
    obs: Observations,
    problem: Problem,
    pce: PolynomialChaos,
    grouped: Posterior,
    model: NamedModel,
    main: VariantResult,
    root: np.random.SeedSequence,
    seed_alt: np.random.SeedSequence,
    emit: ProgressFn,
    lap: Callable[[str], None],
    compared: PathSetting,
) -> tuple[VariantResult, ...]:
    """The variants the main one is compared with: without the discrepancy (its local
    surrogate reused) and each ``[[variants]]`` model."""
    disc = problem.discrepancy
    alternatives: tuple[VariantResult, ...] = ()
    if disc.enabled and campaign.discrepancy.compare:
        plain = problem_for(campaign, pce, obs)
        nm = plain.n_model
        plain = replace(
            plain,
            nominal=np.concatenate([problem.nominal[:nm], problem.nominal[nm + disc.dim :]]),
        )
        # the main variant's final local surrogate serves (its box is the wider one)
        alt = fit_variant(
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
            model_variant(
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
    return alternatives


def _estimates(
    campaign: Campaign,
    model: NamedModel,
    pce: PolynomialChaos,
    grouped: Posterior,
    main: VariantResult,
    seed_main: np.random.SeedSequence,
) -> tuple[Estimates, FloatArray]:
    """Marginals and mode of the main variant's posterior, and the grouped posterior's
    shift of every mean in final posterior sd."""
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
    return est, shift


def _grouped_posterior(
    campaign: Campaign,
    problem: Problem,
    grouping: Grouping,
    seed_grouped: np.random.SeedSequence,
    seed_map: np.random.SeedSequence,
    emit: ProgressFn,
) -> tuple[Problem, Posterior]:
    """The problem with its nominal values (the MAP with ``nominal_source = "map"``) and
    the Sobol-grouped surrogate posterior (eq. 9)."""
    c = campaign.calibration
    if c.nominal_source == "map":
        x_map, _ = map_from_prior(problem, np.random.default_rng(seed_map), c.map_starts)
        problem = replace(problem, nominal=x_map)
        emit(CampaignProgress("sensitivity", 1, 1, "nominal values = full-likelihood MAP"))
    settings = sampler_settings(campaign)
    grouped = sample_posterior(
        problem,
        grouping,
        settings,
        seed_grouped,
        on_progress=sampling_reporter("sampling", emit, settings),
    )
    return problem, grouped


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

    model, y, pce = _design_and_surrogate(campaign, obs, out, executor, emit, lap, reuse)

    disc = discrepancy_for(campaign, obs)
    sobol = np.asarray(pce.sobol_total(), dtype=np.float64)
    problem = problem_for(campaign, pce, obs, disc)
    grouping = grouping_for(campaign, sobol, disc, problem.noise)
    emit(CampaignProgress("sensitivity", 1, 1, f"{len(grouping.groups)} groups"))
    lap("sensitivity")

    root = np.random.SeedSequence(campaign.seed)
    seed_grouped, seed_map, seed_main, seed_alt = root.spawn(4)
    problem, grouped = _grouped_posterior(campaign, problem, grouping, seed_grouped, seed_map, emit)
    lap("sampling")

    groups = exchangeable_columns(campaign, problem.names)
    aux = np.random.default_rng(np.random.SeedSequence(campaign.seed, spawn_key=(25,)))
    swap = None
    if groups:
        nm0 = problem.n_model
        swap = swap_error(model, groups, problem.lower[:nm0], problem.upper[:nm0], aux)
    path = _posterior_path(campaign, problem, model, grouped, groups, out)
    emit(CampaignProgress("posterior path", 1, 1, path.path))
    post = campaign.posterior
    direct = PathSetting(path, groups, problem.names, post.target_ess, post.target_rhat)
    compared = replace(
        direct, target_ess=post.variant_target_ess, target_rhat=post.variant_target_rhat
    )

    comparing = disc.enabled and campaign.discrepancy.compare
    main = fit_variant(
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
    alternatives = _alternatives(
        campaign, obs, problem, pce, grouped, model, main, root, seed_alt, emit, lap, compared
    ) if comparing or campaign.variants else ()
    comparison: tuple[dict[str, object], ...] = ()
    if alternatives:
        comparison = tuple(compare({v.name: v.exact.loglik for v in (main, *alternatives)}))
        lap("comparison")

    est, shift = _estimates(campaign, model, pce, grouped, main, seed_main)
    emit(CampaignProgress("estimates", 1, 1))
    lap("estimates")
    checks = campaign_checks(campaign, grouped, main, alternatives, shift) + warmup_checks(campaign, obs)
    checks += posterior_checks(campaign, main, alternatives, swap)
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


