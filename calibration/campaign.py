"""The campaign pipeline: data -> design -> surrogate -> Sobol groups -> grouped MCMC ->
local refinement -> simulator-exact posterior -> estimates, predictive, comparison, checks.

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

from mpiuq.calibration.budget import check_campaign_budget
from mpiuq.calibration.campaign_result import CampaignResult, VariantResult
from mpiuq.calibration.checks import (
    KHAT_LIMIT,
    UNIFORM_ESS_FRACTION,
    WARMUP_P,
    Check,
    coverage_threshold,
    importance_ok,
)
from mpiuq.calibration.comparison import compare, psis_loo
from mpiuq.calibration.config import Campaign, SimulatorSpec
from mpiuq.calibration.discrepancy import Discrepancy, regime_discrepancy
from mpiuq.calibration.estimates import estimate
from mpiuq.calibration.exact import exact_posterior, surrogate_only
from mpiuq.calibration.external import (
    budgeted_exact,
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
from mpiuq.calibration.predictive import predictive
from mpiuq.calibration.proposal import evenly, refined_proposal
from mpiuq.calibration.run_budget import SimulatorRuns
from mpiuq.calibration.run_plan import run_plan
from mpiuq.calibration.sampler import SamplerProgress, SamplerSettings
from mpiuq.calibration.summaries import find_map
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
    with several data sets, one regime per data set and protocol)."""
    protocols = tuple(campaign.simulator.regime_of(int(s)) for s in observations.sizes_bytes)
    if len(observations.labels) > 1:  # one term per data set and regime: errors differ
        protocols = tuple(
            f"{observations.labels[d]}_{p}"
            for d, p in zip(observations.dataset, protocols, strict=True)
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


def run_campaign(
    campaign: Campaign,
    out_dir: str | Path,
    executor: Executor | None = None,
    on_progress: ProgressFn | None = None,
) -> CampaignResult:
    """Run every stage of a campaign; resumable through ``design.h5``.

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
        return _run(campaign, Path(out_dir), executor, on_progress)


def _run(
    campaign: Campaign,
    out: Path,
    executor: Executor | None,
    on_progress: ProgressFn | None,
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

    design = sparse_grid_design(parameter_box(campaign), campaign.surrogate.level)
    model: NamedModel
    if campaign.simulator.external is not None:
        runs = simulator_runs_for(campaign, obs, out, executor, _runs_reporter(emit))
        x, y, names = design, runs.run(design, "design", out / "design.h5"), runs.output_names
        model = runs
    else:
        model = model_for(campaign, obs, threads_per_call(executor))
        for p in run_design(
            model,
            design,
            out / "design.h5",
            executor=executor,
            chunk_size=128,
            output_names=model.output_names,
            model_id=model.model_id,
        ):
            emit(CampaignProgress("design", p.n_done, p.n_total))
        x, y, names = load_design_outputs(out / "design.h5")
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
            ),
        )
    if alternatives:
        comparison = tuple(compare({v.name: v.exact.loglik for v in (main, *alternatives)}))
        lap("comparison")

    rng_est = np.random.default_rng(seed_main.spawn(1)[0])
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
        runs_summary(model) if isinstance(model, SimulatorRuns) else None,
    )


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
    reserve_runs: int = 0,
) -> VariantResult:
    """Refine, make exact, predict and score one likelihood variant.

    With ``reuse_surrogate``, ``pce`` is an already refined local chaos: no new rounds.
    An external simulator's runs are counted per stage; ``reserve_runs`` of its budget
    are left to later variants.
    """
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

    budgeted = isinstance(model, SimulatorRuns)
    suffix = (
        "" if name in ("discrepancy", "no discrepancy") and not reuse_surrogate else f" ({name})"
    )
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
    emit(CampaignProgress("exact", 1, 1, name))
    # a budgeted simulator's prior predictive comes from the global surrogate (no runs)
    prior_model = pce.predict if model is None or budgeted else model
    pred = predictive(
        exact_p,
        exact,
        prior_model,
        np.random.default_rng(seed_pred),
        campaign.calibration.predictive_draws,
    )
    loo = psis_loo(exact.loglik)
    lap(f"exact ({name})")
    return VariantResult(name, exact_p, proposal, exact, pred, loo)


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
) -> VariantResult:
    """The campaign's likelihood with another simulator (``[[variants]]``): same data, same
    priors and discrepancy form, refined from the main grouped posterior's draws."""
    camp = replace(campaign, simulator=simulator)
    model = model_for(camp, obs)
    disc = discrepancy_for(camp, obs)
    prob = problem_for(camp, pce, obs, disc)
    nm = prob.n_model
    prob = replace(prob, nominal=np.concatenate([problem.nominal[:nm], prob.nominal[nm:]]))
    return _variant(name, camp, prob, pce, grouped, model, seed, emit, lap)


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
    out = [
        Check(
            "mcmc_converged",
            all(stages),
            "fail",
            None,
            None,
            "the grouped MCMC met the [calibration] R-hat/ESS targets and the final refined "
            "MCMC the [refinement] ones"
            if all(stages)
            else "an MCMC stage did not meet its R-hat/ESS targets within its max_steps "
            "(grouped: [calibration]; refined: [refinement])",
        )
    ]
    check = main.proposal.check
    worst = check.worst_sd
    by = main.proposal.checked_by
    out.append(
        Check(
            "surrogate_error",
            worst <= t.max_surrogate_error_sd and by == "simulator",
            # with a simulator the posterior is made exact (judged by importance_sampling);
            # without one the surrogate's posterior is the answer
            "warn" if by == "simulator" else "fail",
            worst,
            t.max_surrogate_error_sd,
            f"largest RMS surrogate error at posterior draws: {worst:.3g} data sd"
            + ("" if by == "simulator" else " (LOO only: no simulator to check the posterior)"),
        )
    )
    w = main.exact.weights
    if w is None:
        out.append(
            Check(
                "importance_sampling",
                False,
                "fail",
                None,
                t.max_khat,
                "no simulator: the posterior is the surrogate's, not made exact",
            )
        )
    else:
        n_prop = w.log_weights.size
        # (almost) uniform weights: the tail fit of k-hat has no tail to fit
        uniform = w.ess >= UNIFORM_ESS_FRACTION * n_prop
        ok = importance_ok(w.khat, w.ess, n_prop, t.max_khat, t.min_ess)
        out.append(
            Check(
                "importance_sampling",
                ok,
                "fail",
                w.khat,
                t.max_khat,
                f"simulator/surrogate importance weights: Pareto k-hat {w.khat:.2f} "
                f"(<= {t.max_khat}{', or uniform weights' if uniform else ''}), ESS "
                f"{w.ess:.0f} of {n_prop} (>= {t.min_ess:.0f})",
            )
        )
    for a in alternatives:
        wa = a.exact.weights
        if wa is None:
            continue
        ok_a = importance_ok(wa.khat, wa.ess, wa.log_weights.size, t.max_khat, t.min_ess)
        out.append(
            Check(
                f"importance_sampling ({a.name})",
                ok_a,
                "warn",
                wa.khat,
                t.max_khat,
                f"variant {a.name!r} (comparison only): k-hat {wa.khat:.2f}, ESS {wa.ess:.0f} of "
                f"{wa.log_weights.size}"
                + ("" if ok_a else ": its draws rest on the moves more than on the weights"),
            )
        )
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
            f"(at least {need} expected)"
            + (
                "" if got >= need else ": model-form error; consider [discrepancy] model = 'regime'"
            ),
        )
    )
    worst_shift = float(np.max(shift))
    worst_name = main.problem.names[int(np.argmax(shift))]
    out.append(
        Check(
            "grouped_vs_exact",
            worst_shift <= t.max_grouped_shift_sd,
            "warn",
            worst_shift,
            t.max_grouped_shift_sd,
            f"grouped (eq. 9) surrogate posterior means within {worst_shift:.2g} posterior sd "
            f"of the exact posterior's (largest: {worst_name})",
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
