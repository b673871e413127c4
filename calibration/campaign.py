"""The campaign pipeline: data -> design -> surrogate -> Sobol groups -> MCMC -> estimates.

Each stage is a function of the immutable :class:`~mpiuq.calibration.config.Campaign`
and of earlier stages' frozen results. :func:`run_campaign` chains them and returns a
:class:`~mpiuq.calibration.campaign_result.CampaignResult`; the only file it touches is
the resumable design checkpoint ``design.h5``. It reports progress through a callback,
prints nothing and draws nothing; :mod:`mpiuq.calibration.artefacts` writes the
result files.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.campaign_result import CampaignResult
from mpiuq.calibration.config import Campaign
from mpiuq.calibration.estimates import Estimates, estimate, map_from_prior
from mpiuq.calibration.grouping import Grouping, group_by_sobol, joint_grouping
from mpiuq.calibration.observations import Observations, load_observations
from mpiuq.calibration.posterior import Posterior, Problem, sample_posterior
from mpiuq.calibration.predictive import predictive
from mpiuq.calibration.sampler import SamplerProgress, SamplerSettings
from mpiuq.simulator.benchmarks import BenchmarkModel
from mpiuq.surrogate.box import ParameterBox
from mpiuq.surrogate.design_run import load_design_outputs, run_design
from mpiuq.surrogate.designs import sparse_grid_design
from mpiuq.surrogate.executors import Executor
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


def observations_for(campaign: Campaign) -> Observations:
    """Stage 1: the data of eq. (7), sizes chosen with the campaign's protocol thresholds."""
    base = campaign.simulator.base_params()
    return load_observations(campaign.data, base.small_max_bytes, base.eager_max_bytes)


def model_for(campaign: Campaign, observations: Observations) -> BenchmarkModel:
    """The simulator benchmark as a function of the calibrated parameters."""
    return BenchmarkModel(
        benchmark=campaign.simulator.benchmark,
        sizes_bytes=tuple(int(s) for s in observations.sizes_bytes),
        names=campaign.parameters.names,
        base=campaign.simulator.base_params(),
        observable=campaign.data.observable,
        window=campaign.simulator.window,
    )


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


def problem_for(campaign: Campaign, pce: PolynomialChaos, observations: Observations) -> Problem:
    """The likelihood inputs: data moments, LOO RMSE, prior box and nominal values."""
    p = campaign.parameters
    return Problem(
        predictor=pce,
        names=p.names,
        lower=np.asarray(p.lower, dtype=np.float64),
        upper=np.asarray(p.upper, dtype=np.float64),
        nominal=np.asarray(p.nominal, dtype=np.float64),
        data_mean=observations.mean,
        data_var=observations.var,
        loo_rmse=np.asarray(pce.loo_rmse, dtype=np.float64),
    )


def grouping_for(campaign: Campaign, sobol_total: FloatArray) -> Grouping:
    """Stage 4: sensitivity groups (eq. 9), or one joint group."""
    if campaign.calibration.grouping == "joint":
        return joint_grouping(*sobol_total.shape)
    return group_by_sobol(sobol_total, campaign.calibration.sobol_threshold)


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
        Deterministic for a given campaign seed (and design outputs).
    """
    out = Path(out_dir)
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

    model = model_for(campaign, obs)
    design = sparse_grid_design(parameter_box(campaign), campaign.surrogate.level)
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

    sobol = np.asarray(pce.sobol_total(), dtype=np.float64)
    grouping = grouping_for(campaign, sobol)
    problem = problem_for(campaign, pce, obs)
    emit(CampaignProgress("sensitivity", 1, 1, f"{len(grouping.groups)} groups"))
    lap("sensitivity")

    root = np.random.SeedSequence(campaign.seed)
    seed_grouped, seed_joint, seed_pred, seed_map = root.spawn(4)
    if campaign.calibration.nominal_source == "map":
        x_map, _ = map_from_prior(
            problem, np.random.default_rng(seed_map), starts=campaign.calibration.map_starts
        )
        problem = replace(problem, nominal=x_map)
        emit(CampaignProgress("sensitivity", 1, 1, "nominal values = full-likelihood MAP"))
    settings = sampler_settings(campaign)
    posterior = sample_posterior(
        problem,
        grouping,
        settings,
        seed_grouped,
        on_progress=_sampling_reporter("sampling", emit, settings),
    )
    lap("sampling")

    joint: Posterior | None = None
    joint_est: Estimates | None = None
    if campaign.calibration.compare_joint and campaign.calibration.grouping != "joint":
        joint = sample_posterior(
            problem,
            joint_grouping(*sobol.shape),
            settings,
            seed_joint,
            on_progress=_sampling_reporter("joint", emit, settings),
        )
        lap("joint")

    c = campaign.calibration
    est = estimate(problem, posterior, c.map_starts, c.unconstrained_sd_ratio)
    if joint is not None:
        joint_est = estimate(problem, joint, c.map_starts, c.unconstrained_sd_ratio)
    pred = predictive(problem, posterior, np.random.default_rng(seed_pred), c.predictive_draws)
    emit(CampaignProgress("estimates", 1, 1))
    lap("estimates")

    return CampaignResult(
        campaign,
        obs,
        pce,
        sobol,
        grouping,
        problem,
        posterior,
        est,
        pred,
        joint,
        joint_est,
        y,
        tuple(timings),
    )


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
