"""What a replay gives: per model the decomposition of every rank's time, and the
trace facts and settings it ran with; its progress reports and its deadlock error.

:class:`ReplayResult` (one :class:`ModelReplay` per network model) and its JSON
entries (:func:`trace_and_settings`), :class:`TraceOrigin` (what a replay keeps of its
trace once lowered), :class:`ReplayProgress` and :class:`ReplayDeadlockError`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.engine import CATEGORIES, Decomposition
from mpiuq.simulator.errors import SimulatorError
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.link_report import LinkUsage
from mpiuq.simulator.replay.setup import ReplaySetup
from mpiuq.simulator.trace.ir import Trace

__all__ = [
    "MAX_LISTED",
    "ModelReplay",
    "ReplayDeadlockError",
    "ReplayProgress",
    "ReplayResult",
    "TraceOrigin",
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


@dataclass(frozen=True, kw_only=True)
class ReplayFacts:
    """What every replay result reports of its trace, its lowering and its settings.

    Attributes
    ----------
    source, format
        The trace's path and format.
    n_ranks, n_trace_ops, n_program_ops
        Ranks, trace operations and lowered program operations.
    lowering_s
        Wall seconds of the lowering (0 when the program came from the cache).
    setup
        The replay's settings.
    collectives, algorithms, nonblocking_collectives
        Collective calls by kind, the algorithm each was lowered with, and how many
        non-blocking collectives ran at their call.
    unsupported, notes
        Trace operations not replayed (by call) and the reader's notes.
    """

    source: str
    format: str
    n_ranks: int
    n_trace_ops: int
    n_program_ops: int
    lowering_s: float
    setup: ReplaySetup
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, list[str]] = field(default_factory=dict)
    nonblocking_collectives: int = 0
    unsupported: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ReplayResult(ReplayFacts):
    """Replays of one trace under several network models."""

    params: SimParams
    models: tuple[ModelReplay, ...]

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


def trace_and_settings(result: ReplayFacts, reduce_rate_Bps: float | None) -> dict[str, Any]:
    """The ``trace`` and ``settings`` entries of a replay's JSON (one replay or many draws)."""
    setup = result.setup
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
