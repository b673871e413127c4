"""Lowering of a trace file in blocks of ranks, straight into a program file.

:func:`lower_trace_blocks` reads the columns of an mpiuq HDF5 trace file
(:func:`~mpiuq.simulator.trace.cache.store.save_trace`, ``mpiuq trace synth``) one block
of consecutive ranks at a time, lowers each block with the machinery of
:func:`~mpiuq.simulator.lowering.lower.lower_trace` and appends its rows to a
:mod:`program file <mpiuq.simulator.program.file>`. The file holds exactly what
``lower_trace`` of the whole trace returns (the same rows, values, wait list, row
map, request count, combine rows and collective counts, byte for byte).

Why this is exact: the lowering numbers everything in trace order, and a trace's
operations are stored rank after rank. Fresh requests (of blocking calls and
collective rounds) follow the trace's requests in that order, so a block's first
fresh request is the count of the blocks before it. The wait list holds first the
entries the user wait-alls keep (in trace order), then the fresh entries: a cheap
first pass over the ``kind``, ``nonblocking``, ``count`` (and, when the trace has
nonblocking collectives, ``request`` and ``wait_reqs``) columns finds how many user
entries each block keeps, so each block knows where both its parts start. Each block
is lowered with its wait-list entries numbered from 0 (user entries first), checked
(:meth:`Program.validate` on the block), then its wait-all rows are moved to their
global offsets.

Blocks are cut by trace operations and by the estimated rows of collectives whose
schedules grow with the communicator (an all-to-all-v with distinct counts lowers to
about ``2 p`` rows per rank from one trace operation), so a block's rows stay bounded
on such traces too; templates kept from block to block are let go past
:data:`TEMPLATE_CACHE_BYTES`.

Memory: one block of trace columns and one block of program rows, plus arrays of
``n_ranks`` entries, 1 byte and 2 bits per trace request (whether a nonblocking
collective posts it; whether it is posted, completed: the trace's request checks
across blocks) and, while a block is checked, :meth:`Program.validate`'s 4 bytes per
program request; independent of the number of operations otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import COL_KIND, COL_REQ, OP_WAITALL
from mpiuq.simulator.collectives import CollectiveError
from mpiuq.simulator.errors import ProgramError, SettingError
from mpiuq.simulator.lowering.lower import (
    COLL_COMM_BASE,
    COLLECTIVE_NAMES,
    LoweringOptions,
    UnreplayableTraceError,
    _check_replayable,
    _collector_paused,
    _expand_collectives,
)
from mpiuq.simulator.lowering.rows import (
    combine_rows,
    plan_layout,
    segments,
    template_lengths,
    user_wait_lists,
    write_rows,
)
from mpiuq.simulator.program.file import ProgramFileWriter, TraceFacts
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.trace.cache.h5_reader import TraceHeader, open_trace_h5, read_column
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import OP_COLUMNS, V_KINDS, OpKind, Trace

__all__ = [
    "DEFAULT_BLOCK_OPS",
    "MIN_BLOCKS",
    "MIN_BLOCK_OPS",
    "TEMPLATE_CACHE_BYTES",
    "WIDE_BLOCK_ROWS",
    "BlockLowering",
    "lower_trace_blocks",
]

IntArray = npt.NDArray[np.int64]

#: Trace operations per block when ``ranks_per_block`` is not given (about 72 MB of
#: trace columns and 80 MB of program rows per block of halo3d). Issue 15's trace
#: (35.4 M operations, 16,384 ranks) peaked at 1.21 GiB with 2 M per block, 1.03 GiB
#: with 1 M, in the same time (42 s; 0.97 GiB since the request sets are bits).
DEFAULT_BLOCK_OPS = 1_000_000
#: Smaller traces are cut into at least this many blocks (of at least
#: :data:`MIN_BLOCK_OPS` operations): ti_lulesh_512r (954 k operations) streamed with
#: analytic peaks at 164 MiB in blocks of 34 ranks against 266 MiB in one block, in the
#: same time (0.74 s in process).
MIN_BLOCKS = 16
MIN_BLOCK_OPS = 50_000
_INT32_MAX = int(np.iinfo(np.int32).max)
_V_KINDS = np.array(sorted(int(k) for k in V_KINDS), dtype=np.int8)
#: Estimated program rows of wide collectives (all-to-all-v ...) per block: their rows
#: cost about 240 B each while a block is lowered (templates, rows, checks) and a
#: 2,048-rank all-to-all-v with distinct counts has 4 k per rank, in one trace operation.
WIDE_BLOCK_ROWS = 65_536
#: Collectives whose per-rank schedules may grow with the communicator's size.
_WIDE_KINDS = np.array(
    sorted(
        int(k) for k in (*V_KINDS, OpKind.ALLTOALL, OpKind.ALLGATHER, OpKind.GATHER, OpKind.SCATTER)
    ),
    dtype=np.int8,
)
#: Bytes of collective templates one lowering keeps from block to block (templates of
#: sub-communicators recur in later blocks); beyond it the kept ones are let go. A
#: 2,048-rank all-to-all-v with distinct counts has one 200 kB template per rank: kept
#: whole, they were 0.45 GB.
TEMPLATE_CACHE_BYTES = 8 * 2**20


@dataclass
class BlockLowering:
    """What :func:`lower_trace_blocks` wrote.

    Attributes
    ----------
    path
        The program file.
    n_blocks, ranks_per_block
        How the ranks were split (``ranks_per_block``: the most ranks in one block).
    n_ops, n_requests, n_wait
        Program rows, requests and wait-list entries.
    """

    path: Path
    n_blocks: int
    ranks_per_block: int
    n_ops: int
    n_requests: int
    n_wait: int
    collectives: dict[str, int] = field(default_factory=dict)


def _ranks_per_block(value: object, n_ranks: int, n_ops: int) -> int:
    if value is None:
        per_rank = max(1.0, n_ops / n_ranks)
        block_ops = min(DEFAULT_BLOCK_OPS, max(MIN_BLOCK_OPS, n_ops // MIN_BLOCKS))
        return max(1, min(n_ranks, int(block_ops // per_rank)))
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 1
    if not ok:
        raise SettingError(f"ranks_per_block={value!r} is invalid: expected a whole number >= 1")
    return int(value)  # type: ignore[call-overload]


def _blocks(n_ranks: int, per: int) -> list[tuple[int, int]]:
    return [(r, min(r + per, n_ranks)) for r in range(0, n_ranks, per)]


def _fail(head: TraceHeader, message: str, record: int | None = None) -> TraceFormatError:
    return TraceFormatError(message, file=str(head.path), record=record)


def _per_rank(values: IntArray, local_ptr: IntArray) -> IntArray:
    """Sums of ``values`` (one per operation of a run of ranks) over each rank's operations."""
    csum = np.zeros(values.shape[0] + 1, dtype=np.int64)
    np.cumsum(values, out=csum[1:])
    return csum[local_ptr[1:]] - csum[local_ptr[:-1]]


def _scan(
    head: TraceHeader, chunks: list[tuple[int, int]], rank_ptr: IntArray, comm_sizes: IntArray
) -> tuple[npt.NDArray[np.bool_], IntArray, int, IntArray]:
    """First pass: nonblocking-collective requests, user wait-list entries, wide rows.

    Reads the trace in ``chunks`` of ranks. Returns ``(is_nbc, kept, n_nbc, wide)``: per
    trace request whether a nonblocking collective posts it; per rank how many wait-list
    entries its user wait-alls keep; the number of nonblocking collective calls; per rank
    the estimated rows of its wide collectives (:func:`_op_weights`), which cut the blocks.
    """
    n_req = head.n_requests
    is_nbc = np.zeros(n_req, dtype=np.bool_)
    n_wait_reqs = int(head.datasets["wait_reqs"].shape[0])
    kept = np.zeros(head.n_ranks, dtype=np.int64)
    wide = np.zeros(head.n_ranks, dtype=np.int64)
    n_nbc = 0
    for r0, r1 in chunks:
        a, z = int(rank_ptr[r0]), int(rank_ptr[r1])
        local_ptr = rank_ptr[r0 : r1 + 1] - a
        kind = read_column(head, "kind", a, z)
        nbc = read_column(head, "nonblocking", a, z) & (kind >= OpKind.BARRIER)
        is_wa = kind == OpKind.WAITALL
        wa = np.flatnonzero(is_wa)
        count = read_column(head, "count", a, z)
        bad = np.flatnonzero(count[wa] < 0)
        if bad.size:
            raise _fail(head, f"count={int(count[wa[bad[0]]])} is negative", a + int(wa[bad[0]]))
        kept[r0:r1] = _per_rank(np.where(is_wa, count, 0), local_ptr)
        heavy = np.isin(kind, _WIDE_KINDS)
        comm = read_column(head, "comm", a, z) if heavy.any() else None
        wide[r0:r1] = _per_rank(_op_weights(kind, count, comm, comm_sizes), local_ptr)
        if nbc.any():
            ids = read_column(head, "request", a, z)[nbc]
            bad = np.flatnonzero((ids < 0) | (ids >= n_req))
            if bad.size:
                raise _fail(head, f"request ids of posts must lie in 0..{n_req - 1}")
            is_nbc[ids] = True
            n_nbc += int(nbc.sum())
    if n_nbc:  # waits on them are dropped: count the entries the user wait-alls keep
        for r0, r1 in chunks:
            a, z = int(rank_ptr[r0]), int(rank_ptr[r1])
            kind = read_column(head, "kind", a, z)
            wa = np.flatnonzero(kind == OpKind.WAITALL)
            if not wa.size:
                continue
            start = read_column(head, "request", a, z)[wa]
            count = read_column(head, "count", a, z)[wa]
            lo, hi = _pool_range(head, start, count, n_wait_reqs, a + wa, "WAITALL", "wait_reqs")
            pool = read_column(head, "wait_reqs", lo, hi)
            pos, _ = segments(start - lo, count)
            ids = pool[pos]
            bad = np.flatnonzero((ids < 0) | (ids >= n_req))
            if bad.size:
                raise _fail(head, f"wait_reqs ids must lie in 0..{n_req - 1}")
            keep = np.zeros(ids.shape[0] + 1, dtype=np.int64)
            np.cumsum(~is_nbc[ids], out=keep[1:])
            ends = np.cumsum(count)
            per_op = np.zeros(z - a, dtype=np.int64)
            per_op[wa] = keep[ends] - keep[ends - count]
            kept[r0:r1] = _per_rank(per_op, rank_ptr[r0 : r1 + 1] - a)
    return is_nbc, kept, n_nbc, wide


def _op_weights(
    kind: npt.NDArray[np.int8],
    count: IntArray,
    comm: npt.NDArray[np.integer[Any]] | None,
    comm_sizes: IntArray,
) -> IntArray:
    """Estimated program rows of each trace operation beyond its own, for cutting blocks.

    A v-collective's count list's length (an all-to-all-v of ``p`` ranks posts up to
    ``2 p`` messages) and, for the collectives whose schedules grow with the
    communicator (all-to-all, all-gather, gather, scatter), the communicator's size;
    0 for other operations. Only an estimate: the blocks it cuts lower to the same
    program whatever they are.
    """
    w = np.zeros(kind.shape[0], dtype=np.int64)
    v = np.isin(kind, _V_KINDS)
    w[v] = np.clip(count[v], 0, _INT32_MAX)
    if comm is not None and comm_sizes.size:
        wide = np.isin(kind, _WIDE_KINDS) & ~v
        w[wide] = comm_sizes[np.clip(comm[wide], 0, comm_sizes.shape[0] - 1)]
    return w


def _weighted_blocks(ops: IntArray, wide: IntArray) -> list[tuple[int, int]]:
    """Consecutive ranks cut into blocks by their trace operations and wide-collective rows.

    A block holds about :data:`DEFAULT_BLOCK_OPS` trace operations, fewer on traces of
    less than :data:`MIN_BLOCKS` such blocks (at least :data:`MIN_BLOCK_OPS`), and
    about :data:`WIDE_BLOCK_ROWS` estimated rows of wide collectives
    (:func:`_op_weights`); a rank heavier than that is a block of its own.
    """
    n_ranks = ops.shape[0]
    budget = min(DEFAULT_BLOCK_OPS, max(MIN_BLOCK_OPS, int(ops.sum()) // MIN_BLOCKS))
    cum_ops, cum_wide = np.cumsum(ops), np.cumsum(wide)
    blocks: list[tuple[int, int]] = []
    r0 = 0
    while r0 < n_ranks:
        base_ops = int(cum_ops[r0 - 1]) if r0 else 0
        base_wide = int(cum_wide[r0 - 1]) if r0 else 0
        r1 = min(
            int(np.searchsorted(cum_ops, base_ops + budget, side="right")),
            int(np.searchsorted(cum_wide, base_wide + WIDE_BLOCK_ROWS, side="right")),
        )
        r1 = min(max(r1, r0 + 1), n_ranks)
        blocks.append((r0, r1))
        r0 = r1
    return blocks


def _pool_range(
    head: TraceHeader,
    start: IntArray,
    count: IntArray,
    size: int,
    ops: IntArray,
    what: str,
    pool: str,
) -> tuple[int, int]:
    """The range of pool ``pool`` (of ``size`` entries) the ranges ``start, count`` cover."""
    if not start.size:
        return 0, 0
    bad = np.flatnonzero((start < 0) | (count < 0) | (start + count > size))
    if bad.size:
        raise _fail(head, f"{what} range outside {pool}", int(ops[bad[0]]))
    return int(start.min()), int((start + count).max())


class _Bits:
    """A set of request ids, one bit per id (1/8 byte per trace request)."""

    def __init__(self, n: int) -> None:
        self.words = np.zeros((n + 7) // 8, dtype=np.uint8)
        self.count = 0

    def has_any(self, ids: IntArray) -> bool:
        """Whether any of ``ids`` is in the set."""
        return bool(np.any((self.words[ids >> 3] >> (ids & 7)) & 1))

    def add(self, ids: IntArray) -> bool:
        """Add ``ids`` (none in the set yet); False if one of them repeats."""
        np.bitwise_or.at(self.words, ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))
        self.count += int(ids.size)
        return int(np.bitwise_count(self.words).sum()) == self.count


@dataclass
class _Requests:
    """Global request checks of :meth:`Trace._validate_requests`, block by block."""

    n_requests: int
    posted: _Bits
    completed: _Bits

    @classmethod
    def new(cls, n_requests: int) -> _Requests:
        return cls(n_requests, _Bits(n_requests), _Bits(n_requests))

    def check(self, head: TraceHeader, block: Trace, a: int, done_pool: IntArray) -> None:
        n_req = self.n_requests
        kind = block.kind
        posts = (kind == OpKind.ISEND) | (kind == OpKind.IRECV) | block.nonblocking
        ids = block.request[posts]
        if ids.size and (ids.min() < 0 or ids.max() >= n_req):
            raise _fail(head, f"request ids of posts must lie in 0..{n_req - 1}")
        # no id posted before, and as many set now as posted: no repeat (np.unique took
        # 60 s of the issue-15 trace's 96)
        if self.posted.has_any(ids) or not self.posted.add(ids):
            raise _fail(head, "a request id is posted twice")
        others = ~posts & (kind != OpKind.WAIT) & (kind != OpKind.WAITALL)
        bad = np.flatnonzero(others & (block.request != -1))
        if bad.size:
            raise _fail(
                head, "request must be -1 for operations that neither post nor wait", a + bad[0]
            )
        waits = block.request[kind == OpKind.WAIT]
        if waits.size and (waits.min() < 0 or waits.max() >= n_req):
            raise _fail(head, f"WAIT request ids must lie in 0..{n_req - 1}")
        if done_pool.size and (done_pool.min() < 0 or done_pool.max() >= n_req):
            raise _fail(head, f"wait_reqs ids must lie in 0..{n_req - 1}")
        done = np.concatenate([waits, done_pool])
        if self.completed.has_any(done) or not self.completed.add(done):
            raise _fail(head, "a request is completed more than once")

    def finish(self, head: TraceHeader) -> None:
        if self.posted.count != self.n_requests:
            raise _fail(
                head, f"n_requests={self.n_requests} but {self.posted.count} requests are posted"
            )


def _read_block(
    head: TraceHeader,
    r0: int,
    r1: int,
    rank_ptr: IntArray,
    comm_ptr: IntArray,
    comm_members: npt.NDArray[np.int32],
) -> tuple[Trace, IntArray]:
    """The trace of ranks ``[r0, r1)`` (other ranks empty; pools cut to the block's ranges).

    Returns the block trace (WAITALL ``request`` and ``vcounts_offset`` rebased to its
    pools) and the wait-list pool entries its wait-alls list.
    """
    a, z = int(rank_ptr[r0]), int(rank_ptr[r1])
    cols = {name: read_column(head, name, a, z) for name in OP_COLUMNS}
    kind = cols["kind"]
    wa = np.flatnonzero(kind == OpKind.WAITALL)
    start, count = cols["request"][wa], cols["count"][wa]
    n_wr = int(head.datasets["wait_reqs"].shape[0])
    lo, hi = _pool_range(head, start, count, n_wr, a + wa, "WAITALL", "wait_reqs")
    wait_reqs = read_column(head, "wait_reqs", lo, hi)
    cols["request"][wa] -= lo
    v = np.flatnonzero(np.isin(kind, _V_KINDS))
    vo, vc = cols["vcounts_offset"][v], cols["count"][v]
    n_vc = int(head.datasets["vcounts"].shape[0])
    vlo, vhi = _pool_range(head, vo, vc, n_vc, a + v, "v-collective", "vcounts")
    vcounts = read_column(head, "vcounts", vlo, vhi)
    cols["vcounts_offset"][v] -= vlo
    block_ptr = np.clip(rank_ptr - a, 0, z - a)
    trace = Trace(
        format=head.format,
        source=str(head.path),
        n_ranks=head.n_ranks,
        rank_ptr=block_ptr,
        wait_reqs=wait_reqs,
        vcounts=vcounts,
        comm_ptr=comm_ptr,
        comm_members=comm_members,
        call_names=head.call_names,
        n_requests=head.n_requests,
        unsupported=head.unsupported,
        notes=head.notes,
        **cols,
    )
    pos, _ = segments(start - lo, count)
    return trace, wait_reqs[pos]


def _validate_block(
    head: TraceHeader, block: Trace, a: int, requests: _Requests, done_pool: IntArray
) -> None:
    """:meth:`Trace.validate` of a block, operation indices global, requests across blocks."""

    def fail(msg: str, record: int | None = None) -> None:
        raise _fail(head, msg, None if record is None else a + record)

    block._validate_values(fail)
    block._validate_pools(fail)
    requests.check(head, block, a, done_pool)


@dataclass
class _Totals:
    """Running totals carried from block to block."""

    rows: int
    requests: int
    fresh_wait: int
    user_wait: int
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, set[str]] = field(default_factory=dict)
    reduce_rows: list[IntArray] = field(default_factory=list)
    reduce_bytes: list[npt.NDArray[np.float64]] = field(default_factory=list)
    #: collective templates built by this lowering's blocks (gone with the lowering)
    templates: dict[tuple[object, ...], Any] = field(default_factory=dict)


def _lower_block(
    block: Trace,
    b_range: tuple[int, int],
    is_nbc: npt.NDArray[np.bool_],
    n_user_wait: int,
    totals: _Totals,
    opts: LoweringOptions,
    writer: ProgramFileWriter,
    prog_rank_ptr: IntArray,
) -> None:
    """Lower one block (as :func:`lower_trace`), check it and append it to ``writer``."""
    r0, r1 = b_range
    kind = block.kind
    n = block.n_ops
    user_wl, wa_off, wa_count = user_wait_lists(block, is_nbc)  # this block's, from 0
    wa = np.flatnonzero(kind == OpKind.WAITALL)
    coll_ops = np.flatnonzero(kind >= OpKind.BARRIER)
    with _collector_paused():
        expanded, used, counted = _expand_collectives(block, coll_ops, opts, totals.templates)
    tmpl = expanded.templates
    n_user = user_wl.shape[0]
    plan, rows, req_end, wl_end = plan_layout(
        block, is_nbc, tmpl, expanded.tid, totals.requests, n_user
    )
    fresh = wl_end - n_user
    if max(req_end, n_user_wait + totals.fresh_wait + fresh) > _INT32_MAX:
        raise ProgramError(
            f"trace {block.source} lowers to at least {req_end} requests or "
            f"{n_user_wait + totals.fresh_wait + fresh} wait-list entries (by rank {r1 - 1}): "
            f"the engine's limit is {_INT32_MAX}"
        )
    wait_list = np.empty(wl_end, dtype=np.int64)
    wait_list[:n_user] = user_wl
    del user_wl
    coll = (expanded.tid, expanded.comm, expanded.tag, expanded.op_s, wa_off, wa_count)
    rates = (opts.compute_scale, opts.reduce_rate_Bps, COLL_COMM_BASE)
    ops, value = write_rows(block, plan, rows, coll, tmpl, rates, wait_list)
    row_ptr = plan[0]
    del plan
    # the block's program, checked with its local wait list (other ranks empty)
    local_ptr = row_ptr[block.rank_ptr]
    program = Program(
        n_ranks=block.n_ranks,
        rank_ptr=local_ptr,
        ops=ops,
        nbytes=value,
        seconds=value.view(np.float64),
        wait_list=wait_list,
        n_requests=req_end,
        n_marks=0,
        call_names=tuple(block.call_names),
    )
    program.validate()
    # wait-all rows to the global wait list: user lists after the earlier blocks' user
    # entries, fresh lists after all user entries and the earlier blocks' fresh entries
    is_wa = ops[:, COL_KIND] == OP_WAITALL
    user_rows = row_ptr[wa]
    is_wa[user_rows] = False
    ops[user_rows, COL_REQ] += totals.user_wait
    ops[is_wa, COL_REQ] += n_user_wait + totals.fresh_wait - n_user
    writer.append_rows(ops, value)
    writer.append_row_ptr(row_ptr[:n] + totals.rows)
    writer.write_wait_list(totals.user_wait, wait_list[:n_user])
    writer.write_wait_list(n_user_wait + totals.fresh_wait, wait_list[n_user:])
    prog_rank_ptr[r0 : r1 + 1] = local_ptr[r0 : r1 + 1] + totals.rows
    red_rows, red_bytes = combine_rows(
        row_ptr, coll_ops, expanded.tid, [t.combine for t in tmpl], template_lengths(tmpl)[0]
    )
    totals.reduce_rows.append(red_rows + totals.rows)
    totals.reduce_bytes.append(red_bytes)
    for name, c in counted.items():
        totals.collectives[name] = totals.collectives.get(name, 0) + c
    for name, algs in used.items():
        totals.algorithms.setdefault(name, set()).update(algs)
    totals.rows += rows
    totals.requests = req_end
    if _templates_bytes(totals.templates) > TEMPLATE_CACHE_BYTES:
        totals.templates.clear()
    totals.fresh_wait += fresh
    totals.user_wait += n_user


def _templates_bytes(templates: dict[tuple[object, ...], Any]) -> int:
    """Bytes the kept templates hold (their arrays and their keys' count lists)."""
    total = 0
    for key, t in templates.items():
        sizes = key[5]
        total += t.rows.nbytes + t.combine.nbytes + t.wait_list.nbytes
        total += 36 * len(getattr(sizes, "vcounts", ()))  # a tuple slot and an int each
    return total


def lower_trace_blocks(
    h5_path: str | Path,
    options: LoweringOptions | None,
    out_path: str | Path,
    ranks_per_block: int | None = None,
    on_progress: Callable[[float], None] | None = None,
) -> BlockLowering:
    """Lower the trace file ``h5_path`` block of ranks by block into the program file ``out_path``.

    The program file holds what :func:`~mpiuq.simulator.lowering.lower.lower_trace` of the
    whole trace returns, byte for byte (see the module docstring).

    Parameters
    ----------
    h5_path
        An mpiuq HDF5 trace file (:func:`~mpiuq.simulator.trace.cache.store.save_trace`).
    options
        Reduction rate, compute scale and collective algorithms (None: defaults).
    out_path
        Program file directory to write (``NAME.mpiuqprog``; replaced if present).
    ranks_per_block
        Consecutive ranks lowered together (>= 1); None: about
        :data:`DEFAULT_BLOCK_OPS` trace operations per block, fewer on traces of less
        than :data:`MIN_BLOCKS` such blocks (at least :data:`MIN_BLOCK_OPS`), and about
        :data:`WIDE_BLOCK_ROWS` rows of wide collectives.
    on_progress
        Called after each block with the fraction of trace operations lowered so far.

    Raises
    ------
    SettingError
        If ``ranks_per_block`` is not a whole number >= 1.
    TraceFormatError
        If the file is not a valid trace file (naming it, and the operation at fault).
    UnreplayableTraceError, CollectiveError, ProgramError
        As :func:`~mpiuq.simulator.lowering.lower.lower_trace`, naming the trace file.
    """
    opts = LoweringOptions() if options is None else options
    if ranks_per_block is not None:
        _ranks_per_block(ranks_per_block, 1, 1)  # before the file is opened
    with open_trace_h5(h5_path) as head:
        rank_ptr = read_column(head, "rank_ptr", 0, head.n_ranks + 1)
        n = head.n_ops
        if rank_ptr[0] != 0 or rank_ptr[-1] != n or np.any(np.diff(rank_ptr) < 0):
            raise _fail(
                head,
                f"rank_ptr must be non-decreasing from 0 to {n} with {head.n_ranks + 1} entries",
            )
        comm_ptr = read_column(head, "comm_ptr", 0, int(head.datasets["comm_ptr"].shape[0]))
        comm_members = read_column(
            head, "comm_members", 0, int(head.datasets["comm_members"].shape[0])
        )

        def fail(msg: str, record: int | None = None) -> None:
            raise _fail(head, msg, record)

        per = _ranks_per_block(ranks_per_block, head.n_ranks, n)
        chunks = _blocks(head.n_ranks, per)
        comm_sizes = np.diff(comm_ptr).astype(np.int64)
        is_nbc, kept_per_rank, n_nbc, wide = _scan(head, chunks, rank_ptr, comm_sizes)
        blocks = (
            chunks if ranks_per_block is not None else _weighted_blocks(np.diff(rank_ptr), wide)
        )
        if ranks_per_block is None and blocks:
            per = max(r1 - r0 for r0, r1 in blocks)
        kept = np.array([int(kept_per_rank[r0:r1].sum()) for r0, r1 in blocks], dtype=np.int64)
        n_user_wait = int(kept.sum())
        empty = np.diff(rank_ptr) == 0
        requests = _Requests.new(head.n_requests)
        totals = _Totals(rows=0, requests=head.n_requests, fresh_wait=0, user_wait=0)
        prog_rank_ptr = np.zeros(head.n_ranks + 1, dtype=np.int64)
        facts = TraceFacts(head.source, head.format, n, dict(head.unsupported), head.notes)
        with ProgramFileWriter(
            out_path, n_ranks=head.n_ranks, call_names=head.call_names, facts=facts
        ) as writer:
            for b, (r0, r1) in enumerate(blocks):
                block, done_pool = _read_block(head, r0, r1, rank_ptr, comm_ptr, comm_members)
                a = int(rank_ptr[r0])
                _validate_block(head, block, a, requests, done_pool)
                if b == 0:
                    block._validate_comms(fail)
                _check_replayable(block, empty, op_offset=a)
                try:
                    _lower_block(
                        block, (r0, r1), is_nbc, n_user_wait, totals, opts, writer, prog_rank_ptr
                    )
                except ProgramError as exc:  # name the trace file, keep the rank and operation
                    named = ProgramError(f"trace file {head.path}: {exc}")
                    named.rank, named.op_index = exc.rank, exc.op_index
                    raise named from exc
                except (CollectiveError, UnreplayableTraceError) as exc:  # block-local indices
                    raise type(exc)(
                        f"{exc} (trace file {head.path}, block of ranks {r0}..{r1 - 1}: its "
                        f"operation indices count from trace operation {a})"
                    ) from exc
                if totals.user_wait != int(kept[: b + 1].sum()):  # pragma: no cover - invariant
                    raise RuntimeError("block lowering: user wait-list counts disagree")
                del block, done_pool
                if on_progress is not None:
                    on_progress(float(rank_ptr[r1]) / max(n, 1))
            requests.finish(head)
            writer.append_row_ptr(np.array([totals.rows], dtype=np.int64))
            path = writer.finish(
                rank_ptr=prog_rank_ptr,
                n_requests=totals.requests,
                n_wait=n_user_wait + totals.fresh_wait,
                collectives={
                    k: totals.collectives[k]
                    for k in COLLECTIVE_NAMES.values()
                    if k in totals.collectives
                },
                algorithms={k: sorted(v) for k, v in totals.algorithms.items()},
                nonblocking_collectives=n_nbc,
                reduce_rows=np.concatenate([np.zeros(0, np.int64), *totals.reduce_rows]),
                reduce_bytes=np.concatenate([np.zeros(0), *totals.reduce_bytes]),
            )
    return BlockLowering(
        path=path,
        n_blocks=len(blocks),
        ranks_per_block=per,
        n_ops=totals.rows,
        n_requests=totals.requests,
        n_wait=n_user_wait + totals.fresh_wait,
        collectives=dict(totals.collectives),
    )
