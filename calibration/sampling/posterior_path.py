"""Which path computes the posterior: direct MCMC on the simulator, or the surrogate corrected.

The choice is by cost, and the same campaign makes the same choice on every machine and
under any load. The built-in simulator counts the work of one batch (all walkers of one
half of every population, as the direct sampler calls it) at the campaign's own start
draws: programs built, programs run and kernel events
(:class:`~mpiuq.simulator.benchmarks.run.SimulationWork`). The counts are priced at fixed
nominal costs (:data:`NOMINAL_SECONDS_PER_PROGRAM`, :data:`NOMINAL_SECONDS_PER_RUN`,
:data:`NOMINAL_SECONDS_PER_EVENT`: 0.77-1.15 times the measured CPU time of every
benchmark kind's batches on the 2-core reference machine, as
``experiments/perf/perf_simulator_work.py`` prints).
The direct sampler's time is then estimated from the steps it needs to reach its ESS
target, assuming an autocorrelation time of :data:`TAU_STEPS_PER_PARAMETER` steps per
parameter (differential evolution measured 5-9 per parameter on the stock campaign's
10-parameter posterior), two batches per step, the first half of the run being warm-up.
``posterior.sampler = "auto"`` picks the direct path when that estimate is at most
``posterior.max_direct_seconds``; ``"direct"`` and ``"surrogate"`` force a path. A model
that does not count its work is timed instead (and the summary says so).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import PosteriorSpec
from mpiuq.calibration.sampling.population import PopulationSettings

if TYPE_CHECKING:
    from mpiuq.simulator.benchmarks.run import SimulationWork

FloatArray = npt.NDArray[np.float64]

#: Assumed autocorrelation time of the direct sampler, steps per parameter.
TAU_STEPS_PER_PARAMETER = 10.0
#: Nominal cost of building one benchmark program (seconds).
NOMINAL_SECONDS_PER_PROGRAM = 7e-5
#: Nominal cost of one run of a program with one parameter set, beyond its events (seconds).
NOMINAL_SECONDS_PER_RUN = 3e-6
#: Nominal cost of one kernel event (seconds; 20 M events per second).
NOMINAL_SECONDS_PER_EVENT = 5e-8


@dataclass(frozen=True, slots=True)
class PathChoice:
    """The chosen posterior path and the measurement behind it.

    Attributes
    ----------
    path
        ``"direct"`` or ``"surrogate"``.
    setting
        The configured ``posterior.sampler`` (``"auto"``, ``"direct"``, ``"surrogate"``).
    batch_size
        Parameter sets in the timed batch.
    seconds_per_batch
        Measured wall time of that batch.
    estimated_seconds
        Estimated wall time of the direct sampler for the campaign's model.
    limit_seconds
        ``posterior.max_direct_seconds``.
    reason
        One sentence for the summary.
    """

    path: str
    setting: str
    batch_size: int
    seconds_per_batch: float
    estimated_seconds: float
    limit_seconds: float
    reason: str


def population_settings(
    spec: PosteriorSpec, target_ess: float | None = None, target_rhat: float | None = None
) -> PopulationSettings:
    """Direct-sampler settings from the ``[posterior]`` table (the targets override)."""
    return PopulationSettings(
        walkers=spec.walkers,
        populations=spec.populations,
        burn=spec.burn,
        steps=spec.steps,
        max_steps=spec.max_steps,
        target_rhat=spec.target_rhat if target_rhat is None else target_rhat,
        target_ess=spec.target_ess if target_ess is None else target_ess,
    )


def estimated_direct_seconds(spec: PosteriorSpec, dim: int, seconds_per_batch: float) -> float:
    """Estimated wall time of the direct sampler: the steps to the ESS target, doubled (the
    first half of the run is warm-up)."""
    per_step = spec.populations * spec.walkers / (TAU_STEPS_PER_PARAMETER * dim)
    steps = min(spec.max_steps, max(spec.burn, 2 * math.ceil(spec.target_ess / per_step)))
    return 2.0 * steps * seconds_per_batch


def nominal_seconds(work: SimulationWork) -> float:
    """The nominal CPU time of ``work`` (seconds): fixed prices of its counts."""
    return (
        work.programs * NOMINAL_SECONDS_PER_PROGRAM
        + work.runs * NOMINAL_SECONDS_PER_RUN
        + work.events * NOMINAL_SECONDS_PER_EVENT
    )


def time_batch(density: Callable[[FloatArray], FloatArray], x: FloatArray) -> float:
    """Wall time of one call of ``density`` on the rows of ``x`` (seconds)."""
    t0 = time.perf_counter()
    density(x)
    return time.perf_counter() - t0


def choose_path(
    spec: PosteriorSpec,
    dim: int,
    batch_size: int,
    seconds_per_batch: float,
    work: SimulationWork | None = None,
) -> PathChoice:
    """Apply ``posterior.sampler`` to a batch's cost: the nominal price of its counted
    ``work``, or (``work`` None) its measured time ``seconds_per_batch``.

    Examples
    --------
    >>> c = choose_path(PosteriorSpec(), 10, 64, 0.005)
    >>> c.path, round(c.estimated_seconds, 1)
    ('direct', 31.3)
    >>> choose_path(PosteriorSpec(), 10, 64, 64.0).path
    'surrogate'
    """
    if work is not None:
        seconds_per_batch = nominal_seconds(work)
        cost = (
            f"one simulator batch of {batch_size} parameter sets is {work.programs} programs, "
            f"{work.runs} runs and {work.events} kernel events, {seconds_per_batch:.3g} s at "
            "the nominal costs"
        )
    else:
        cost = (
            f"one simulator batch of {batch_size} parameter sets took {seconds_per_batch:.3g} s"
            " (timed: the model does not count its work)"
        )
    est = estimated_direct_seconds(spec, dim, seconds_per_batch)
    limit = spec.max_direct_seconds
    timing = f"{cost}; direct sampling to ESS {spec.target_ess:.0f} estimated at {est:.3g} s"
    if spec.sampler == "auto":
        path = "direct" if est <= limit else "surrogate"
        reason = f"automatic: {timing} ({'<=' if path == 'direct' else '>'} {limit:g} s)"
    else:
        path = spec.sampler
        reason = f"posterior.sampler = {spec.sampler!r} ({timing})"
    return PathChoice(path, spec.sampler, batch_size, seconds_per_batch, est, limit, reason)
