"""Run a lowered :class:`~mpiuq.simulator.program.table.Program` on the discrete-event kernel.

The engine is deterministic: events are ordered by simulated time and then by
creation order. Every simulated second of every rank is assigned to exactly one
of four categories, which sum to the rank's end time:

``compute``
    computation between MPI calls (scaled by ``compute_scale``);
``mpi_stack``
    software work of the MPI library on the rank's critical path: posting headers
    and RDMA gets, copies at memory bandwidth, buffer pinning (the rank's own, or
    the partner's / progress engine's while the rank is blocked on them);
``sync``
    waiting for a partner that has not yet sent (receiver) or posted its receive
    (rendezvous sender), eqs. 1-4 of the reference paper; for nonblocking calls
    the clock starts when the rank begins to wait (eqs. 3-4);
``network``
    the remaining blocked time: headers, RDMA requests, data and acknowledgements
    in flight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import kernel
from mpiuq.simulator.codes import (
    CATEGORIES,
    COL_CALL,
    COL_COUNT,
    COL_KIND,
    COL_PEER,
    COL_REQ,
    COL_TAG,
    N_PARAMS,
    OP_ISEND,
    R_COPY_BW,
    R_FRAGMENT,
    R_MAX_BYTES,
    R_PROTOCOL,
    R_RECV_OVERHEAD,
    R_SEGMENT_BYTES,
    R_SEGMENT_US,
    R_SEND_COMPLETE,
    R_SEND_OVERHEAD,
    R_UNEXPECTED,
    R_WIDTH,
    R_WIRE_LATENCY,
    R_WIRE_PER_BYTE,
)
from mpiuq.simulator.errors import DeadlockError, ParameterError
from mpiuq.simulator.networks import TWO_NODE_SWITCH, NetworkModel, network_arrays
from mpiuq.simulator.parameter_limits import REGIME_COST_RANGE
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.source import ProgramSource, row_blocks
from mpiuq.simulator.program.table import Op, Program
from mpiuq.simulator.regimes import MAX_REGIMES, PROTOCOLS, SLOT_UNITS
from mpiuq.simulator.runtime.watch import run_watched

__all__ = [
    "CATEGORIES",
    "Decomposition",
    "RunResult",
    "describe_op",
    "params_vector",
    "program_arrays",
    "run_result",
    "simulate",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Decomposition:
    """Seconds of compute, network, MPI stack and synchronisation."""

    compute_s: float
    network_s: float
    mpi_stack_s: float
    sync_s: float

    @property
    def total_s(self) -> float:
        """Sum of the four parts, seconds."""
        return self.compute_s + self.network_s + self.mpi_stack_s + self.sync_s

    def as_dict(self) -> dict[str, float]:
        """``{"compute_s": ..., "network_s": ..., "mpi_stack_s": ..., "sync_s": ...}``."""
        return {
            "compute_s": self.compute_s,
            "network_s": self.network_s,
            "mpi_stack_s": self.mpi_stack_s,
            "sync_s": self.sync_s,
        }

    @classmethod
    def from_row(cls, row: npt.ArrayLike) -> Decomposition:
        """Build from a ``(compute, network, mpi_stack, sync)`` row."""
        a = np.asarray(row, dtype=np.float64)
        return cls(float(a[0]), float(a[1]), float(a[2]), float(a[3]))


@dataclass(frozen=True)
class RunResult:
    """Outcome of one simulation.

    Attributes
    ----------
    end_s
        ``(n_ranks,)`` time at which each rank finished its last operation, seconds.
    parts_s
        ``(n_ranks, 4)`` seconds per category in :data:`CATEGORIES` order.
    per_call_s
        ``(n_calls, 4)`` the same split summed over ranks per MPI call kind.
    call_names
        Name of each row of ``per_call_s``.
    marks_s
        Times recorded by ``MARK`` operations, seconds.
    n_events
        Number of discrete events processed.
    matched_recv
        ``int32 (n_requests,)``: for each send request id, the receive request id that matched it
        (-1 for receive requests and unmatched sends).
    unmatched_sends
        ``(rank, operation index)`` of messages that no receive ever matched.
    link_bytes
        Bytes carried by each link of the topology (empty without topology).
    """

    end_s: FloatArray
    parts_s: FloatArray
    per_call_s: FloatArray
    call_names: tuple[str, ...]
    marks_s: FloatArray
    n_events: int
    matched_recv: npt.NDArray[np.int32]
    unmatched_sends: tuple[tuple[int, int], ...]
    link_bytes: FloatArray

    @property
    def simulated_time_s(self) -> float:
        """Time at which the last rank finished, seconds."""
        return float(self.end_s.max()) if self.end_s.size else 0.0

    def rank(self, r: int) -> Decomposition:
        """Decomposition of rank ``r``."""
        return Decomposition.from_row(self.parts_s[r])

    def total(self) -> Decomposition:
        """Decomposition summed over ranks."""
        return Decomposition.from_row(self.parts_s.sum(axis=0))

    def per_call(self) -> dict[str, Decomposition]:
        """Decomposition per MPI call kind (calls with no time are included)."""
        return {
            n: Decomposition.from_row(self.per_call_s[i]) for i, n in enumerate(self.call_names)
        }


def params_vector(params: SimParams) -> FloatArray:
    """Parameter vector in the kernel's canonical order (the fields of :class:`SimParams`,
    then the slots of its regime table)."""
    return np.array([float(v) for v in params.as_dict().values()], dtype=np.float64)


def check_regime_slots(matrix: FloatArray) -> None:
    """Check the regime slots of parameter vectors (rows of ``matrix``) before the kernel
    reads them: 1 to ``MAX_REGIMES`` regimes, known protocol codes, thresholds whole and
    non-decreasing with an unbounded last regime, per-regime costs finite and >= 0,
    segment sizes whole and positive. Vectors built by :func:`params_vector` or
    :func:`~mpiuq.simulator.parameters.params_matrix` always pass; this guards raw matrices.

    Raises
    ------
    ParameterError
        Naming the first bad slot ``regime<k>_<field>``, its value and what is allowed.
    """
    tail = matrix[:, N_PARAMS:]
    if tail.shape[0] and tail.dtype == np.float64 and bool(np.all(tail == tail[:1])):
        # one regime table in every row (the usual case: only scalars calibrated; NaN
        # never compares equal): check it once per process, with the same first bad slot
        _check_regime_table(np.ascontiguousarray(tail[0]).tobytes())
        return
    _check_regime_rows(tail)


@lru_cache(maxsize=64)
def _check_regime_table(row: bytes) -> None:
    """:func:`check_regime_slots` of one row's regime slots (raw float64 bytes); a table
    that passed is remembered (an error is raised again every time)."""
    _check_regime_rows(np.frombuffer(row, dtype=np.float64)[None, :])


def _check_regime_rows(tail: FloatArray) -> None:
    """:func:`check_regime_slots` of the regime slots ``tail`` of every row."""
    n_regimes = tail.shape[1] // R_WIDTH
    if not 1 <= n_regimes <= MAX_REGIMES or tail.shape[1] % R_WIDTH:
        raise ParameterError(
            "matrix",
            f"{tail.shape[1]} regime slots",
            f"{R_WIDTH} slots per regime for 1 to {MAX_REGIMES} regimes",
        )

    def refuse(k: int, field: str, value: float, allowed: str) -> None:
        raise ParameterError(f"regime{k}_{field}", float(value), allowed)

    previous = np.zeros(tail.shape[0])
    for k in range(n_regimes):
        col = tail[:, k * R_WIDTH : (k + 1) * R_WIDTH]
        proto = col[:, R_PROTOCOL]
        bad = ~np.isin(proto, np.arange(len(PROTOCOLS)))
        if bad.any():
            refuse(k, "protocol", proto[bad][0], f"a protocol code 0..{len(PROTOCOLS) - 1}")
        mx = col[:, R_MAX_BYTES]
        if k == n_regimes - 1:
            bad = mx != np.inf
            allowed = "no bound (inf): the last regime takes every larger size"
        else:
            # non-decreasing: the default table of small_max_bytes == eager_max_bytes has an
            # empty eager regime (never selected)
            bad = ~np.isfinite(mx) | (mx != np.floor(mx)) | (mx < previous)
            allowed = "a whole number of bytes, at least the previous regime's (non-decreasing)"
            previous = mx
        if bad.any():
            refuse(k, "max_bytes", mx[bad][0], allowed)
        for field, j in (
            ("send_overhead_us", R_SEND_OVERHEAD),
            ("copy_bw_GBps", R_COPY_BW),
            ("segment_us", R_SEGMENT_US),
            ("recv_overhead_us", R_RECV_OVERHEAD),
            ("unexpected_us", R_UNEXPECTED),
            ("send_complete_us", R_SEND_COMPLETE),
            ("wire_latency_us", R_WIRE_LATENCY),
            ("wire_ns_per_byte", R_WIRE_PER_BYTE),
        ):
            v = col[:, j]  # the one range check of per-regime costs (parameter_limits)
            low, high = REGIME_COST_RANGE
            bad = ~np.isfinite(v) | (v < low) | (v > high)
            if bad.any():
                refuse(k, field, v[bad][0], f"a number in [{low:g}, {high:g}] {SLOT_UNITS[field]}")
        seg = col[:, R_SEGMENT_BYTES]
        bad = ~np.isfinite(seg) | (seg < 1.0) | (seg != np.floor(seg))
        if bad.any():
            refuse(k, "segment_bytes", seg[bad][0], "a whole number of bytes >= 1")
        frag = col[:, R_FRAGMENT]
        bad = ~np.isfinite(frag) | (frag < 0.0) | (frag != np.floor(frag))
        bad |= (frag > 0.0) & (col[:, R_PROTOCOL] != PROTOCOLS.index("stream"))
        if bad.any():
            refuse(
                k,
                "fragment_bytes",
                frag[bad][0],
                "a whole number of bytes >= 0, and 0 unless the regime's protocol is stream",
            )


def program_arrays(program: Program) -> kernel.ProgramArrays:
    """The kernel's bundle of ``program``: its table, sizes, seconds, wait list and counts."""
    return kernel.ProgramArrays(
        program.rank_ptr,
        program.ops,
        program.nbytes,
        program.seconds,
        program.wait_list,
        int(program.n_requests),
        max(len(program.call_names), 1),
        int(program.n_marks),
    )


def simulate(
    program: Program,
    params: SimParams | None = None,
    network: NetworkModel = TWO_NODE_SWITCH,
    *,
    node_of_rank: npt.NDArray[np.int64] | None = None,
    compute_scale: float = 1.0,
    on_progress: Callable[[float], None] | None = None,
) -> RunResult:
    """Simulate ``program`` deterministically.

    Parameters
    ----------
    program
        Lowered point-to-point operation streams.
    params
        Endpoint and network parameters (defaults: Table 1 values).
    network
        Network model (default: two nodes through one switch).
    node_of_rank
        Node hosting each rank (default: one rank per node).
    compute_scale
        Factor applied to every compute duration (the reference study used 0.1).
    on_progress
        Receives the fraction of the program's operations executed, about twice a
        second while the kernel runs (in a worker thread) and 1.0 at the end; the
        results do not depend on it.

    Raises
    ------
    DeadlockError
        If some rank waits forever (e.g. on a receive no send matches).
    SettingError
        If ``node_of_rank`` does not fit the program or the network's topology.
    """
    if params is None:
        params = SimParams()
    check_compute_scale(compute_scale)
    net = network_arrays(network, program.n_ranks, node_of_rank)
    prog = program_arrays(program)
    state = kernel.state_for(prog, net)
    vector = params_vector(params)

    def run() -> Any:
        return kernel.run_program(prog, vector, net, float(compute_scale), state)  # type: ignore[call-arg]

    if on_progress is None:
        outputs = run()
    else:
        starts, n_ops = program.rank_ptr[:-1], max(program.n_ops, 1)

        def done() -> float:
            return float((state.ranks.pc - starts).sum()) / n_ops

        outputs = run_watched(run, done, on_progress)
    return run_result(program, outputs)


def check_compute_scale(compute_scale: float) -> None:
    """Refuse a ``compute_scale`` that is not a finite number >= 0 (ValueError)."""
    if not (np.isfinite(compute_scale) and compute_scale >= 0):
        raise ValueError(
            f"compute_scale={compute_scale!r} is invalid: expected a finite number >= 0"
        )


def run_result(program: Program | ProgramSource, outputs: tuple[Any, ...]) -> RunResult:
    """The :class:`RunResult` of the kernel's ``outputs`` (:func:`kernel.run_program`'s
    tuple) for ``program``.

    Raises
    ------
    DeadlockError
        If some rank did not reach the end of its operations.
    """
    end, acc, acc_call, marks, n_events, pc, match, link_bytes = outputs
    unfinished = np.flatnonzero(pc < program.rank_ptr[1:])
    if unfinished.size:
        raise DeadlockError(
            [
                (int(r), int(pc[r] - program.rank_ptr[r]), describe_op(program, int(pc[r])))
                for r in unfinished
            ],
            float(end.max()) if end.size else 0.0,
        )
    unmatched = unmatched_sends(program, match)
    rank_of = np.searchsorted(program.rank_ptr, unmatched, side="right") - 1
    return RunResult(
        end_s=end,
        parts_s=acc,
        per_call_s=acc_call,
        call_names=program.call_names,
        marks_s=marks,
        n_events=int(n_events),
        matched_recv=match,  # int32, as the kernel keeps it
        unmatched_sends=tuple(
            (int(r), int(i - program.rank_ptr[r])) for r, i in zip(rank_of, unmatched, strict=True)
        ),
        link_bytes=link_bytes,
    )


#: Program rows :func:`unmatched_sends` looks at in one array operation.
UNMATCHED_BLOCK_ROWS = 1 << 22


def unmatched_sends(
    program: Program | ProgramSource, matched: npt.NDArray[np.integer[Any]]
) -> npt.NDArray[np.int64]:
    """Rows of the ``ISEND`` operations whose request ``matched`` says no receive matched.

    In blocks of :data:`UNMATCHED_BLOCK_ROWS` rows, so that the scratch arrays stay
    small next to a program of tens of millions of rows (read from a
    :class:`ProgramSource` block by block).

    A validated program creates each request once, and ``matched`` holds a receive
    only at a send's request: when it holds as many as the program has sends, every
    send matched, and counting the sends (one pass over the kind column) answers
    without gathering their requests (a third of the time on a million sends).
    """
    n_ops = int(program.rank_ptr[-1])
    n_matched = int(np.count_nonzero(np.asarray(matched) >= 0))
    n_sends = sum(
        int(np.count_nonzero(ops[:, COL_KIND] == OP_ISEND))
        for _lo, ops, _value in row_blocks(program, 0, n_ops, UNMATCHED_BLOCK_ROWS)
    )
    if n_matched == n_sends:
        return np.zeros(0, np.int64)
    found = []
    for lo, ops, _value in row_blocks(program, 0, n_ops, UNMATCHED_BLOCK_ROWS):
        sends = np.flatnonzero(ops[:, COL_KIND] == OP_ISEND)
        found.append(sends[matched[ops[sends, COL_REQ]] < 0] + lo)
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def describe_op(program: Program | ProgramSource, i: int) -> str:
    """Human-readable description of operation ``i`` (global index)."""
    ((_, row, _v),) = row_blocks(program, i, i + 1)
    k = Op(int(row[0, COL_KIND]))
    call = program.call_names[int(row[0, COL_CALL])] if program.call_names else "?"
    if k in (Op.WAIT, Op.WAITALL, Op.WAITANY):
        req = int(row[0, COL_REQ])
        reqs = (
            [req]
            if k == Op.WAIT
            else program.wait_list[req : req + int(row[0, COL_COUNT])].tolist()
        )
        # a rank waits only on its own requests: search that rank's operations
        r = int(np.searchsorted(program.rank_ptr, i, side="right")) - 1
        lo, hi = int(program.rank_ptr[r]), int(program.rank_ptr[r + 1])
        created: dict[int, str] = {}
        wanted = set(reqs[:4])
        for _a, ops, value in row_blocks(program, lo, hi):
            kinds = ops[:, COL_KIND]
            creates = np.flatnonzero((kinds == Op.ISEND) | (kinds == Op.IRECV))
            for j in creates[np.isin(ops[creates, COL_REQ], list(wanted))]:
                q = int(ops[j, COL_REQ])
                if q in created:
                    continue
                send = ops[j, COL_KIND] == Op.ISEND
                peer = int(ops[j, COL_PEER])
                who = "ANY_SOURCE" if peer < 0 and not send else str(peer)
                verb = "send to" if send else "receive from"
                created[q] = f"{verb} {who} tag {int(ops[j, COL_TAG])} ({int(value[j])} B)"
        posted = [created[q] for q in reqs[:4]]
        more = f" and {len(reqs) - 4} more" if len(reqs) > 4 else ""
        return f"{call} waiting on " + ", ".join(posted) + more
    return f"{call} ({k.name.lower()})"
