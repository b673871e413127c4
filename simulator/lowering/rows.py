"""Row bookkeeping of the lowering: flattened ranges, the row plan and writer, combine rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import OPS_WIDTH, TRACE_WAITALL, TRACE_WAITANY
from mpiuq.simulator.lowering.kernel import combine_steps, emit_program, plan_rows
from mpiuq.simulator.lowering.lowered import UnreplayableTraceError
from mpiuq.simulator.trace.ir import Trace

IntArray = npt.NDArray[np.int64]
I32Array = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


def segments(starts: IntArray, counts: IntArray) -> tuple[IntArray, IntArray]:
    """Flattened positions of the ranges ``[starts[i], starts[i] + counts[i])`` and their owner i."""
    seg = np.repeat(np.arange(starts.shape[0], dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    pos = np.arange(int(counts.sum()), dtype=np.int64) - first[seg] + starts[seg]
    return pos, seg


def combine_rows(
    row_ptr: IntArray,
    coll_ops: IntArray,
    tid: IntArray,
    combines: list[FloatArray],
    t_len: IntArray,
) -> tuple[IntArray, FloatArray]:
    """Program rows of the reductions' combine steps and the bytes each combines.

    Parameters
    ----------
    row_ptr
        Program rows of each trace operation (``Lowered.row_ptr``).
    coll_ops, tid
        Trace operation of each collective call and its schedule template.
    combines, t_len
        Per template: bytes combined by each of its rows (> 0 only on combine steps)
        and its number of rows.
    """
    if not combines:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    # compiled, in two passes (count, then write): no scratch array per collective row
    # (array operations took 16 B per row of every collective, 0.9 GB at issue 15's scale)
    pool = np.concatenate(combines)
    t_first = np.cumsum(t_len) - t_len
    rows, nbytes = np.zeros(0, np.int64), np.zeros(0, np.float64)
    n = combine_steps(row_ptr, coll_ops, tid, t_first, pool, rows, nbytes)
    rows, nbytes = np.empty(n, np.int64), np.empty(n, np.float64)
    combine_steps(row_ptr, coll_ops, tid, t_first, pool, rows, nbytes)
    return rows, nbytes


class ScheduleTemplate(Protocol):
    """A collective schedule template (:class:`~mpiuq.simulator.lowering.templates.Template`) as the row writer reads it."""

    @property
    def rows(self) -> IntArray: ...
    @property
    def combine(self) -> FloatArray: ...
    @property
    def wait_list(self) -> IntArray: ...
    @property
    def n_req(self) -> int: ...


Plan = tuple[IntArray, I32Array, I32Array, I32Array]


def template_lengths(templates: Sequence[ScheduleTemplate]) -> tuple[IntArray, IntArray]:
    """Rows and wait-list entries of each template."""
    t_len = np.array([t.rows.shape[0] for t in templates], dtype=np.int64)
    return t_len, np.array([t.wait_list.shape[0] for t in templates], dtype=np.int64)


def plan_layout(
    trace: Trace,
    is_nbc: npt.NDArray[np.bool_],
    templates: Sequence[ScheduleTemplate],
    tid: IntArray,
    first_request: int,
    n_user_wl: int,
) -> tuple[Plan, int, int, int]:
    """:func:`plan_rows` of ``trace``: ``(plan, rows, request end, wait-list length)``.

    The plan: the row map (int64) and each operation's first fresh request, wait-list
    entry and slot (int32). Fresh requests start at ``first_request``, fresh wait-list
    entries after the ``n_user_wl`` the user wait-alls keep.
    """
    n = trace.n_ops
    plan: Plan = (
        np.empty(n + 1, np.int64),
        np.empty(n, np.int32),
        np.empty(n, np.int32),
        np.empty(n, np.int32),
    )
    t_len, w_len = template_lengths(templates)
    t_req = np.array([t.n_req for t in templates], dtype=np.int64)
    rows, req, wl = plan_rows(
        trace.kind,
        trace.seconds,
        trace.request,
        is_nbc,
        t_len,
        t_req,
        w_len,
        tid,
        first_request,
        n_user_wl,
        plan,
    )
    return plan, int(rows), int(req), int(wl)


def write_rows(
    trace: Trace,
    plan: Plan,
    n_rows: int,
    collectives: tuple[IntArray, IntArray, IntArray, FloatArray, IntArray, IntArray],
    templates: Sequence[ScheduleTemplate],
    rates: tuple[float, float, int],
    wait_list: IntArray,
) -> tuple[I32Array, IntArray]:
    """The program rows of ``trace`` (:func:`emit_program`): the table and the value column.

    ``collectives``: per collective call ``(tid, comm, tag, op_s)`` and per wait-all
    ``(wa_off, wa_count)``; ``rates``: ``(compute_scale, reduce_rate_Bps,
    coll_comm_base)``. Fresh wait-list entries are written into ``wait_list``.
    """
    t_len, w_len = template_lengths(templates)
    # NumPy allocates (huge pages where the kernel offers them); the loop fills every entry.
    # One 8-byte column holds the bytes of ISEND/IRECV rows and the seconds of COMPUTE
    # rows, seen as int64 and as float64 (see Program): 40 bytes per row instead of 48
    value = np.empty(n_rows, dtype=np.int64)
    out = (np.empty((n_rows, OPS_WIDTH), dtype=np.int32), value, value.view(np.float64))
    tmpl = templates
    emit_program(
        (
            trace.kind,
            trace.call,
            trace.peer,
            trace.peer2,
            trace.tag,
            trace.tag2,
            trace.comm,
            trace.bytes_send,
            trace.bytes_recv,
            trace.request,
            trace.seconds,
        ),
        plan,
        collectives,
        (
            np.cumsum(t_len) - t_len,
            np.concatenate([t.rows for t in tmpl]) if tmpl else np.zeros((0, 5), np.int64),
            np.concatenate([t.combine for t in tmpl]) if tmpl else np.zeros(0),
            np.cumsum(w_len) - w_len,
            w_len,
            np.concatenate([t.wait_list for t in tmpl]) if tmpl else np.zeros(0, np.int64),
        ),
        trace.comm_members,
        trace.comm_ptr,
        (float(rates[0]), float(rates[1])),
        rates[2],
        out,
        wait_list,
    )
    return out[0], value


#: Request ids the lists of a trace's (or a block's) WAITANY operations may hold in all.
#: Each WAITANY lists every request of its group posted so far, so a group that never
#: empties (a master re-posting a receive after each MPI_Waitany) lists quadratically
#: many: 2^27 entries (1 GiB as int64) stops such a lowering before it exhausts memory.
MAX_WAITANY_ENTRIES = 1 << 27


def user_wait_lists(
    trace: Trace, is_nbc: npt.NDArray[np.bool_]
) -> tuple[IntArray, IntArray, IntArray]:
    """What the user wait-alls and wait-anys keep (not the requests of nonblocking
    collectives).

    Returns ``(user_wl, wa_off, wa_count)``: the kept request ids of every ``WAITALL`` and
    ``WAITANY`` in trace order (the overlapping lists of wait-anys copied each), and each
    list's offset into them and count.
    """
    wa = np.flatnonzero((trace.kind == TRACE_WAITALL) | (trace.kind == TRACE_WAITANY))
    listed = int(trace.count[wa][trace.kind[wa] == TRACE_WAITANY].sum())
    if listed > MAX_WAITANY_ENTRIES:
        raise UnreplayableTraceError(
            f"trace {trace.source}: its MPI_Waitany calls list {listed} requests in all (each "
            f"chooses among the requests its group holds so far), more than the "
            f"{MAX_WAITANY_ENTRIES} the lowering allows: a group of pending requests that "
            "never empties makes this grow with the square of its calls"
        )
    pos, seg = segments(trace.request[wa], trace.count[wa])
    ids = trace.wait_reqs[pos]
    keep = ~is_nbc[ids]
    wa_count = np.bincount(seg[keep], minlength=wa.shape[0]).astype(np.int64)
    return ids[keep], np.cumsum(wa_count) - wa_count, wa_count
