"""The compact, format-independent representation of an MPI trace.

One :class:`Trace` holds every rank's operations as flat columns (structure of
arrays); the operations of rank ``r`` are ``[rank_ptr[r], rank_ptr[r + 1])``.
Peers and roots are MPI_COMM_WORLD ranks; communicators are global ids into a
CSR table of member world ranks (id 0 is MPI_COMM_WORLD). Sizes are bytes,
durations seconds. The discrete-event engine consumes this after lowering
(collectives expanded into point-to-point algorithms, blocking calls turned into
isend/irecv + wait).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

import numpy as np

from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.limits import MAX_MESSAGE_BYTES, MAX_OP_SECONDS, MAX_RANKS
from mpiuq.simulator.trace.summary import TraceSummary

__all__ = [
    "ANY_SOURCE",
    "ANY_TAG",
    "COLLECTIVE_KINDS",
    "NO_PEER",
    "P2P_KINDS",
    "UNKNOWN_PEER",
    "V_KINDS",
    "OpKind",
    "RankOps",
    "Trace",
    "TraceSummary",
]


class OpKind(IntEnum):
    """Kind of one operation (stored as int8)."""

    COMPUTE = 0
    SEND = 1
    RECV = 2
    ISEND = 3
    IRECV = 4
    WAIT = 5
    WAITALL = 6
    SENDRECV = 7
    WAITANY = 8
    BARRIER = 10
    BCAST = 11
    REDUCE = 12
    ALLREDUCE = 13
    GATHER = 14
    GATHERV = 15
    SCATTER = 16
    SCATTERV = 17
    ALLGATHER = 18
    ALLGATHERV = 19
    ALLTOALL = 20
    ALLTOALLV = 21
    REDUCE_SCATTER = 22
    SCAN = 23
    EXSCAN = 24


ANY_SOURCE = -1
ANY_TAG = -1
NO_PEER = -2
#: Peer or communicator member that the trace cannot name because the ranks that
#: would identify it were not recorded (single-rank DUMPI files). Only partial
#: traces contain it; they cannot be replayed as a whole.
UNKNOWN_PEER = -3

P2P_KINDS = frozenset({OpKind.SEND, OpKind.RECV, OpKind.ISEND, OpKind.IRECV, OpKind.SENDRECV})
COLLECTIVE_KINDS = frozenset(k for k in OpKind if k >= OpKind.BARRIER)
V_KINDS = frozenset(
    {OpKind.GATHERV, OpKind.SCATTERV, OpKind.ALLGATHERV, OpKind.ALLTOALLV, OpKind.REDUCE_SCATTER}
)
ROOTED_KINDS = frozenset(
    {OpKind.BCAST, OpKind.REDUCE, OpKind.GATHER, OpKind.GATHERV, OpKind.SCATTER, OpKind.SCATTERV}
)
SEND_LIKE = frozenset({OpKind.SEND, OpKind.ISEND, OpKind.SENDRECV})

#: name -> dtype of every per-operation column, in storage order.
OP_COLUMNS: dict[str, np.dtype] = {
    "kind": np.dtype(np.int8),
    "call": np.dtype(np.int16),
    "peer": np.dtype(np.int32),
    "peer2": np.dtype(np.int32),
    "tag": np.dtype(np.int32),
    "tag2": np.dtype(np.int32),
    "comm": np.dtype(np.int32),
    "bytes_send": np.dtype(np.int64),
    "bytes_recv": np.dtype(np.int64),
    "request": np.dtype(np.int64),
    "count": np.dtype(np.int64),
    "vcounts_offset": np.dtype(np.int64),
    "seconds": np.dtype(np.float64),
    "nonblocking": np.dtype(np.bool_),
}
#: name -> dtype of the auxiliary (not per-operation) arrays.
AUX_COLUMNS: dict[str, np.dtype] = {
    "rank_ptr": np.dtype(np.int64),
    "wait_reqs": np.dtype(np.int64),
    "vcounts": np.dtype(np.int64),
    "comm_ptr": np.dtype(np.int64),
    "comm_members": np.dtype(np.int32),
}


class _Fail(Protocol):
    def __call__(self, msg: str, record: int | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class RankOps:
    """Views of one rank's operation columns (see :class:`Trace` for their meaning)."""

    rank: int
    kind: np.ndarray
    call: np.ndarray
    peer: np.ndarray
    peer2: np.ndarray
    tag: np.ndarray
    tag2: np.ndarray
    comm: np.ndarray
    bytes_send: np.ndarray
    bytes_recv: np.ndarray
    request: np.ndarray
    count: np.ndarray
    vcounts_offset: np.ndarray
    seconds: np.ndarray
    nonblocking: np.ndarray

    def __len__(self) -> int:
        return int(self.kind.shape[0])


@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    """Every rank's MPI operations as flat columns.

    Attributes
    ----------
    format : str
        ``"dumpi"``, ``"otf2"`` or ``"ti"``.
    source : str
        Path the trace was read from.
    n_ranks : int
        Size of MPI_COMM_WORLD.
    rank_ptr : ndarray of int64, shape (n_ranks + 1,)
        Operations of rank ``r`` are ``[rank_ptr[r], rank_ptr[r + 1])``.
    kind : ndarray of int8
        :class:`OpKind` of each operation.
    call : ndarray of int16
        Index into ``call_names``: the MPI function the operation came from.
    peer : ndarray of int32
        World rank of the partner (destination of send-like, source of receive-like
        operations, ``ANY_SOURCE`` allowed), root world rank of rooted collectives,
        ``NO_PEER`` otherwise; SENDRECV: destination.
    peer2 : ndarray of int32
        SENDRECV: source world rank; ``NO_PEER`` otherwise.
    tag, tag2 : ndarray of int32
        Message tag (``ANY_TAG`` allowed); ``tag2`` is the receive tag of SENDRECV.
    comm : ndarray of int32
        Global communicator id (0 = MPI_COMM_WORLD).
    bytes_send, bytes_recv : ndarray of int64
        Bytes sent / received per peer message. Collectives: per-rank buffer size
        (count x type size); all-to-all: bytes per destination / source.
    request : ndarray of int64
        ISEND/IRECV/nonblocking collectives: request id, unique in the trace;
        WAIT: the id it completes; WAITALL, WAITANY: offset into ``wait_reqs``; -1 otherwise.
    count : ndarray of int64
        WAITALL: number of ids in ``wait_reqs``; WAITANY: number of ids it chooses among
        (it completes one of them not completed yet, the first to complete); v-collectives:
        number of ``vcounts``. The ranges of the WAITANY operations of one group of
        requests overlap (each is a prefix of the group's list, which grows as requests
        join it); every other range is disjoint from the rest.
    vcounts_offset : ndarray of int64
        v-collectives: offset into ``vcounts`` (bytes per communicator rank;
        ALLTOALLV: send then receive bytes, ``2 * comm_size`` entries); -1 otherwise.
    seconds : ndarray of float64
        COMPUTE: duration in seconds; reductions: operator cost in seconds when the
        trace gives flops, else 0.
    nonblocking : ndarray of bool
        Collective issued as nonblocking, completed by a later WAIT/WAITALL.
    wait_reqs, vcounts : ndarray of int64
        Pools indexed by WAITALL, WAITANY and v-collective operations.
    comm_ptr, comm_members : ndarray
        CSR table of the world ranks of every global communicator, in
        communicator-rank order (``UNKNOWN_PEER`` where a partial trace cannot tell).
    call_names : tuple of str
        MPI function names indexed by ``call``.
    n_requests : int
        Number of request ids in use.
    unsupported : dict
        MPI calls seen but not represented (name -> count).
    notes : tuple of str
        What the reader assumed (clock, flop rate, dialect, dropped records...).
    """

    format: str
    source: str
    n_ranks: int
    rank_ptr: np.ndarray
    kind: np.ndarray
    call: np.ndarray
    peer: np.ndarray
    peer2: np.ndarray
    tag: np.ndarray
    tag2: np.ndarray
    comm: np.ndarray
    bytes_send: np.ndarray
    bytes_recv: np.ndarray
    request: np.ndarray
    count: np.ndarray
    vcounts_offset: np.ndarray
    seconds: np.ndarray
    nonblocking: np.ndarray
    wait_reqs: np.ndarray
    vcounts: np.ndarray
    comm_ptr: np.ndarray
    comm_members: np.ndarray
    call_names: tuple[str, ...]
    n_requests: int
    unsupported: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def n_ops(self) -> int:
        """Total number of operations over all ranks."""
        return int(self.kind.shape[0])

    @property
    def n_comms(self) -> int:
        """Number of global communicators."""
        return int(self.comm_ptr.shape[0]) - 1

    def comm_ranks(self, comm: int) -> np.ndarray:
        """World ranks of global communicator ``comm`` in communicator-rank order."""
        if not 0 <= comm < self.n_comms:
            raise ValueError(
                f"communicator id {comm} is out of range: expected 0..{self.n_comms - 1}"
            )
        return self.comm_members[self.comm_ptr[comm] : self.comm_ptr[comm + 1]]

    def ops_of(self, rank: int) -> RankOps:
        """Views of the operation columns of one world rank."""
        if not 0 <= rank < self.n_ranks:
            raise ValueError(f"rank {rank} is out of range: expected 0..{self.n_ranks - 1}")
        s = slice(int(self.rank_ptr[rank]), int(self.rank_ptr[rank + 1]))
        return RankOps(rank, *(getattr(self, name)[s] for name in OP_COLUMNS))

    def rank_of_op(self) -> np.ndarray:
        """World rank of every operation (int32 array of length ``n_ops``)."""
        return np.repeat(np.arange(self.n_ranks, dtype=np.int32), np.diff(self.rank_ptr))

    def waitall_requests(self, op: int) -> np.ndarray:
        """Request ids completed by the WAITALL operation at global index ``op``."""
        if self.kind[op] != OpKind.WAITALL:
            raise ValueError(f"operation {op} is {OpKind(int(self.kind[op])).name}, not WAITALL")
        start = int(self.request[op])
        return self.wait_reqs[start : start + int(self.count[op])]

    def op_vcounts(self, op: int) -> np.ndarray:
        """Per-rank bytes of the v-collective at global index ``op``."""
        start = int(self.vcounts_offset[op])
        if start < 0:
            raise ValueError(f"operation {op} is not a v-collective")
        return self.vcounts[start : start + int(self.count[op])]

    def completed_requests(self) -> np.ndarray:
        """Request ids completed by some WAIT, WAITALL or WAITANY (sorted, may repeat if invalid)."""
        waits = self.request[self.kind == OpKind.WAIT]
        return np.sort(np.concatenate([waits, self.wait_reqs]))

    def validate(self) -> None:
        """Check array lengths, dtypes and value ranges.

        Raises
        ------
        TraceFormatError
            Naming the first inconsistent column, with the offending operation index.
        """

        def fail(msg: str, record: int | None = None) -> None:
            raise TraceFormatError(msg, file=self.source, record=record)

        self._validate_values(fail)
        self._validate_requests(fail)
        self._validate_pools(fail)
        self._validate_comms(fail)

    def _validate_values(self, fail: _Fail) -> None:
        """Column dtypes and lengths, ``rank_ptr`` and each column's value range."""
        n = self.n_ops
        for name, dt in OP_COLUMNS.items():
            col = getattr(self, name)
            if not isinstance(col, np.ndarray) or col.ndim != 1:
                fail(f"column {name} must be a 1-D numpy array")
            if col.dtype != dt:
                fail(f"column {name} has dtype {col.dtype}, expected {dt}")
            if col.shape[0] != n:
                fail(f"column {name} has length {col.shape[0]}, expected {n} (= len(kind))")
        for name, dt in AUX_COLUMNS.items():
            col = getattr(self, name)
            if not isinstance(col, np.ndarray) or col.ndim != 1 or col.dtype != dt:
                fail(f"array {name} must be a 1-D {dt} numpy array")
        if not 1 <= self.n_ranks <= MAX_RANKS:
            fail(f"n_ranks={self.n_ranks} outside 1..{MAX_RANKS}")
        rp = self.rank_ptr
        if rp.shape[0] != self.n_ranks + 1 or rp[0] != 0 or rp[-1] != n or np.any(np.diff(rp) < 0):
            fail(f"rank_ptr must be non-decreasing from 0 to {n} with {self.n_ranks + 1} entries")
        valid_kinds = np.array(sorted(int(k) for k in OpKind), dtype=np.int8)
        bad = np.flatnonzero(~np.isin(self.kind, valid_kinds))
        if bad.size:
            fail(f"kind {int(self.kind[bad[0]])} is not an OpKind", int(bad[0]))
        bad = np.flatnonzero((self.call < 0) | (self.call >= len(self.call_names)))
        if bad.size:
            fail(
                f"call index {int(self.call[bad[0]])} outside 0..{len(self.call_names) - 1}",
                int(bad[0]),
            )
        for name in ("peer", "peer2"):
            col = getattr(self, name)
            bad = np.flatnonzero((col < UNKNOWN_PEER) | (col >= self.n_ranks))
            if bad.size:
                fail(
                    f"{name}={int(col[bad[0]])} outside {UNKNOWN_PEER}..{self.n_ranks - 1}",
                    int(bad[0]),
                )
        for name in ("tag", "tag2"):
            col = getattr(self, name)
            bad = np.flatnonzero(col < ANY_TAG)
            if bad.size:
                fail(f"{name}={int(col[bad[0]])} is negative and not ANY_TAG", int(bad[0]))
        bad = np.flatnonzero((self.comm < 0) | (self.comm >= self.n_comms))
        if bad.size:
            fail(f"comm={int(self.comm[bad[0]])} outside 0..{self.n_comms - 1}", int(bad[0]))
        for name in ("bytes_send", "bytes_recv", "count"):
            col = getattr(self, name)
            bad = np.flatnonzero(col < 0)
            if bad.size:
                fail(f"{name}={int(col[bad[0]])} is negative", int(bad[0]))
        for name in ("bytes_send", "bytes_recv"):
            col = getattr(self, name)
            bad = np.flatnonzero(col > MAX_MESSAGE_BYTES)
            if bad.size:
                fail(f"{name}={int(col[bad[0]])} exceeds {MAX_MESSAGE_BYTES} (1 TiB)", int(bad[0]))
        ok = (self.seconds >= 0) & (self.seconds <= MAX_OP_SECONDS)  # False for NaN
        bad = np.flatnonzero(~ok)
        if bad.size:
            fail(
                f"seconds={float(self.seconds[bad[0]])} outside 0..{MAX_OP_SECONDS:g}", int(bad[0])
            )

    def _validate_requests(self, fail: _Fail) -> None:
        kind = self.kind
        posts = (kind == OpKind.ISEND) | (kind == OpKind.IRECV) | self.nonblocking
        ids = self.request[posts]
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_requests):
            fail(f"request ids of posts must lie in 0..{self.n_requests - 1}")
        # ids are in range (checked above), so a bincount finds repeats in O(n)
        if ids.size and np.bincount(ids, minlength=self.n_requests).max() > 1:
            fail("a request id is posted twice")
        if self.n_requests != ids.size:
            fail(f"n_requests={self.n_requests} but {ids.size} requests are posted")
        others = ~posts & (kind != OpKind.WAIT) & (kind != OpKind.WAITALL) & (kind != OpKind.WAITANY)
        bad = np.flatnonzero(others & (self.request != -1))
        if bad.size:
            fail("request must be -1 for operations that neither post nor wait", int(bad[0]))
        waits = self.request[kind == OpKind.WAIT]
        if waits.size and (waits.min() < 0 or waits.max() >= self.n_requests):
            fail(f"WAIT request ids must lie in 0..{self.n_requests - 1}")
        wr = self.wait_reqs
        if wr.size and (wr.min() < 0 or wr.max() >= self.n_requests):
            fail(f"wait_reqs ids must lie in 0..{self.n_requests - 1}")
        done = np.concatenate([waits, wr])
        if done.size and np.bincount(done, minlength=self.n_requests).max() > 1:
            fail("a request is completed more than once")
        if np.any(self.comm < 0):  # pragma: no cover - checked before
            fail("negative communicator")

    def _validate_pools(self, fail: _Fail) -> None:
        for kind in (OpKind.WAITALL, OpKind.WAITANY):
            wa = np.flatnonzero(self.kind == kind)
            start, cnt = self.request[wa], self.count[wa]
            bad = np.flatnonzero((start < 0) | (start + cnt > self.wait_reqs.shape[0]))
            if bad.size:
                fail(f"{kind.name} range outside wait_reqs", int(wa[bad[0]]))
        v = np.isin(self.kind, np.array([int(k) for k in V_KINDS], dtype=np.int8))
        vo, vc = self.vcounts_offset[v], self.count[v]
        vi = np.flatnonzero(v)
        bad = np.flatnonzero((vo < 0) | (vo + vc > self.vcounts.shape[0]))
        if bad.size:
            fail("v-collective range outside vcounts", int(vi[bad[0]]))
        bad = np.flatnonzero(~v & (self.vcounts_offset != -1))
        if bad.size:
            fail("vcounts_offset must be -1 for operations that are not v-collectives", int(bad[0]))
        if np.any(self.vcounts < 0) or np.any(self.vcounts > MAX_MESSAGE_BYTES):
            fail(f"vcounts must lie in 0..{MAX_MESSAGE_BYTES}")

    def _validate_comms(self, fail: _Fail) -> None:
        cp = self.comm_ptr
        if cp.shape[0] < 2 or cp[0] != 0 or cp[-1] != self.comm_members.shape[0]:
            fail("comm_ptr must start at 0, end at len(comm_members) and hold >= 1 communicator")
        if np.any(np.diff(cp) < 1):
            fail("every communicator must have at least one member")
        m = self.comm_members
        if np.any((m < UNKNOWN_PEER) | (m >= self.n_ranks) | ((m < 0) & (m != UNKNOWN_PEER))):
            fail(f"communicator members must be world ranks 0..{self.n_ranks - 1}")
        world = m[cp[0] : cp[1]]
        if not np.array_equal(world, np.arange(self.n_ranks)):
            fail("communicator 0 must be MPI_COMM_WORLD (members 0..n_ranks-1 in order)")

    def digest(self, *, notes: bool = True) -> str:
        """SHA-256 hex digest of everything a reader produced except ``source`` (the path).

        Covers every column's dtype, shape and bytes, ``format``, ``n_ranks``,
        ``n_requests``, ``call_names``, ``unsupported`` and (unless ``notes=False``)
        ``notes``: two traces with the same digest replay identically (notes are
        informational). Used to check that readers stay bit-identical.
        """
        h = hashlib.sha256()
        meta: dict[str, object] = {
            "format": self.format,
            "n_ranks": self.n_ranks,
            "n_requests": self.n_requests,
            "call_names": list(self.call_names),
            "unsupported": dict(sorted(self.unsupported.items())),
        }
        if notes:
            meta["notes"] = list(self.notes)
        h.update(json.dumps(meta, sort_keys=True).encode())
        for name in (*OP_COLUMNS, *AUX_COLUMNS):
            col = np.ascontiguousarray(getattr(self, name))
            h.update(f"{name}:{col.dtype.str}:{col.shape}".encode())
            h.update(col.tobytes())
        return h.hexdigest()

    def summary(self) -> TraceSummary:
        """Aggregate counts and volumes (see :class:`TraceSummary`)."""
        kinds, kcounts = np.unique(self.kind, return_counts=True)
        per_kind = {OpKind(int(k)).name: int(c) for k, c in zip(kinds, kcounts, strict=True)}
        calls, ccounts = np.unique(self.call, return_counts=True)
        per_call = {self.call_names[int(c)]: int(n) for c, n in zip(calls, ccounts, strict=True)}
        send_mask = np.isin(self.kind, np.array([int(k) for k in SEND_LIKE], dtype=np.int8))
        compute = np.where(self.kind == OpKind.COMPUTE, self.seconds, 0.0)
        per_rank = np.bincount(self.rank_of_op(), weights=compute, minlength=self.n_ranks)
        posted = self.n_requests
        done = int(np.unique(self.completed_requests()).size)
        coll = int(np.count_nonzero(self.kind >= OpKind.BARRIER))
        return TraceSummary(
            format=self.format,
            source=self.source,
            n_ranks=self.n_ranks,
            n_ops=self.n_ops,
            ops_per_kind=per_kind,
            ops_per_call=per_call,
            p2p_messages_sent=int(np.count_nonzero(send_mask)),
            p2p_bytes_sent=int(self.bytes_send[send_mask].sum()),
            collective_calls=coll,
            compute_seconds=float(compute.sum()),
            compute_seconds_per_rank_max=float(per_rank.max()) if per_rank.size else 0.0,
            n_requests=posted,
            n_uncompleted_requests=posted - done,
            communicator_sizes=tuple(int(x) for x in np.diff(self.comm_ptr)),
            unsupported=dict(self.unsupported),
            notes=self.notes,
        )
