"""The stages of a campaign as functions of the validated campaign: data, model, design,
surrogate, discrepancy, problem, Sobol grouping and sampler settings, with the progress
events they report (:func:`~mpiuq.calibration.pipeline.campaign.run_campaign` chains them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.design_reuse import DesignColumns, output_keys
from mpiuq.calibration.data.observations import Observations, load_observations
from mpiuq.calibration.model.discrepancy import Discrepancy, regime_discrepancy, regime_key
from mpiuq.calibration.model.joint_model import NamedModel, joint
from mpiuq.calibration.model.likelihood import ModelPredictor
from mpiuq.calibration.model.noise import NoiseModel, noise_model
from mpiuq.calibration.reporting.summaries import find_map
from mpiuq.calibration.sampling.grouping import Grouping, joint_grouping, sensitivity_grouping
from mpiuq.calibration.sampling.posterior import Problem
from mpiuq.calibration.sampling.sampler import SamplerProgress, SamplerSettings
from mpiuq.simulator.benchmarks.run import BenchmarkModel
from mpiuq.simulator.runtime.watch import simulator_threads
from mpiuq.surrogate.chaos.pce import PolynomialChaos, fit_pce
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.design.design_run import DesignProgress, load_design_outputs, run_design
from mpiuq.surrogate.design.designs import sparse_grid_design
from mpiuq.surrogate.executors import Executor, InProcessExecutor

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CampaignProgress:
    """One progress event: ``done`` of ``total`` units of ``stage`` (``note`` for humans)."""

    stage: str
    done: int
    total: int
    note: str = ""


ProgressFn = Callable[[CampaignProgress], None]




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
    parameters (a :class:`~mpiuq.calibration.model.joint_model.JointModel` for several tables;
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
    """Simulator threads of one design chunk: every CPU of this process (or
    ``$MPIUQ_SIMULATOR_THREADS``) when the design runs in process, one inside worker
    processes (which already use the CPUs)."""
    if executor is None or isinstance(executor, InProcessExecutor):
        return simulator_threads()
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
    (:mod:`~mpiuq.calibration.data.design_reuse`); otherwise the design runs.

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



def map_from_prior(
    problem: Problem, rng: np.random.Generator, starts: int, n_prior: int = 4000
) -> tuple[FloatArray, float]:
    """MAP of the full surrogate log-posterior from the best prior draws (nominal values)."""
    full = problem.log_posterior()
    x = rng.uniform(problem.lower, problem.upper, size=(n_prior, problem.lower.size))
    lp = full(x)
    best = x[np.argsort(lp)[::-1][:starts]]
    return find_map(full, best, problem.lower, problem.upper)


def sampling_reporter(
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


def runs_reporter(emit: ProgressFn) -> Callable[[str, DesignProgress], None]:
    def report(stage: str, p: DesignProgress) -> None:
        emit(CampaignProgress(stage, p.n_done, p.n_total, "simulator runs"))

    return report

