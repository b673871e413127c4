"""Compact encoding of per-rank MPI operation streams consumed by the engine.

A :class:`Program` is the *lowered* form of an MPI run: only point-to-point
operations remain (collectives are expanded into point-to-point algorithms
before this stage, blocking calls are an ``ISEND``/``IRECV`` followed by a
``WAIT``). All ranks' operations are stored in one table with a CSR pointer
``rank_ptr``, in the layout the compiled engine loop reads: one 32-byte int32 row
per operation (kind, peer, tag, comm, req, count, call), so that an operation is
one cache line away (ranks interleave in time, so separate columns would cost
seven distant reads per operation). Message sizes and compute seconds are two
more arrays; the integer columns are views of the table. A row reads at most one of
them (``ISEND``/``IRECV`` their bytes, ``COMPUTE`` its seconds), so they may be two
views, as int64 and as float64, of one 8-byte column (the lowering's programs): 40
bytes per row instead of 48, and a row's entry in the column it does not read is then
the other's bits.

Every operation carries a ``call`` index naming the MPI function it came from
(``call_names``), so the engine can report where each rank's time went per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import codes
from mpiuq.simulator.codes import (
    ANY_SOURCE,
    ANY_TAG,
    COL_CALL,
    COL_COMM,
    COL_COUNT,
    COL_KIND,
    COL_PEER,
    COL_REQ,
    COL_TAG,
    OPS_WIDTH,
    TABLE_COLUMNS,
)
from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.program import check as chk
from mpiuq.simulator.program.check import first_problems

__all__ = ["ANY_SOURCE", "ANY_TAG", "Op", "Program", "ProgramBuilder"]


class Op(IntEnum):
    """Operation codes of the lowered program: a view of the ``OP_*`` codes of
    :mod:`mpiuq.simulator.codes` (stored in the int32 operation table)."""

    COMPUTE = codes.OP_COMPUTE  #: busy the rank for ``seconds``
    ISEND = (
        codes.OP_ISEND
    )  #: start sending ``nbytes`` to ``peer`` with ``tag`` on ``comm``; request ``req``
    IRECV = (
        codes.OP_IRECV
    )  #: post a receive from ``peer`` (or ANY_SOURCE) with ``tag`` (or ANY_TAG)
    WAIT = codes.OP_WAIT  #: block until request ``req`` completes
    WAITALL = codes.OP_WAITALL  #: block until ``wait_list[req:req + count]`` all complete
    MARK = codes.OP_MARK  #: record the current time in mark ``req`` (zero cost; used by benchmarks)
    #: block until one not yet consumed request of ``wait_list[req:req + count]`` completes
    WAITANY = codes.OP_WAITANY


IntArray = npt.NDArray[np.int64]
I32Array = npt.NDArray[np.int32]


@dataclass(frozen=True)
class Program:
    """Lowered per-rank operation streams of one MPI run.

    Attributes
    ----------
    n_ranks
        Number of MPI ranks (world size).
    rank_ptr
        ``int64 (n_ranks + 1,)``: operations of rank ``r`` are ``[rank_ptr[r], rank_ptr[r+1])``.
    ops
        ``int32 (n_ops, OPS_WIDTH)`` table of kind, peer, tag, comm, req, count and call
        (see :class:`Op`; the columns are also the properties of those names). ``peer``
        is a world rank or ``ANY_SOURCE``; ``call`` indexes ``call_names``.
    nbytes
        ``int64 (n_ops,)`` message sizes in bytes (read on ``ISEND``/``IRECV`` rows).
    seconds
        ``float64 (n_ops,)`` durations of ``COMPUTE`` operations in seconds (read on
        ``COMPUTE`` rows); may share its memory with ``nbytes`` (see the module's text).
    wait_list
        Request ids referenced by ``WAITALL`` and ``WAITANY`` operations.
    n_requests
        Number of distinct request ids (``0 .. n_requests - 1``).
    n_marks
        Number of time marks recorded by ``MARK`` operations.
    call_names
        Name of the MPI call of each ``call`` index, e.g. ``"MPI_Send"``.
    """

    n_ranks: int
    rank_ptr: IntArray
    ops: I32Array
    nbytes: IntArray
    seconds: npt.NDArray[np.float64]
    wait_list: IntArray
    n_requests: int
    n_marks: int
    call_names: tuple[str, ...]

    @classmethod
    def from_columns(
        cls,
        *,
        n_ranks: int,
        rank_ptr: npt.ArrayLike,
        kind: npt.ArrayLike,
        peer: npt.ArrayLike,
        tag: npt.ArrayLike,
        comm: npt.ArrayLike,
        nbytes: npt.ArrayLike,
        req: npt.ArrayLike,
        count: npt.ArrayLike,
        seconds: npt.ArrayLike,
        call: npt.ArrayLike,
        wait_list: npt.ArrayLike,
        n_requests: int,
        n_marks: int,
        call_names: tuple[str, ...],
    ) -> Program:
        """A program from separate per-operation columns (packed into the table).

        Raises
        ------
        ProgramError
            If the columns differ in length or a value does not fit the int32 table.
        """
        columns = {"kind": kind, "peer": peer, "tag": tag, "comm": comm}
        columns |= {"req": req, "count": count, "call": call}
        arrays = {name: np.asarray(v) for name, v in columns.items()}
        n = arrays["kind"].shape[0] if arrays["kind"].ndim == 1 else -1
        info = np.iinfo(np.int32)
        for name, arr in arrays.items():
            if arr.shape != (n,):
                raise ProgramError(f"column {name} has shape {arr.shape}, expected ({n},)")
            if n and (arr.min() < info.min or arr.max() > info.max):
                bad = arr.min() if arr.min() < info.min else arr.max()
                raise ProgramError(
                    f"column {name} holds {int(bad)}, outside the int32 range of the "
                    f"operation table"
                )
        ops = np.zeros((n, OPS_WIDTH), dtype=np.int32)
        for col, name in enumerate(TABLE_COLUMNS):
            ops[:, col] = arrays[name]
        return cls(
            n_ranks=n_ranks,
            rank_ptr=np.asarray(rank_ptr, dtype=np.int64),
            ops=ops,
            nbytes=np.asarray(nbytes, dtype=np.int64),
            seconds=np.asarray(seconds, dtype=np.float64),
            wait_list=np.asarray(wait_list, dtype=np.int64),
            n_requests=n_requests,
            n_marks=n_marks,
            call_names=call_names,
        )

    @property
    def kind(self) -> I32Array:
        """Operation codes (:class:`Op`); a view of ``ops``."""
        return self.ops[:, COL_KIND]

    @property
    def peer(self) -> I32Array:
        """Partner world rank, or ``ANY_SOURCE``; a view of ``ops``."""
        return self.ops[:, COL_PEER]

    @property
    def tag(self) -> I32Array:
        """Message tag, or ``ANY_TAG``; a view of ``ops``."""
        return self.ops[:, COL_TAG]

    @property
    def comm(self) -> I32Array:
        """Communicator (matching context); a view of ``ops``."""
        return self.ops[:, COL_COMM]

    @property
    def req(self) -> I32Array:
        """Request id, wait-list offset (``WAITALL``, ``WAITANY``) or mark id (``MARK``); a view
        of ``ops``."""
        return self.ops[:, COL_REQ]

    @property
    def count(self) -> I32Array:
        """Number of requests of a ``WAITALL`` or ``WAITANY``; a view of ``ops``."""
        return self.ops[:, COL_COUNT]

    @property
    def call(self) -> I32Array:
        """Index into ``call_names``; a view of ``ops``."""
        return self.ops[:, COL_CALL]

    @property
    def n_ops(self) -> int:
        """Total number of operations over all ranks."""
        return int(self.ops.shape[0])

    def validate(self) -> None:
        """Check structural consistency; raise :class:`ProgramError` naming the first problem."""
        n = self.n_ops
        if self.n_ranks < 1:
            raise ProgramError(f"n_ranks={self.n_ranks} is invalid: expected at least 1")
        if (
            self.rank_ptr.shape != (self.n_ranks + 1,)
            or self.rank_ptr[0] != 0
            or self.rank_ptr[-1] != n
        ):
            raise ProgramError(
                f"rank_ptr of shape {self.rank_ptr.shape} does not describe {n} operations "
                f"over {self.n_ranks} ranks"
            )
        if np.any(np.diff(self.rank_ptr) < 0):
            raise ProgramError("rank_ptr must be non-decreasing")
        limit = np.iinfo(np.int32).max  # the engine's operation table is int32
        for what, size in (
            ("n_requests", self.n_requests),
            ("wait_list length", self.wait_list.shape[0]),
            ("n_marks", self.n_marks),
        ):
            if size > limit:
                raise ProgramError(f"{what}={size} exceeds the engine's limit of {limit}")
        if self.ops.dtype != np.int32 or self.ops.shape != (n, OPS_WIDTH):
            raise ProgramError(
                f"ops is a {self.ops.dtype} table of shape {self.ops.shape}: expected int32 "
                f"({n}, {OPS_WIDTH})"
            )
        for name in ("nbytes", "seconds"):
            if getattr(self, name).shape != (n,):
                raise ProgramError(
                    f"column {name} has shape {getattr(self, name).shape}, expected ({n},)"
                )
        found = first_problems(
            self.rank_ptr,
            self.ops,
            self.nbytes,
            self.seconds,
            self.wait_list,
            self.n_requests,
            self.n_marks,
            len(self.call_names),
        )
        for problem in range(found.shape[0]):
            i, value, extra = (int(x) for x in found[problem])
            if i >= 0:
                raise self._problem(problem, i, value, extra)

    def _problem(self, problem: int, i: int, value: int, extra: int) -> ProgramError:
        """The error for a finding of :func:`~mpiuq.simulator.program.check.first_problems`."""
        r = int(np.searchsorted(self.rank_ptr, i, side="right")) - 1
        where = (r, i - int(self.rank_ptr[r]))
        if problem == chk.BAD_KIND:
            return ProgramError(f"unknown operation code {int(self.kind[i])}", *where)
        if problem == chk.BAD_PEER:
            return ProgramError(
                f"peer {int(self.peer[i])} is not a rank in 0..{self.n_ranks - 1}", *where
            )
        if problem == chk.BAD_BYTES:
            return ProgramError(f"message size {int(self.nbytes[i])} B is negative", *where)
        if problem == chk.BAD_TIME:
            return ProgramError(
                f"compute duration {float(self.seconds[i])!r} s is not a finite non-negative number",
                *where,
            )
        if problem == chk.BAD_REQ:
            return ProgramError(f"request id {value} out of range", *where)
        if problem == chk.DUP_REQ:
            return ProgramError(f"request id {value} is created twice", *where)
        if problem == chk.BAD_LIST:
            lo, cnt = int(self.req[i]), int(self.count[i])
            return ProgramError(
                f"{Op(int(self.kind[i])).name.lower()} list [{lo}, {lo + cnt}) outside wait_list "
                f"of length "
                f"{self.wait_list.shape[0]}",
                *where,
            )
        if problem == chk.UNKNOWN_WAIT:
            return ProgramError(f"wait on unknown request id {value}", *where)
        if problem == chk.FOREIGN_WAIT:
            return ProgramError(
                f"wait on request {value} which this rank never created (owner rank {extra})",
                *where,
            )
        if problem == chk.BAD_MARK:
            return ProgramError(f"mark id outside 0..{self.n_marks - 1}")
        return ProgramError(f"call index outside 0..{len(self.call_names) - 1}")


@dataclass
class ProgramBuilder:
    """Incremental construction of a :class:`Program` from Python (benchmarks, tests).

    Examples
    --------
    >>> b = ProgramBuilder(n_ranks=2)
    >>> b.send(0, dest=1, nbytes=8)
    >>> b.recv(1, source=0, nbytes=8)
    >>> b.build().n_ops
    4
    """

    n_ranks: int
    _ops: list[list[tuple[int, int, int, int, int, int, int, float, int]]] = field(
        default_factory=list, repr=False
    )
    _wait_list: list[int] = field(default_factory=list, repr=False)
    _calls: dict[str, int] = field(default_factory=dict, repr=False)
    _n_requests: int = 0
    _n_marks: int = 0

    def __post_init__(self) -> None:
        if self.n_ranks < 1:
            raise ProgramError(f"n_ranks={self.n_ranks} is invalid: expected at least 1")
        self._ops = [[] for _ in range(self.n_ranks)]

    def _call(self, name: str) -> int:
        return self._calls.setdefault(name, len(self._calls))

    def _add(
        self,
        rank: int,
        op: Op,
        call: str,
        *,
        peer: int = -2,
        tag: int = 0,
        comm: int = 0,
        nbytes: int = 0,
        req: int = -1,
        count: int = 0,
        seconds: float = 0.0,
    ) -> None:
        if not 0 <= rank < self.n_ranks:
            raise ProgramError(f"rank {rank} is not in 0..{self.n_ranks - 1}")
        self._ops[rank].append(
            (int(op), peer, tag, comm, nbytes, req, count, seconds, self._call(call))
        )

    def compute(self, rank: int, seconds: float, call: str = "compute") -> None:
        """Append ``seconds`` of computation to ``rank``."""
        self._add(rank, Op.COMPUTE, call, seconds=float(seconds))

    def isend(
        self,
        rank: int,
        dest: int,
        nbytes: int,
        tag: int = 0,
        comm: int = 0,
        call: str = "MPI_Isend",
    ) -> int:
        """Append a nonblocking send; returns its request id."""
        req = self._n_requests
        self._n_requests += 1
        self._add(rank, Op.ISEND, call, peer=dest, tag=tag, comm=comm, nbytes=int(nbytes), req=req)
        return req

    def irecv(
        self,
        rank: int,
        source: int,
        nbytes: int,
        tag: int = ANY_TAG,
        comm: int = 0,
        call: str = "MPI_Irecv",
    ) -> int:
        """Append a nonblocking receive (``source`` may be ANY_SOURCE); returns its request id."""
        req = self._n_requests
        self._n_requests += 1
        self._add(
            rank, Op.IRECV, call, peer=source, tag=tag, comm=comm, nbytes=int(nbytes), req=req
        )
        return req

    def wait(self, rank: int, req: int, call: str = "MPI_Wait") -> None:
        """Append a wait on one request."""
        self._add(rank, Op.WAIT, call, req=req)

    def waitall(self, rank: int, reqs: list[int], call: str = "MPI_Waitall") -> None:
        """Append a wait on all of ``reqs``."""
        self._add(rank, Op.WAITALL, call, req=len(self._wait_list), count=len(reqs))
        self._wait_list.extend(reqs)

    def waitany(self, rank: int, reqs: list[int], call: str = "MPI_Waitany") -> None:
        """Append a wait on one of ``reqs``: the first to complete among those no wait has
        consumed yet (a no-op when every one is consumed)."""
        self._add(rank, Op.WAITANY, call, req=len(self._wait_list), count=len(reqs))
        self._wait_list.extend(reqs)

    def send(self, rank: int, dest: int, nbytes: int, tag: int = 0, comm: int = 0) -> None:
        """Append a blocking send (``MPI_Send``)."""
        self.wait(rank, self.isend(rank, dest, nbytes, tag, comm, call="MPI_Send"), call="MPI_Send")

    def recv(self, rank: int, source: int, nbytes: int, tag: int = ANY_TAG, comm: int = 0) -> None:
        """Append a blocking receive (``MPI_Recv``)."""
        self.wait(
            rank, self.irecv(rank, source, nbytes, tag, comm, call="MPI_Recv"), call="MPI_Recv"
        )

    def mark(self, rank: int) -> int:
        """Append a time mark; returns its id (index into the engine's ``marks_s``)."""
        mark = self._n_marks
        self._n_marks += 1
        self._add(rank, Op.MARK, "mark", req=mark)
        return mark

    def build(self) -> Program:
        """Freeze the operations into a validated :class:`Program`."""
        counts = [len(ops) for ops in self._ops]
        rank_ptr = np.zeros(self.n_ranks + 1, dtype=np.int64)
        rank_ptr[1:] = np.cumsum(counts)
        flat = [op for ops in self._ops for op in ops]
        cols = list(zip(*flat, strict=True)) if flat else [()] * 9
        names = sorted(self._calls, key=self._calls.__getitem__)
        program = Program.from_columns(
            n_ranks=self.n_ranks,
            rank_ptr=rank_ptr,
            kind=np.array(cols[0], dtype=np.int64),
            peer=np.array(cols[1], dtype=np.int64),
            tag=np.array(cols[2], dtype=np.int64),
            comm=np.array(cols[3], dtype=np.int64),
            nbytes=np.array(cols[4], dtype=np.int64),
            req=np.array(cols[5], dtype=np.int64),
            count=np.array(cols[6], dtype=np.int64),
            seconds=np.array(cols[7], dtype=np.float64),
            call=np.array(cols[8], dtype=np.int64),
            wait_list=np.array(self._wait_list, dtype=np.int64),
            n_requests=self._n_requests,
            n_marks=self._n_marks,
            call_names=tuple(names),
        )
        program.validate()
        return program
