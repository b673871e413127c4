"""How a trace file is cut into blocks of consecutive ranks (the block lowering's first pass).

:func:`scan` reads a few columns of the whole file, a chunk of ranks at a time: which
trace requests nonblocking collectives post, how many wait-list entries each rank's
user wait-alls keep, and the estimated rows of each rank's wide collectives;
:func:`weighted_blocks` cuts the ranks by their trace operations and those rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.lowering.rows import segments
from mpiuq.simulator.trace.cache.h5_reader import TraceHeader, read_column
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import V_KINDS, OpKind

__all__ = [
    "DEFAULT_BLOCK_OPS",
    "MIN_BLOCKS",
    "MIN_BLOCK_OPS",
    "WIDE_BLOCK_ROWS",
    "even_blocks",
    "file_error",
    "pool_range",
    "ranks_in_block",
    "scan",
    "weighted_blocks",
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


def ranks_in_block(value: object, n_ranks: int, n_ops: int) -> int:
    """Ranks per block: ``value`` checked (a whole number >= 1), or for ``None`` about
    :data:`DEFAULT_BLOCK_OPS` trace operations' worth (fewer on small traces)."""
    if value is None:
        per_rank = max(1.0, n_ops / n_ranks)
        block_ops = min(DEFAULT_BLOCK_OPS, max(MIN_BLOCK_OPS, n_ops // MIN_BLOCKS))
        return max(1, min(n_ranks, int(block_ops // per_rank)))
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 1
    if not ok:
        raise SettingError(f"ranks_per_block={value!r} is invalid: expected a whole number >= 1")
    return int(value)  # type: ignore[call-overload]


def even_blocks(n_ranks: int, per: int) -> list[tuple[int, int]]:
    """``[r0, r1)`` ranges of ``per`` consecutive ranks (the last may be shorter)."""
    return [(r, min(r + per, n_ranks)) for r in range(0, n_ranks, per)]


def file_error(head: TraceHeader, message: str, record: int | None = None) -> TraceFormatError:
    """The error of a bad trace file, naming it (and the operation ``record``)."""
    return TraceFormatError(message, file=str(head.path), record=record)


def _per_rank(values: IntArray, local_ptr: IntArray) -> IntArray:
    """Sums of ``values`` (one per operation of a run of ranks) over each rank's operations."""
    csum = np.zeros(values.shape[0] + 1, dtype=np.int64)
    np.cumsum(values, out=csum[1:])
    return csum[local_ptr[1:]] - csum[local_ptr[:-1]]


def scan(
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
        is_wa = (kind == OpKind.WAITALL) | (kind == OpKind.WAITANY)
        wa = np.flatnonzero(is_wa)
        count = read_column(head, "count", a, z)
        bad = np.flatnonzero(count[wa] < 0)
        if bad.size:
            raise file_error(
                head, f"count={int(count[wa[bad[0]]])} is negative", a + int(wa[bad[0]])
            )
        kept[r0:r1] = _per_rank(np.where(is_wa, count, 0), local_ptr)
        heavy = np.isin(kind, _WIDE_KINDS)
        comm = read_column(head, "comm", a, z) if heavy.any() else None
        wide[r0:r1] = _per_rank(_op_weights(kind, count, comm, comm_sizes), local_ptr)
        if nbc.any():
            ids = read_column(head, "request", a, z)[nbc]
            bad = np.flatnonzero((ids < 0) | (ids >= n_req))
            if bad.size:
                raise file_error(head, f"request ids of posts must lie in 0..{n_req - 1}")
            is_nbc[ids] = True
            n_nbc += int(nbc.sum())
    if n_nbc:  # waits on them are dropped: count the entries the user wait-alls keep
        for r0, r1 in chunks:
            a, z = int(rank_ptr[r0]), int(rank_ptr[r1])
            kind = read_column(head, "kind", a, z)
            wa = np.flatnonzero((kind == OpKind.WAITALL) | (kind == OpKind.WAITANY))
            if not wa.size:
                continue
            start = read_column(head, "request", a, z)[wa]
            count = read_column(head, "count", a, z)[wa]
            lo, hi = pool_range(
                head, start, count, n_wait_reqs, a + wa, "WAITALL/WAITANY", "wait_reqs"
            )
            pool = read_column(head, "wait_reqs", lo, hi)
            pos, _ = segments(start - lo, count)
            ids = pool[pos]
            bad = np.flatnonzero((ids < 0) | (ids >= n_req))
            if bad.size:
                raise file_error(head, f"wait_reqs ids must lie in 0..{n_req - 1}")
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


def weighted_blocks(ops: IntArray, wide: IntArray) -> list[tuple[int, int]]:
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


def pool_range(
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
        raise file_error(head, f"{what} range outside {pool}", int(ops[bad[0]]))
    return int(start.min()), int((start + count).max())
