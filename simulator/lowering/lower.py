"""Lowering of a :class:`~mpiuq.simulator.trace.ir.Trace` into an engine :class:`Program`.

What each trace operation becomes (all keep the trace operation's MPI call, so
the engine's per-call accounting reports time under the application's calls):

* ``COMPUTE`` -> ``COMPUTE`` of ``seconds * compute_scale`` (zero-length gaps dropped);
* ``ISEND`` / ``IRECV`` -> the same, engine request id = trace request id;
* ``SEND`` / ``RECV`` -> ``ISEND`` / ``IRECV`` + ``WAIT`` on a fresh request;
* ``SENDRECV`` -> ``IRECV`` + ``ISEND`` + ``WAITALL`` of both;
* ``WAIT`` / ``WAITALL`` / ``WAITANY`` -> the same on the trace's request ids (partial
  wait-alls stay partial; requests the trace never waits for are left pending, which
  the engine allows; each ``WAITANY`` gets its own copy of its list);
* collectives -> the point-to-point algorithm of :mod:`mpiuq.simulator.collectives`
  on the collective's communicator, each round an ``IRECV``/``ISEND`` set closed by
  a ``WAITALL``, plus a ``COMPUTE`` of ``bytes / reduce_rate`` per combine step of
  reductions (or, when the trace records the operator's cost, that cost once, scaled
  by ``compute_scale``).

Collective traffic uses its own matching context, engine communicator
``COLL_COMM_BASE + trace communicator``, and the per-(rank, communicator)
collective sequence number as tag, so it never matches user point-to-point
messages, whatever their tags (``ANY_TAG``, ``ANY_SOURCE`` included).

**Nonblocking collectives** (``MPI_Iallreduce`` ...) are executed with the
blocking algorithm at the call; the ``WAIT``/``WAITALL`` entries naming their
request become no-ops (a wait-all keeps its other requests). This can only
lengthen a run, never deadlock a correct program that does not depend on
progress of the collective before its wait. Nonblocking collectives the trace
holds without sizes are not in the trace's operations at all; they are listed
in ``Trace.unsupported`` and reported by the replay.

How: array operations map each collective call to a schedule template (built in
Python once per distinct collective, rank position, communicator size, root and
sizes, and cached) and choose the requests each wait-all keeps; two compiled
passes of :mod:`mpiuq.simulator.lowering.kernel` then lay out and write every
program row.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.lowering.lowered import (
    COLL_COMM_BASE,
    Lowered,
    LoweringOptions,
    UnreplayableTraceError,
)
from mpiuq.simulator.lowering.rows import (
    combine_rows,
    plan_layout,
    template_lengths,
    user_wait_lists,
    write_rows,
)
from mpiuq.simulator.lowering.templates import expand_collectives
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.trace.ir import UNKNOWN_PEER, OpKind, Trace

#: :func:`lower_trace`, and the types it takes and gives (defined in :mod:`.lowered`).
__all__ = [
    "COLL_COMM_BASE",
    "Lowered",
    "LoweringOptions",
    "UnreplayableTraceError",
    "check_replayable",
    "collector_paused",
    "lower_trace",
]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (it is re-enabled if it was on).

    Expanding collectives allocates many small objects that all stay reachable (the
    cached templates); a full collection in the middle scans every object of the
    process (numba's alone, 0.06-0.08 s) and frees nothing. Whether one falls there
    depended on what the process allocated before, so the lowering time of a trace
    changed with unrelated code.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def check_replayable(trace: Trace, empty: np.ndarray | None = None, op_offset: int = 0) -> None:
    """Refuse partial traces (block lowering: ``empty`` ranks of the whole trace, first op)."""
    p2p = np.isin(
        trace.kind,
        np.array([OpKind.SEND, OpKind.RECV, OpKind.ISEND, OpKind.IRECV, OpKind.SENDRECV], np.int8),
    )
    bad = p2p & ((trace.peer == UNKNOWN_PEER) | (trace.peer2 == UNKNOWN_PEER))
    if bad.any():
        first = int(np.argmax(bad))
        raise UnreplayableTraceError(
            f"trace {trace.source} cannot be replayed as a whole: {int(bad.sum())} point-to-point "
            f"operation(s) have a peer the trace cannot name (UNKNOWN_PEER; a partial trace that "
            f"records only some ranks), the first at operation {first + op_offset} "
            f"({trace.call_names[int(trace.call[first])]}); replay needs every rank's stream"
        )
    empty = np.diff(trace.rank_ptr) == 0 if empty is None else empty
    if not empty.any() or empty.all():
        return
    peers = np.concatenate([trace.peer[p2p], trace.peer2[p2p & (trace.peer2 >= 0)]])
    named = np.unique(peers[peers >= 0])
    coll_comms = np.unique(trace.comm[trace.kind >= OpKind.BARRIER])
    for c in coll_comms.tolist():
        named = np.union1d(named, trace.comm_ranks(c)[trace.comm_ranks(c) >= 0])
    silent = named[empty[named]]
    if silent.size:
        partial = [n for n in trace.notes if "partial" in n]
        hint = f" (reader: {partial[0]})" if partial else ""
        raise UnreplayableTraceError(
            f"trace {trace.source} cannot be replayed as a whole: {silent.size} rank(s) "
            f"({', '.join(map(str, silent[:8].tolist()))}{'...' if silent.size > 8 else ''}) "
            f"have no operations but are partners of messages or collectives; replay needs "
            f"every rank's stream{hint}"
        )


def lower_trace(trace: Trace, options: LoweringOptions | None = None) -> Lowered:
    """Lower ``trace`` into a validated engine program (see the module docstring).

    Parameters
    ----------
    trace
        A validated trace with every rank's stream.
    options
        Reduction rate, compute scale and collective algorithms.

    Raises
    ------
    UnreplayableTraceError
        If the trace cannot name some peers or communicator members (partial traces).
    CollectiveError
        If a collective's arguments are inconsistent (e.g. a v-collective's count list).
    """
    opts = LoweringOptions() if options is None else options
    check_replayable(trace)
    kind = trace.kind

    # requests of nonblocking collectives: their waits become no-ops
    is_nbc = np.zeros(trace.n_requests, dtype=np.bool_)
    nbc_ops = trace.nonblocking & (kind >= OpKind.BARRIER)
    is_nbc[trace.request[nbc_ops]] = True
    user_wl, wa_off, wa_count = user_wait_lists(trace, is_nbc)

    # ---- collectives: expand with cached per-rank templates
    coll_ops = np.flatnonzero(kind >= OpKind.BARRIER)
    with collector_paused():
        expanded, used, counted = expand_collectives(trace, coll_ops, opts)
    tmpl = expanded.templates
    plan, total, n_requests, n_wl = plan_layout(
        trace, is_nbc, tmpl, expanded.tid, trace.n_requests, user_wl.shape[0]
    )
    if max(n_requests, n_wl) > np.iinfo(np.int32).max:  # checked before any row is written
        raise ProgramError(
            f"trace {trace.source} lowers to {n_requests} requests and {n_wl} wait-list "
            f"entries: the engine's limit is {np.iinfo(np.int32).max}"
        )
    wait_list = np.empty(n_wl, dtype=np.int64)
    wait_list[: user_wl.shape[0]] = user_wl
    del user_wl  # in the wait list now: 8 B per entry less while the rows are written
    coll = (expanded.tid, expanded.comm, expanded.tag, expanded.op_s, wa_off, wa_count)
    rates = (opts.compute_scale, opts.reduce_rate_Bps, COLL_COMM_BASE)
    ops, value = write_rows(trace, plan, total, coll, tmpl, rates, wait_list)
    row_ptr = plan[0]
    del plan  # the plan's other columns (12 B per trace operation) go first

    program = Program(
        n_ranks=trace.n_ranks,
        rank_ptr=row_ptr[trace.rank_ptr],
        ops=ops,
        nbytes=value,
        seconds=value.view(np.float64),
        wait_list=wait_list,
        n_requests=n_requests,
        n_marks=0,
        call_names=tuple(trace.call_names),
    )
    program.validate()
    reduce_rows, reduce_bytes = combine_rows(
        row_ptr, coll_ops, expanded.tid, [t.combine for t in tmpl], template_lengths(tmpl)[0]
    )
    return Lowered(
        program=program,
        row_ptr=row_ptr,
        collectives=counted,
        algorithms={k: sorted(v) for k, v in used.items()},
        nonblocking_collectives=int(nbc_ops.sum()),
        reduce_rows=reduce_rows,
        reduce_bytes=reduce_bytes,
    )
