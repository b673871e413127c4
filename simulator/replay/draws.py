"""Replay of one trace under many parameter sets (e.g. posterior draws).

:func:`replay_draws` lowers the trace **once** and runs the lowered program under
every parameter set on the kernel's batch path (:func:`mpiuq.simulator.kernel.run_sets`:
one state, reset between the sets), per network model. The reductions' combine
steps, whose cost depends on the memory bandwidth of each set, are re-rated by the
kernel from the rows the lowering recorded, so every set gets exactly the program a
separate lowering under its parameters would give.

The sets are cut into chunks that run through an executor
(:mod:`mpiuq.surrogate.executors`: in process, local processes, Dask); every result
is put back at its set's index, so the outcome does not depend on the executor, the
chunking or the completion order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import kernel
from mpiuq.simulator.engine import params_vector, program_arrays
from mpiuq.simulator.errors import SettingError, SimulatorError
from mpiuq.simulator.lowering.lower import Lowered, lower_trace
from mpiuq.simulator.networks import network_arrays
from mpiuq.simulator.networks.state import NetworkArrays
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.results import ReplayFacts
from mpiuq.simulator.replay.run import ReplaySetup, network_and_nodes, replay_facts
from mpiuq.simulator.trace.ir import Trace

FloatArray = npt.NDArray[np.float64]


class DrawDeadlockError(SimulatorError, RuntimeError):
    """Some parameter set leaves ranks waiting forever (names the model and the set)."""


class MapExecutor(Protocol):
    """What :func:`replay_draws` needs of an executor (see :mod:`mpiuq.surrogate.executors`)."""

    def map_unordered(self, fn: Any, items: Sequence[Any]) -> Any:
        """Yield ``(index, fn(items[index]))`` pairs."""
        ...


@dataclass(frozen=True)
class ChunkTask:
    """One chunk of parameter sets on one network (picklable, for worker processes)."""

    program: kernel.ProgramArrays
    net: NetworkArrays
    params: FloatArray
    reduce_rows: npt.NDArray[np.int64]
    reduce_bytes: FloatArray
    reduce_rate_Bps: float


@dataclass(frozen=True)
class ChunkResult:
    """Kernel outputs of one :class:`ChunkTask` (see :func:`mpiuq.simulator.kernel.run_sets`)."""

    acc: FloatArray
    acc_call: FloatArray
    end: FloatArray
    unfinished: npt.NDArray[np.int64]
    events: npt.NDArray[np.int64]


def run_chunk(task: ChunkTask) -> ChunkResult:
    """Run the parameter sets of ``task`` (the function the executor maps)."""
    program = task.program
    if task.reduce_rows.size:  # run_sets rewrites the combine steps: work on a copy
        program = program._replace(seconds=program.seconds.copy())
    _marks, acc, acc_call, end, unfinished, events = kernel.run_sets(  # type: ignore[call-arg]
        program,
        task.params,
        task.net,
        1.0,
        task.reduce_rows,
        task.reduce_bytes,
        task.reduce_rate_Bps,
    )
    return ChunkResult(acc, acc_call, end, unfinished, events)


@dataclass(frozen=True)
class ModelDraws:
    """Outcome of every parameter set under one network model.

    Attributes
    ----------
    simulated_time_s
        ``(n_sets,)`` time at which the last rank finished, seconds.
    parts_s
        ``(n_sets, 4)`` compute, network, MPI stack and sync seconds summed over ranks.
    per_call_s
        ``(n_sets, n_calls, 4)`` the same split per MPI call kind (``call_names``).
    events
        ``(n_sets,)`` discrete events processed.
    wall_s
        Wall-clock seconds of all models' runs divided by the number of models (the
        models' chunks run together through the executor; lowering excluded).
    """

    model: str
    simulated_time_s: FloatArray
    parts_s: FloatArray
    per_call_s: FloatArray
    call_names: tuple[str, ...]
    events: npt.NDArray[np.int64]
    wall_s: float

    @property
    def n_sets(self) -> int:
        """Number of parameter sets."""
        return int(self.simulated_time_s.shape[0])


@dataclass(frozen=True, kw_only=True)
class DrawsReplay(ReplayFacts):
    """Replays of one trace under many parameter sets and several network models."""

    params: FloatArray
    models: tuple[ModelDraws, ...]

    def model(self, name: str) -> ModelDraws:
        """The runs under network model ``name``."""
        for m in self.models:
            if m.model == name:
                return m
        raise KeyError(f"model {name!r} was not replayed: have {[m.model for m in self.models]}")


def replay_draws(
    trace: Trace,
    draws: Sequence[SimParams],
    setup: ReplaySetup | None = None,
    *,
    executor: MapExecutor | None = None,
    chunks: int = 1,
    lowered: Lowered | None = None,
) -> DrawsReplay:
    """Replay ``trace`` under every parameter set of ``draws`` and every model of ``setup``.

    Parameters
    ----------
    trace
        A complete trace (every rank's stream).
    draws
        Parameter sets (e.g. posterior draws), at least one.
    setup
        Models, compute scale, reduction rate, collective algorithms, topology.
    executor
        Where the chunks run (default: in this process, one after the other).
    chunks
        Chunks the sets are cut into per model (e.g. the executor's worker count);
        the results do not depend on it.
    lowered
        The trace already lowered with ``setup.lowering_options(draws[0])``.

    Raises
    ------
    SettingError
        If ``draws`` is empty or ``chunks`` < 1.
    DrawDeadlockError
        If some set leaves ranks waiting forever (replay that set alone for details).
    """
    setup = ReplaySetup() if setup is None else setup
    if len(draws) == 0:
        raise SettingError("draws is empty: expected at least one parameter set")
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise SettingError(f"chunks={chunks!r} is invalid: expected an integer >= 1")
    t0 = time.perf_counter()
    low = lower_trace(trace, setup.lowering_options(draws[0])) if lowered is None else lowered
    lowering_s = time.perf_counter() - t0
    matrix = np.stack([params_vector(p) for p in draws])
    prog = program_arrays(low.program)
    factory, nodes = network_and_nodes(setup, trace.n_ranks)
    rate = -1.0 if setup.reduce_rate_Bps is None else float(setup.reduce_rate_Bps)
    size = math.ceil(len(draws) / min(chunks, len(draws)))
    bounds = [(a, min(a + size, len(draws))) for a in range(0, len(draws), size)]
    tasks: list[ChunkTask] = []
    for name in setup.models:
        net = network_arrays(factory(name), trace.n_ranks, nodes)
        for a, b in bounds:
            tasks.append(ChunkTask(prog, net, matrix[a:b], low.reduce_rows, low.reduce_bytes, rate))
    t1 = time.perf_counter()
    if executor is None:
        results = {i: run_chunk(t) for i, t in enumerate(tasks)}
    else:
        results = dict(executor.map_unordered(run_chunk, tasks))
    wall = (time.perf_counter() - t1) / len(setup.models)
    models = []
    for m, name in enumerate(setup.models):
        parts = [results[m * len(bounds) + c] for c in range(len(bounds))]
        models.append(_model_draws(name, parts, low.program.call_names, wall))
    return DrawsReplay(
        **replay_facts(trace, low, lowering_s), setup=setup, params=matrix, models=tuple(models)
    )


def _model_draws(
    name: str, parts: list[ChunkResult], call_names: tuple[str, ...], wall: float
) -> ModelDraws:
    unfinished = np.concatenate([p.unfinished for p in parts])
    stuck = np.flatnonzero(unfinished)
    if stuck.size:
        k = int(stuck[0])
        raise DrawDeadlockError(
            f"replay with model {name!r} deadlocked under {stuck.size} parameter set(s), the "
            f"first set {k} ({int(unfinished[k])} rank(s) blocked forever): replay that set "
            "alone (mpiuq replay --estimate ... --param NAME=VALUE) to see where"
        )
    end = np.concatenate([p.end for p in parts])
    acc = np.concatenate([p.acc for p in parts])
    return ModelDraws(
        model=name,
        simulated_time_s=end.max(axis=1) if end.shape[1] else np.zeros(end.shape[0]),
        parts_s=acc.sum(axis=1),
        per_call_s=np.concatenate([p.acc_call for p in parts])[:, : max(len(call_names), 1)],
        call_names=call_names,
        events=np.concatenate([p.events for p in parts]),
        wall_s=wall,
    )
