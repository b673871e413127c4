"""Trace replay: where does an application's time go under each network model?

:func:`replay` lowers a trace once (:mod:`mpiuq.simulator.lowering.lower`) and runs the
program on the engine under every requested network model, returning per model
the decomposition of every rank's time into compute, network, MPI stack and
synchronisation (section 4.2 and Fig. 8 of the reference paper), summed over
ranks, per rank and per MPI call kind.

Network models are chosen by name (``analytic``, ``compute-only``, ``packet``,
``flow``); a topology spec (``"dragonfly:groups=9,switches=8"`` or just
``"dragonfly"``, sized for the trace) and a rank placement give the nodes of the
ranks; without one, rank ``i`` runs on node ``i`` (one rank per node, as in the
paper) and the analytic and flow models send every message over ``hops`` links. A
SimGrid platform file (one ``<cluster>``) and hostfile give the flow model its
network and the ranks their hosts instead (:mod:`mpiuq.simulator.platform`). Any
other model can be plugged in through ``network_factory``.

Examples
--------
>>> from mpiuq.simulator.trace.builder import TraceBuilder
>>> from mpiuq.simulator.trace.ir import OpKind
>>> b = TraceBuilder("example", "<ring>", 2)
>>> for r in (0, 1):
...     _ = b.add(r, OpKind.ALLREDUCE, b.call_id("MPI_Allreduce"), bytes_send=8, bytes_recv=8)
>>> res = replay(b.build(), setup=ReplaySetup(models=("compute-only",)))
>>> res.models[0].decomposition.network_s
0.0
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import NETWORK_COST_ORDER
from mpiuq.simulator.engine import CATEGORIES, Decomposition, RunResult, simulate
from mpiuq.simulator.errors import DeadlockError, SettingError, SimulatorError
from mpiuq.simulator.lowering.lower import Lowered, lower_trace
from mpiuq.simulator.networks import PacketNetwork
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.source import ProgramSource
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.replay.link_report import LinkUsage, hottest_links
from mpiuq.simulator.replay.setup import (
    FLOW_SHARINGS,
    NetworkFactory,
    ReplaySetup,
    network_and_nodes,
)
from mpiuq.simulator.replay.windowed import DEFAULT_WINDOW_ROWS, simulate_windowed
from mpiuq.simulator.runtime.watch import one_at_a_time, run_concurrently
from mpiuq.simulator.trace.ir import Trace

__all__ = [
    "FLOW_SHARINGS",
    "ModelReplay",
    "NetworkFactory",
    "ReplayDeadlockError",
    "ReplayProgress",
    "ReplayResult",
    "ReplaySetup",
    "TraceOrigin",
    "lower_for_replay",
    "network_and_nodes",
    "replay",
    "replay_lowered",
    "trace_and_settings",
]

FloatArray = npt.NDArray[np.float64]

#: How many deadlocked ranks / unmatched messages a result or error lists in full.
MAX_LISTED = 20


class ReplayDeadlockError(SimulatorError, RuntimeError):
    """A replay cannot finish: some ranks wait forever.

    Attributes
    ----------
    model : str
        Network model of the failed run.
    blocked : list of tuple
        ``(rank, trace operation index within the rank, MPI call, engine description)``.
    """

    def __init__(self, model: str, blocked: list[tuple[int, int, str, str]], time_s: float) -> None:
        self.model = model
        self.blocked = blocked
        self.time_s = time_s
        shown = "; ".join(
            f"rank {r} at trace operation {i} ({call}): {d}" for r, i, call, d in blocked[:8]
        )
        more = f" (and {len(blocked) - 8} more)" if len(blocked) > 8 else ""
        super().__init__(
            f"replay with model {model!r} deadlocked at simulated time {time_s:.9g} s: "
            f"{len(blocked)} rank(s) blocked forever: {shown}{more}"
        )


@dataclass(frozen=True)
class ModelReplay:
    """Outcome of one replay under one network model.

    Attributes
    ----------
    per_rank_s
        ``(ranks, 4)`` seconds of compute, network, MPI stack and sync per rank.
    per_call
        Decomposition summed over ranks per MPI call kind (``compute`` = between calls).
    wall_s
        Wall-clock seconds the engine took (lowering excluded; see ``ReplayResult``).
    unmatched
        ``(rank, trace operation index, MPI call)`` of the first messages never received.
    """

    model: str
    ranks: int
    events: int
    simulated_time_s: float
    end_s: FloatArray
    per_rank_s: FloatArray
    per_call: dict[str, Decomposition]
    wall_s: float
    n_unmatched: int = 0
    unmatched: tuple[tuple[int, int, str], ...] = ()
    hot_links: tuple[LinkUsage, ...] = ()

    @property
    def decomposition(self) -> Decomposition:
        """The four parts summed over ranks, seconds."""
        return Decomposition.from_row(self.per_rank_s.sum(axis=0))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``replay.json`` schema of ``mpiuq replay``)."""
        keys = [f"{c}_s" for c in CATEGORIES]
        return {
            "model": self.model,
            "ranks": self.ranks,
            "events": self.events,
            "simulated_time_s": self.simulated_time_s,
            "decomposition": self.decomposition.as_dict(),
            "per_rank": [dict(zip(keys, map(float, row), strict=True)) for row in self.per_rank_s],
            "per_call": {name: d.as_dict() for name, d in self.per_call.items() if d.total_s > 0.0},
            "wall_s": self.wall_s,
            "unmatched_messages": self.n_unmatched,
            "unmatched_first": [
                {"rank": r, "trace_op": i, "call": c} for r, i, c in self.unmatched
            ],
            "hottest_links": [asdict(u) for u in self.hot_links],
        }


@dataclass(frozen=True)
class ReplayResult:
    """Replays of one trace under several network models."""

    source: str
    format: str
    n_ranks: int
    n_trace_ops: int
    n_program_ops: int
    lowering_s: float
    params: SimParams
    setup: ReplaySetup
    models: tuple[ModelReplay, ...]
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, list[str]] = field(default_factory=dict)
    nonblocking_collectives: int = 0
    unsupported: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def congestion_s(self) -> float | None:
        """Network seconds (summed over ranks) due to congestion: packet minus analytic.

        ``None`` unless both models were replayed.
        """
        names = {m.model for m in self.models}
        if not {"packet", "analytic"} <= names:
            return None
        return (
            self.model("packet").decomposition.network_s
            - self.model("analytic").decomposition.network_s
        )

    def model(self, name: str) -> ModelReplay:
        """The replay under network model ``name``."""
        for m in self.models:
            if m.model == name:
                return m
        raise KeyError(f"model {name!r} was not replayed: have {[m.model for m in self.models]}")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: trace facts, settings, and one entry per model."""
        return {
            **trace_and_settings(self, self.setup.lowering_options(self.params).reduce_rate_Bps),
            "params": self.params.as_json_dict(),
            "lowering_s": self.lowering_s,
            "congestion_network_s": self.congestion_s,
            "models": {m.model: m.as_dict() for m in self.models},
        }


def trace_and_settings(result: Any, reduce_rate_Bps: float | None) -> dict[str, Any]:
    """The ``trace`` and ``settings`` entries of a replay's JSON (one replay or many draws)."""
    setup: ReplaySetup = result.setup
    return {
        "trace": {
            "source": result.source,
            "format": result.format,
            "ranks": result.n_ranks,
            "trace_ops": result.n_trace_ops,
            "program_ops": result.n_program_ops,
            "collectives": dict(result.collectives),
            "algorithms": dict(result.algorithms),
            "nonblocking_collectives_run_at_call": result.nonblocking_collectives,
            "not_replayed": dict(result.unsupported),
            "notes": list(result.notes),
        },
        "settings": {
            "compute_scale": setup.compute_scale,
            # free reductions (inf, --like simgrid) as null: JSON has no infinity
            "reduce_rate_Bps": None if reduce_rate_Bps == math.inf else reduce_rate_Bps,
            "free_reductions": reduce_rate_Bps == math.inf,
            "hops": setup.hops,
            "topology": setup.topology,
            "placement": setup.placement,
            "sharing": setup.sharing,
            "free_endpoints": setup.free_endpoints,
            "platform": setup.platform,
            "hostfile": setup.hostfile,
            "algorithm_overrides": dict(setup.algorithms),
        },
    }


@dataclass(frozen=True)
class TraceOrigin:
    """What a replay needs of its trace once lowered: facts for the result, and the
    rank offsets and MPI calls that name a trace operation in a deadlock or an unmatched
    message (2 bytes per operation instead of the trace's 72)."""

    source: str
    format: str
    n_ranks: int
    n_ops: int
    rank_ptr: npt.NDArray[np.int64]
    call: npt.NDArray[np.int16]
    call_names: tuple[str, ...]
    unsupported: dict[str, int]
    notes: tuple[str, ...]

    @classmethod
    def of(cls, trace: Trace) -> TraceOrigin:
        """The origin of ``trace`` (shares its ``rank_ptr`` and ``call`` columns)."""
        return cls(
            source=trace.source,
            format=trace.format,
            n_ranks=trace.n_ranks,
            n_ops=trace.n_ops,
            rank_ptr=trace.rank_ptr,
            call=trace.call,
            call_names=tuple(trace.call_names),
            unsupported=dict(trace.unsupported),
            notes=tuple(trace.notes),
        )


@dataclass(frozen=True, slots=True)
class ReplayProgress:
    """Where a replay is: a stage (``"lowering"`` or a model's name) and how far it got.

    ``done`` is the fraction of the stage done (0 when it starts, 1 when it ends);
    ``elapsed_s`` the wall time since the stage started. At the end of a stage,
    ``operations`` is the lowered program's size and, for a model, ``events`` the
    events it simulated.
    """

    stage: str
    done: float
    elapsed_s: float
    operations: int = 0
    events: int = 0


def _ignore(_progress: ReplayProgress) -> None:
    pass


def _model_watcher(
    name: str, start: float, report: Callable[[ReplayProgress], None]
) -> Callable[[float], None]:
    """The engine's progress callback of model ``name``, as replay progress (not the end)."""

    def watch(done: float) -> None:
        if done < 1.0:
            report(ReplayProgress(name, done, time.perf_counter() - start))

    return watch


def replay(
    trace: Trace,
    params: SimParams | None = None,
    setup: ReplaySetup | None = None,
    *,
    network_factory: NetworkFactory | None = None,
    node_of_rank: npt.NDArray[np.int64] | None = None,
    lowered: Lowered | None = None,
    on_progress: Callable[[ReplayProgress], None] | None = None,
    threads: int = 1,
) -> ReplayResult:
    """Replay ``trace`` under every network model of ``setup``.

    Parameters
    ----------
    trace
        A complete trace (every rank's stream).
    params
        Endpoint and network parameters (default: Table 1 values), e.g. a campaign's MAP.
    setup
        Models, compute scale, reduction rate, collective algorithms, topology.
    network_factory
        ``name -> NetworkModel``; overrides the factory built from ``setup``
        (how other network models plug in).
    node_of_rank
        Node of every rank; overrides the placement of ``setup``.
    lowered
        The trace already lowered with ``setup.lowering_options(params)`` (skips lowering).
    on_progress
        Receives a :class:`ReplayProgress` when lowering starts and ends, and for each
        model when its run starts, about twice a second while it runs and when it
        ends (with its events); the results do not depend on it.
    threads
        How many models may run at once, in threads of this process (default 1: one
        after the other; see :func:`replay_lowered`); the results do not depend on it.

    Returns
    -------
    ReplayResult
        Per model: events, simulated time, decomposition (total, per rank, per call).

    Raises
    ------
    UnreplayableTraceError
        If the trace lacks ranks or peers (partial DUMPI traces).
    ReplayDeadlockError
        If some rank waits forever, naming the ranks and trace operations.
    """
    params = SimParams() if params is None else params
    setup = ReplaySetup() if setup is None else setup
    if lowered is None:
        lowered, lowering_s = lower_for_replay(trace, params, setup, on_progress)
    else:
        lowering_s = 0.0
    return replay_lowered(
        TraceOrigin.of(trace),
        lowered,
        params,
        setup,
        network_factory=network_factory,
        node_of_rank=node_of_rank,
        on_progress=on_progress,
        lowering_s=lowering_s,
        threads=threads,
    )


def lower_for_replay(
    trace: Trace,
    params: SimParams,
    setup: ReplaySetup,
    on_progress: Callable[[ReplayProgress], None] | None = None,
) -> tuple[Lowered, float]:
    """Lower ``trace`` for a replay with ``params`` and ``setup``; also the wall seconds taken.

    With :class:`TraceOrigin` and :func:`replay_lowered`, a caller that owns the trace
    can let it go before the simulation (:func:`replay` keeps it to the end).
    """
    report = on_progress if on_progress is not None else _ignore
    t0 = time.perf_counter()
    report(ReplayProgress("lowering", 0.0, 0.0))
    low = lower_trace(trace, setup.lowering_options(params))
    lowering_s = time.perf_counter() - t0
    report(ReplayProgress("lowering", 1.0, lowering_s, operations=low.program.n_ops))
    return low, lowering_s


class StreamedLowering(Protocol):
    """A lowered trace whose program is read in windows (e.g. from a program file): what
    :func:`replay_lowered` reads of it besides :class:`Lowered`'s facts."""

    program: ProgramSource
    collectives: dict[str, int]
    algorithms: dict[str, list[str]]
    nonblocking_collectives: int

    def trace_op(self, row: int) -> int:
        """The trace operation of program row ``row``."""


def replay_lowered(
    origin: TraceOrigin,
    low: Lowered | StreamedLowering,
    params: SimParams,
    setup: ReplaySetup,
    *,
    network_factory: NetworkFactory | None = None,
    node_of_rank: npt.NDArray[np.int64] | None = None,
    on_progress: Callable[[ReplayProgress], None] | None = None,
    lowering_s: float = 0.0,
    threads: int = 1,
    window_rows: int = DEFAULT_WINDOW_ROWS,
) -> ReplayResult:
    """:func:`replay` of a trace already lowered, knowing only its :class:`TraceOrigin`.

    The arguments are those of :func:`replay`; ``lowering_s`` is reported in the result.
    A ``low`` whose program is not in memory (a :class:`StreamedLowering`) is simulated
    through windows of ``window_rows`` rows per rank (:func:`simulate_windowed`), with
    the same results.
    ``threads`` > 1 runs up to that many models at once in threads of this process (the
    compiled kernel releases the GIL; each model has its own state and only reads the
    program), the costliest models first (``packet``, then ``analytic``); the results,
    and their order, are those of running them one after the other (the default), and
    ``on_progress`` is then called from those threads, one call at a time. Each model
    running at once holds its own kernel state (about 8 B per program request and the
    live messages).
    """
    if threads < 1:
        raise SettingError(f"threads={threads!r} is invalid: expected at least 1")
    report = on_progress if on_progress is not None else _ignore
    factory, nodes = network_and_nodes(setup, origin.n_ranks)
    if network_factory is not None:
        factory = network_factory
    if node_of_rank is not None:
        nodes = node_of_rank
    at_once = min(threads, len(setup.models))
    if at_once > 1:
        report = one_at_a_time(report)

    def run_model(name: str) -> ModelReplay:
        network = factory(name)
        t1 = time.perf_counter()
        report(ReplayProgress(name, 0.0, 0.0))
        watch = None if on_progress is None else _model_watcher(name, t1, report)
        try:
            program = low.program
            if isinstance(program, Program):
                run = simulate(program, params, network, node_of_rank=nodes, on_progress=watch)
            else:
                run = simulate_windowed(
                    program, params, network, window_rows=window_rows, node_of_rank=nodes,
                    on_progress=watch,
                )  # fmt: skip
        except DeadlockError as exc:
            raise _deadlock(name, exc, low, origin) from exc
        wall = time.perf_counter() - t1
        report(ReplayProgress(name, 1.0, wall, operations=low.program.n_ops, events=run.n_events))
        hot: tuple[LinkUsage, ...] = ()
        if isinstance(network, PacketNetwork):
            hot = tuple(
                hottest_links(run.link_bytes, network.topology, params, run.simulated_time_s, top=5)
            )
        return _model_replay(name, run, wall, low, origin, hot)

    if at_once == 1:
        runs = [run_model(name) for name in setup.models]
    else:
        runs = run_concurrently(run_model, setup.models, at_once, first=_cost_rank)
    return ReplayResult(
        **replay_facts(origin, low, lowering_s), params=params, setup=setup, models=tuple(runs)
    )


#: Models in the order :func:`replay_lowered` starts them when it runs several at once
#: (the costliest first, so that the cheap ones fill the other threads); others last.
COST_ORDER = NETWORK_COST_ORDER  # from the network-model registry's cost ranks


def _cost_rank(name: str) -> int:
    return COST_ORDER.index(name) if name in COST_ORDER else len(COST_ORDER)


def replay_facts(
    trace: Trace | TraceOrigin, low: Lowered | StreamedLowering, lowering_s: float
) -> dict[str, Any]:
    """The trace and lowering facts every replay result reports (constructor arguments)."""
    return {
        "source": trace.source,
        "format": trace.format,
        "n_ranks": trace.n_ranks,
        "n_trace_ops": trace.n_ops,
        "n_program_ops": low.program.n_ops,
        "lowering_s": lowering_s,
        "collectives": dict(low.collectives),
        "algorithms": dict(low.algorithms),
        "nonblocking_collectives": low.nonblocking_collectives,
        "unsupported": dict(trace.unsupported),
        "notes": tuple(trace.notes),
    }


def _trace_position(
    low: Lowered | StreamedLowering, trace: TraceOrigin, rank: int, op_index: int
) -> tuple[int, str]:
    """Trace operation index within ``rank`` and MPI call of engine operation ``op_index``."""
    g = int(low.program.rank_ptr[rank]) + op_index
    if g >= low.program.n_ops:
        return -1, "?"
    t = low.trace_op(g)
    return t - int(trace.rank_ptr[rank]), trace.call_names[int(trace.call[t])]


def _deadlock(
    name: str, exc: DeadlockError, low: Lowered | StreamedLowering, trace: TraceOrigin
) -> ReplayDeadlockError:
    blocked = []
    for rank, op_index, desc in exc.blocked:
        i, call = _trace_position(low, trace, rank, op_index)
        blocked.append((rank, i, call, desc))
    return ReplayDeadlockError(name, blocked, exc.time_s)


def _model_replay(
    name: str,
    run: RunResult,
    wall: float,
    low: Lowered | StreamedLowering,
    trace: TraceOrigin,
    hot_links: tuple[LinkUsage, ...] = (),
) -> ModelReplay:
    unmatched = tuple(
        (r, *_trace_position(low, trace, r, i)) for r, i in run.unmatched_sends[:MAX_LISTED]
    )
    return ModelReplay(
        model=name,
        ranks=trace.n_ranks,
        events=run.n_events,
        simulated_time_s=run.simulated_time_s,
        end_s=run.end_s,
        per_rank_s=run.parts_s,
        per_call=run.per_call(),
        wall_s=wall,
        n_unmatched=len(run.unmatched_sends),
        unmatched=unmatched,
        hot_links=hot_links,
    )
