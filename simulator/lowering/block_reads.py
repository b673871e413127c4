"""A block of ranks read from a trace file and checked as the whole trace would be.

:func:`read_block` reads the columns of a run of consecutive ranks (the others
empty, the pools cut to the block's ranges); :func:`validate_block` checks it as
:meth:`~mpiuq.simulator.trace.ir.Trace.validate` checks a whole trace, operation
indices global, with the request checks carried across blocks (:class:`BlockRequests`:
one bit per trace request posted, one per completed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.lowering.block_cuts import file_error, pool_range
from mpiuq.simulator.lowering.rows import segments
from mpiuq.simulator.trace.cache.h5_reader import TraceHeader, read_column
from mpiuq.simulator.trace.ir import OP_COLUMNS, V_KINDS, OpKind, Trace

__all__ = ["BlockRequests", "read_block", "validate_block"]

IntArray = npt.NDArray[np.int64]
_V_KINDS = np.array(sorted(int(k) for k in V_KINDS), dtype=np.int8)


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
class BlockRequests:
    """Global request checks of :meth:`Trace._validate_requests`, block by block."""

    n_requests: int
    posted: _Bits
    completed: _Bits

    @classmethod
    def new(cls, n_requests: int) -> BlockRequests:
        return cls(n_requests, _Bits(n_requests), _Bits(n_requests))

    def check(self, head: TraceHeader, block: Trace, a: int, done_pool: IntArray) -> None:
        n_req = self.n_requests
        kind = block.kind
        posts = (kind == OpKind.ISEND) | (kind == OpKind.IRECV) | block.nonblocking
        ids = block.request[posts]
        if ids.size and (ids.min() < 0 or ids.max() >= n_req):
            raise file_error(head, f"request ids of posts must lie in 0..{n_req - 1}")
        # no id posted before, and as many set now as posted: no repeat (np.unique took
        # 60 s of the issue-15 trace's 96)
        if self.posted.has_any(ids) or not self.posted.add(ids):
            raise file_error(head, "a request id is posted twice")
        others = ~posts & (kind != OpKind.WAIT) & (kind != OpKind.WAITALL)
        others &= kind != OpKind.WAITANY
        bad = np.flatnonzero(others & (block.request != -1))
        if bad.size:
            raise file_error(
                head, "request must be -1 for operations that neither post nor wait", a + bad[0]
            )
        waits = block.request[kind == OpKind.WAIT]
        if waits.size and (waits.min() < 0 or waits.max() >= n_req):
            raise file_error(head, f"WAIT request ids must lie in 0..{n_req - 1}")
        if done_pool.size and (done_pool.min() < 0 or done_pool.max() >= n_req):
            raise file_error(head, f"wait_reqs ids must lie in 0..{n_req - 1}")
        done = np.concatenate([waits, done_pool])
        if self.completed.has_any(done) or not self.completed.add(done):
            raise file_error(head, "a request is completed more than once")

    def finish(self, head: TraceHeader) -> None:
        if self.posted.count != self.n_requests:
            raise file_error(
                head, f"n_requests={self.n_requests} but {self.posted.count} requests are posted"
            )


def read_block(
    head: TraceHeader,
    r0: int,
    r1: int,
    rank_ptr: IntArray,
    comm_ptr: IntArray,
    comm_members: npt.NDArray[np.int32],
) -> tuple[Trace, IntArray]:
    """The trace of ranks ``[r0, r1)`` (other ranks empty; pools cut to the block's ranges).

    Returns the block trace (WAITALL/WAITANY ``request`` and ``vcounts_offset`` rebased to
    its pools) and the wait-list pool entries its wait-alls and wait-anys list (each once).
    """
    a, z = int(rank_ptr[r0]), int(rank_ptr[r1])
    cols = {name: read_column(head, name, a, z) for name in OP_COLUMNS}
    kind = cols["kind"]
    is_any = kind == OpKind.WAITANY
    wa = np.flatnonzero((kind == OpKind.WAITALL) | is_any)
    start, count = cols["request"][wa], cols["count"][wa]
    n_wr = int(head.datasets["wait_reqs"].shape[0])
    lo, hi = pool_range(head, start, count, n_wr, a + wa, "WAITALL/WAITANY", "wait_reqs")
    wait_reqs = read_column(head, "wait_reqs", lo, hi)
    cols["request"][wa] -= lo
    v = np.flatnonzero(np.isin(kind, _V_KINDS))
    vo, vc = cols["vcounts_offset"][v], cols["count"][v]
    n_vc = int(head.datasets["vcounts"].shape[0])
    vlo, vhi = pool_range(head, vo, vc, n_vc, a + v, "v-collective", "vcounts")
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
    if is_any.any():  # the lists of one group's wait-anys overlap: each entry once
        pos = np.unique(pos)
    return trace, wait_reqs[pos]


def validate_block(
    head: TraceHeader, block: Trace, a: int, requests: BlockRequests, done_pool: IntArray
) -> None:
    """:meth:`Trace.validate` of a block, operation indices global, requests across blocks."""

    def fail(msg: str, record: int | None = None) -> None:
        raise file_error(head, msg, None if record is None else a + record)

    block._validate_values(fail)
    block._validate_pools(fail)
    requests.check(head, block, a, done_pool)
