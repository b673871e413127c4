"""The pure-Python SimGrid TI parser that mpiuq used before the compiled path (reference).

Kept verbatim (apart from this paragraph) for ``experiments/perf/perf_parse.py``,
which times it next to the compiled parser on the same traces and checks that both
produce the same :meth:`Trace.digest`. Not part of the package; do not import it
from mpiuq.


Three dialects are read:

* current SMPI (``0 isend 1 0 1e6 [dt]``, ``wait src dst tag``, ``waitall [n]``);
* SMPI 2014, identical but with camelCase collective names (``allReduce``);
* MSG actions of 2010 (``p0 send p1 5760``: sizes in bytes, no tags, ``recv``
  sizes taken from the matching send, ``wait`` completing the last ``Irecv``).

Sizes are converted to bytes at parse time with SimGrid's datatype table
(``src/smpi/mpi/smpi_datatype.cpp``); the default datatype is MPI_DOUBLE when
``init`` has an argument, MPI_BYTE otherwise. ``compute F`` becomes F / flop_rate
seconds. Per-rank files may be gzip-compressed (``.gz``).

SMPI records ``waitall <n>`` for a wait on *some* of the pending requests while
SimGrid's replayer completes all of them. We resolve it the way the recording
happened: a ``waitall`` tentatively owns every request pending at that point; a
later ``wait`` naming one of them (before its key is posted again) takes it back,
because the waitall did not cover it. ``test`` is resolved the same way: a test
whose request is later waited for failed (it is dropped), otherwise it completed
the request. Receives recorded with source -333 (any-source) become ``ANY_SOURCE``.
"""

from __future__ import annotations

import gzip
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.ir import ANY_SOURCE, OpKind, Trace

__all__ = ["SMPI_DATATYPE_BYTES", "find_ti_files", "read_ti"]

#: Size in bytes of SimGrid's datatype ids (x86-64 sizes of the C types it declares).
SMPI_DATATYPE_BYTES: dict[int, int] = {
    0: 8,
    1: 4,
    2: 1,
    3: 2,
    4: 8,
    5: 4,
    6: 1,
    7: 8,
    8: 1,
    9: 1,
    10: 2,
    11: 4,
    12: 8,
    13: 8,
    14: 16,
    15: 4,
    16: 1,
    17: 1,
    18: 2,
    19: 4,
    20: 8,
    21: 1,
    22: 2,
    23: 4,
    24: 8,
    25: 8,
    26: 16,
    27: 32,
    28: 8,
    29: 8,
    30: 8,
    31: 16,
    32: 16,
    33: 8,
    34: 8,
    35: 8,
    36: 16,
    37: 16,
    38: 4,
    39: 4,
    40: 4,
    41: 8,
    42: 0,
    43: 0,
    44: 0,
    45: 4,
    46: 2,
    47: 4,
    48: 8,
    49: 16,
    50: 32,
    51: 0,
    52: 0,
    53: 1,
    54: 8,
}
_SMPI_ANY_SOURCE = -333  # MPI_UNDEFINED as written by SMPI 3.32 for any-source receives

_MPI_NAME = {
    "send": "MPI_Send",
    "isend": "MPI_Isend",
    "recv": "MPI_Recv",
    "irecv": "MPI_Irecv",
    "wait": "MPI_Wait",
    "test": "MPI_Test",
    "waitall": "MPI_Waitall",
    "sendrecv": "MPI_Sendrecv",
    "barrier": "MPI_Barrier",
    "bcast": "MPI_Bcast",
    "reduce": "MPI_Reduce",
    "allreduce": "MPI_Allreduce",
    "alltoall": "MPI_Alltoall",
    "alltoallv": "MPI_Alltoallv",
    "gather": "MPI_Gather",
    "gatherv": "MPI_Gatherv",
    "allgather": "MPI_Allgather",
    "allgatherv": "MPI_Allgatherv",
    "scatter": "MPI_Scatter",
    "scatterv": "MPI_Scatterv",
    "reducescatter": "MPI_Reduce_scatter",
    "scan": "MPI_Scan",
    "exscan": "MPI_Exscan",
    "compute": "compute",
    "sleep": "sleep",
}
_BOOKKEEPING = frozenset({"init", "finalize", "comm_size", "comm_split", "comm_dup", "location"})


class _Bad(Exception):
    """Internal: a record is malformed (converted to TraceFormatError with context)."""


def _num(tok: str) -> int:
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        value = float(tok)
    except ValueError:
        raise _Bad(f"expected a number, got {tok!r}") from None
    if not value.is_integer():
        raise _Bad(f"expected an integral count, got {tok!r}")
    return int(value)


def _flops(tok: str) -> float:
    try:
        value = float(tok)
    except ValueError:
        raise _Bad(f"expected an amount of flops, got {tok!r}") from None
    if not value >= 0.0 or value == float("inf"):
        raise _Bad(f"expected a finite amount >= 0, got {tok!r}")
    return value


def _peer(tok: str, n_ranks: int) -> int:
    r = _num(tok[1:] if tok[:1] == "p" else tok)
    if r == _SMPI_ANY_SOURCE:
        return ANY_SOURCE
    if not 0 <= r < n_ranks:
        raise _Bad(f"peer rank {tok} outside 0..{n_ranks - 1}")
    return r


def _dt(tok: str) -> int:
    code = _num(tok)
    size = SMPI_DATATYPE_BYTES.get(code)
    if size is None:
        raise _Bad(f"unknown SimGrid datatype id {tok} (known: 0..54)")
    return size


class _Req:
    __slots__ = ("id", "owner")

    def __init__(self, rid: int) -> None:
        self.id = rid
        # None = pending; list = tentatively covered by that waitall; int = index of a test op
        self.owner: list[int] | int | None = None


@dataclass
class _RankState:
    rank: int
    default_dt: int = 1
    pending: dict[tuple[int, int, int], deque[_Req]] = field(default_factory=dict)
    posted: list[tuple[tuple[int, int, int], _Req]] = field(default_factory=list)
    waitalls: list[list[int]] = field(default_factory=list)
    seen_init: bool = False
    seen_finalize: bool = False
    last_record: int = 0
    file: str = ""


@dataclass
class _TIContext:
    builder: TraceBuilder
    n_ranks: int
    flop_rate: float
    msg_dialect: bool
    states: list[_RankState]
    file: str = ""
    failed_tests: int = 0
    # MSG dialect: bytes of sends per (src, dst) and receives waiting for them
    msg_sends: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    msg_recvs: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)


def _open_text(path: Path) -> list[str]:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read().splitlines()
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"cannot read the file ({exc})", file=str(path)) from exc


def _is_action_line(line: str) -> bool:
    toks = line.split()
    if len(toks) < 2:
        return False
    head = toks[0][1:] if toks[0][:1] == "p" else toks[0]
    return head.isdigit() and toks[1][:1].isalpha()


def _resolve_listed(base: Path, entry: str) -> Path | None:
    """Find a file listed in an index (relative paths, possibly with a stale prefix, or .gz)."""
    rel = Path(entry)
    parts = rel.parts
    for k in range(len(parts)):
        cand = rel if rel.is_absolute() and k == 0 else base.joinpath(*parts[k:])
        for c in (cand, cand.with_name(cand.name + ".gz")):
            if c.is_file():
                return c
    return None


def _index_files(index: Path) -> list[Path] | None:
    """Rank files listed by ``index``, or None if it is not an index file."""
    lines = [ln.strip() for ln in _open_text(index) if ln.strip() and not ln.startswith("#")]
    if not lines or _is_action_line(lines[0]):
        return None
    files = []
    for ln in lines:
        found = _resolve_listed(index.parent, ln)
        if found is None:
            raise TraceFormatError(f"index lists {ln!r}, which does not exist", file=str(index))
        files.append(found)
    return files


def _looks_like_ti(path: Path) -> bool:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                head = fh.readline()
        else:
            with path.open(encoding="utf-8") as fh:
                head = fh.readline()
                while head and not head.strip():
                    head = fh.readline()
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    return _is_action_line(head)


def find_ti_files(path: str | Path) -> tuple[list[Path], list[str]]:
    """Locate the text files of a TI trace.

    ``path`` is an index file, a single trace file (all ranks), or a directory
    holding an index or per-rank files. Where a directory holds both a raw trace and
    its ``*_replayable`` variant, the raw one is chosen (it is what SMPI recorded).

    Returns
    -------
    files, notes
        The trace files to read and notes about the choice.
    """
    p = Path(path)
    notes: list[str] = []
    if p.is_file():
        listed = _index_files(p)
        return (listed if listed is not None else [p]), notes
    if not p.is_dir():
        raise UnsupportedTraceError(f"TI trace path {p} does not exist")
    candidates = sorted(
        f for f in p.iterdir() if f.is_file() and f.suffix not in {".md", ".xml", ".bin", ".meta"}
    )
    indexes: list[tuple[Path, list[Path]]] = []
    for f in candidates:
        if _looks_like_ti(f):
            continue
        try:
            listed = _index_files(f)
        except TraceFormatError:
            continue
        if listed:
            indexes.append((f, listed))
    if indexes:
        raw = [ix for ix in indexes if "_replayable" not in ix[0].name]
        chosen = raw[0] if raw else indexes[0]
        if raw and len(raw) < len(indexes):
            notes.append(
                "directory holds raw and *_replayable TI variants; "
                f"read the raw one {chosen[0].name}"
            )
        return chosen[1], notes
    files = [f for f in candidates if _looks_like_ti(f)]
    if not files:
        raise UnsupportedTraceError(f"directory {p} holds no TI index or action file")
    return files, notes


def _scan_ranks(files: list[Path]) -> tuple[int, bool]:
    """Number of ranks (max rank + 1) and whether the MSG ``p<rank>`` dialect is used."""
    top = -1
    msg = False
    for f in files:
        for ln in _open_text(f):
            head = ln.split(None, 1)[0] if ln.strip() else ""
            if not head or head[0] == "#":
                continue
            if head[0] == "p":
                msg = True
                head = head[1:]
            if head.isdigit():
                top = max(top, int(head))
    if top < 0:
        raise TraceFormatError("no action line found", file=str(files[0]))
    return top + 1, msg


def read_ti(path: str | Path, *, flop_rate: float = 1e9) -> Trace:
    """Read a SimGrid time-independent trace.

    Parameters
    ----------
    path : str or Path
        Index file, single all-ranks file, or directory (see :func:`find_ti_files`).
    flop_rate : float
        Host speed in flop/s used to turn ``compute`` flops into seconds (default
        1 Gflop/s, the speed the shared TI traces were recorded at).

    Returns
    -------
    Trace
        With ``format="ti"``; every collective is on MPI_COMM_WORLD.

    Raises
    ------
    TraceFormatError
        On a malformed or truncated line, naming file, rank and line number.
    """
    if not flop_rate > 0.0:
        raise ValueError(f"flop_rate={flop_rate!r} is invalid: expected a rate > 0 flop/s")
    files, notes = find_ti_files(path)
    n_ranks, msg = _scan_ranks(files)
    b = TraceBuilder("ti", str(path), n_ranks)
    for n in notes:
        b.note(n)
    ctx = _TIContext(b, n_ranks, flop_rate, msg, [_RankState(r) for r in range(n_ranks)])
    b.note(f"compute flops converted at {flop_rate:g} flop/s")
    b.note(
        "MSG 2010 dialect: sizes in bytes, tag 0, recv sizes from matching sends"
        if msg
        else "SMPI dialect (action names lower-cased)"
    )
    for f in files:
        ctx.file = str(f)
        _parse_file(ctx, f)
    _finish(ctx)
    return b.build()


def _parse_file(ctx: _TIContext, f: Path) -> None:
    n = ctx.n_ranks
    states = ctx.states
    for lineno, line in enumerate(_open_text(f), start=1):
        toks = line.split()
        if not toks or toks[0][0] == "#":
            continue
        head = toks[0][1:] if toks[0][0] == "p" else toks[0]
        if not head.isdigit() or len(toks) < 2:
            raise TraceFormatError(
                f"expected '<rank> <action> [args]', got {line.strip()[:80]!r}",
                file=ctx.file,
                record=lineno,
            )
        rank = int(head)
        if rank >= n:  # pragma: no cover - _scan_ranks saw every rank
            raise TraceFormatError(f"rank {rank} >= {n}", file=ctx.file, record=lineno)
        st = states[rank]
        st.last_record = lineno
        st.file = ctx.file
        action = toks[1].lower()
        try:
            if st.seen_finalize:
                raise _Bad(f"action {action!r} after finalize")
            _dispatch(ctx, st, action, toks[2:])
        except (_Bad, IndexError) as exc:
            msg = str(exc) if isinstance(exc, _Bad) else f"too few arguments for {action!r}"
            raise TraceFormatError(
                f"{msg} in {line.strip()[:80]!r}", file=ctx.file, rank=rank, record=lineno
            ) from None


def _post(ctx: _TIContext, st: _RankState, key: tuple[int, int, int]) -> int:
    b = ctx.builder
    dq = st.pending.get(key)
    if dq is None:
        dq = st.pending[key] = deque()
    elif dq and any(r.owner is not None for r in dq):
        # the key is posted again: tentative completions of older requests become final
        kept = [r for r in dq if r.owner is None]
        dq.clear()
        dq.extend(kept)
    req = _Req(b.new_request())
    dq.append(req)
    st.posted.append((key, req))
    return req.id


def _wait(ctx: _TIContext, st: _RankState, key: tuple[int, int, int], call: int) -> None:
    dq = st.pending.get(key)
    if not dq:
        raise _Bad(f"wait for request (src, dst, tag)={key} that no isend/irecv posted")
    req = dq.popleft()
    owner = req.owner
    if isinstance(owner, list):
        owner.remove(req.id)
    elif isinstance(owner, int):
        ctx.builder.drop(st.rank, owner)
        ctx.failed_tests += 1
    ctx.builder.add(st.rank, OpKind.WAIT, call, request=req.id)


def _test(ctx: _TIContext, st: _RankState, key: tuple[int, int, int], call: int) -> None:
    dq = st.pending.get(key)
    req = next((r for r in dq if r.owner is None), None) if dq else None
    if req is None:
        ctx.builder.unsupported["MPI_Test (no pending request)"] += 1
        return
    req.owner = ctx.builder.add(st.rank, OpKind.WAIT, call, request=req.id)


def _waitall(ctx: _TIContext, st: _RankState, call: int) -> None:
    covered: list[int] = []
    for dq in st.pending.values():
        for r in dq:
            if r.owner is None:
                r.owner = covered
                covered.append(r.id)
    st.waitalls.append(covered)
    ctx.builder.add_waitall(st.rank, call, covered)


def _last_pending_key(st: _RankState) -> tuple[int, int, int]:
    for key, req in reversed(st.posted):
        if req.owner is None and req in st.pending.get(key, ()):
            return key
    raise _Bad("wait without a pending Irecv")


def _dispatch(ctx: _TIContext, st: _RankState, action: str, a: list[str]) -> None:
    b = ctx.builder
    rank = st.rank
    n = ctx.n_ranks
    if action == "compute":
        b.add_compute(rank, _flops(a[0]) / ctx.flop_rate)
        return
    if action in _BOOKKEEPING:
        if action == "init":
            st.seen_init = True
            st.default_dt = 8 if a else 1
        elif action == "finalize":
            st.seen_finalize = True
        return
    name = _MPI_NAME.get(action)
    if name is None:
        b.unsupported[f"TI action {action}"] += 1
        return
    call = b.call_id(name)
    dt = st.default_dt
    if ctx.msg_dialect:
        _dispatch_msg(ctx, st, action, a, call)
        return
    if action in ("isend", "send"):
        dst = _peer(a[0], n)
        tag = _num(a[1])
        nbytes = _num(a[2]) * (_dt(a[3]) if len(a) > 3 else dt)
        if action == "send":
            b.add(rank, OpKind.SEND, call, peer=dst, tag=tag, bytes_send=nbytes)
        else:
            rid = _post(ctx, st, (rank, dst, tag))
            b.add(rank, OpKind.ISEND, call, peer=dst, tag=tag, bytes_send=nbytes, request=rid)
    elif action in ("irecv", "recv"):
        src_raw = _num(a[0])
        src = _peer(a[0], n)
        tag = _num(a[1])
        nbytes = _num(a[2]) * (_dt(a[3]) if len(a) > 3 else dt)
        if action == "recv":
            b.add(rank, OpKind.RECV, call, peer=src, tag=tag, bytes_recv=nbytes)
        else:
            rid = _post(ctx, st, (src_raw, rank, tag))
            b.add(rank, OpKind.IRECV, call, peer=src, tag=tag, bytes_recv=nbytes, request=rid)
    elif action == "wait":
        _wait(ctx, st, (_num(a[0]), _num(a[1]), _num(a[2])), call)
    elif action == "test":
        _test(ctx, st, (_num(a[0]), _num(a[1]), _num(a[2])), call)
    elif action == "waitall":
        _waitall(ctx, st, call)
    elif action == "sendrecv":
        d1 = _dt(a[4]) if len(a) > 5 else dt
        d2 = _dt(a[5]) if len(a) > 5 else dt
        b.add(
            rank,
            OpKind.SENDRECV,
            call,
            peer=_peer(a[1], n),
            peer2=_peer(a[3], n),
            bytes_send=_num(a[0]) * d1,
            bytes_recv=_num(a[2]) * d2,
        )
    else:
        _collective(ctx, st, action, a, call)


def _collective(ctx: _TIContext, st: _RankState, action: str, a: list[str], call: int) -> None:
    b = ctx.builder
    rank, n, dt, rate = st.rank, ctx.n_ranks, st.default_dt, ctx.flop_rate

    def root(i: int) -> int:
        return _peer(a[i], n) if len(a) > i else 0

    def dtype(i: int) -> int:
        return _dt(a[i]) if len(a) > i else dt

    def vec(start: int, size: int) -> list[int]:
        vals = [_num(t) * size for t in a[start : start + n]]
        if len(vals) != n:
            raise _Bad(f"expected {n} per-rank counts for {action}, got {len(vals)}")
        return vals

    if action == "barrier":
        b.add(rank, OpKind.BARRIER, call)
    elif action == "bcast":
        nb = _num(a[0]) * dtype(2)
        b.add(rank, OpKind.BCAST, call, peer=root(1), bytes_send=nb, bytes_recv=nb)
    elif action in ("reduce", "allreduce", "scan", "exscan"):
        kind = {
            "reduce": OpKind.REDUCE,
            "allreduce": OpKind.ALLREDUCE,
            "scan": OpKind.SCAN,
            "exscan": OpKind.EXSCAN,
        }[action]
        is_reduce = action == "reduce"
        nb = _num(a[0]) * dtype(3 if is_reduce else 2)
        b.add(
            rank,
            kind,
            call,
            peer=root(2) if is_reduce else -2,
            bytes_send=nb,
            bytes_recv=nb,
            seconds=_flops(a[1]) / rate,
        )
    elif action in ("alltoall", "allgather"):
        kind = OpKind.ALLTOALL if action == "alltoall" else OpKind.ALLGATHER
        b.add(rank, kind, call, bytes_send=_num(a[0]) * dtype(2), bytes_recv=_num(a[1]) * dtype(3))
    elif action in ("gather", "scatter"):
        kind = OpKind.GATHER if action == "gather" else OpKind.SCATTER
        b.add(
            rank,
            kind,
            call,
            peer=root(2),
            bytes_send=_num(a[0]) * dtype(3),
            bytes_recv=_num(a[1]) * dtype(4),
        )
    elif action == "alltoallv":
        d1, d2 = dtype(2 * n + 2), dtype(2 * n + 3)
        send = vec(1, d1)
        recv = vec(n + 2, d2)
        _num(a[n + 1])  # receive buffer size: informational
        b.add_vcollective(
            rank, OpKind.ALLTOALLV, call, send + recv, bytes_send=sum(send), bytes_recv=sum(recv)
        )
    elif action in ("gatherv", "allgatherv"):
        rest = a[1 + n :]
        if action == "gatherv":
            r = root(1 + n)
            d1, d2 = dtype(2 + n), dtype(3 + n)
        else:
            r = -2
            two = len(rest) in (2, n + 2)
            d1, d2 = (_dt(rest[0]), _dt(rest[1])) if two else (dt, dt)
        recv = vec(1, d2)
        kind = OpKind.GATHERV if action == "gatherv" else OpKind.ALLGATHERV
        b.add_vcollective(
            rank, kind, call, recv, peer=r, bytes_send=_num(a[0]) * d1, bytes_recv=sum(recv)
        )
    elif action == "scatterv":
        d1, d2 = dtype(3 + n), dtype(4 + n)
        send = vec(0, d1)
        b.add_vcollective(
            rank,
            OpKind.SCATTERV,
            call,
            send,
            peer=root(n + 1),
            bytes_send=sum(send),
            bytes_recv=_num(a[n]) * d2,
        )
    elif action == "reducescatter":
        d = dtype(n + 1)
        recv = vec(0, d)
        b.add_vcollective(
            rank,
            OpKind.REDUCE_SCATTER,
            call,
            recv,
            bytes_send=sum(recv),
            bytes_recv=recv[rank],
            seconds=_flops(a[n]) / rate,
        )
    else:  # pragma: no cover - _MPI_NAME and this dispatch list the same actions
        raise _Bad(f"unhandled action {action}")


def _dispatch_msg(ctx: _TIContext, st: _RankState, action: str, a: list[str], call: int) -> None:
    """MSG 2010 dialect: ``send p1 <bytes>``, ``recv p1``, ``Irecv p1``, ``wait``."""
    b = ctx.builder
    rank, n = st.rank, ctx.n_ranks
    if action in ("send", "isend"):
        dst = _peer(a[0], n)
        nbytes = _num(a[1])
        ctx.msg_sends.setdefault((rank, dst), []).append(nbytes)
        if action == "send":
            b.add(rank, OpKind.SEND, call, peer=dst, bytes_send=nbytes)
        else:
            rid = _post(ctx, st, (rank, dst, 0))
            b.add(rank, OpKind.ISEND, call, peer=dst, bytes_send=nbytes, request=rid)
    elif action in ("recv", "irecv"):
        src = _peer(a[0], n)
        if action == "recv":
            idx = b.add(rank, OpKind.RECV, call, peer=src)
        else:
            rid = _post(ctx, st, (src, rank, 0))
            idx = b.add(rank, OpKind.IRECV, call, peer=src, request=rid)
        ctx.msg_recvs.setdefault((src, rank), []).append((rank, idx))
    elif action == "wait":
        key = _last_pending_key(st) if not a else (_num(a[0]), _num(a[1]), _num(a[2]))
        _wait(ctx, st, key, call)
    elif action == "waitall":
        _waitall(ctx, st, call)
    elif action in ("allreduce", "reduce", "bcast", "barrier"):
        if action == "barrier":
            b.add(rank, OpKind.BARRIER, call)
        elif action == "bcast":
            nb = _num(a[0])
            b.add(rank, OpKind.BCAST, call, peer=0, bytes_send=nb, bytes_recv=nb)
        else:
            nb = _num(a[0])
            kind = OpKind.ALLREDUCE if action == "allreduce" else OpKind.REDUCE
            sec = _flops(a[1]) / ctx.flop_rate if len(a) > 1 else 0.0
            b.add(
                rank,
                kind,
                call,
                peer=0 if action == "reduce" else -2,
                bytes_send=nb,
                bytes_recv=nb,
                seconds=sec,
            )
    else:
        b.unsupported[f"TI action {action} (MSG dialect)"] += 1


def _finish(ctx: _TIContext) -> None:
    b = ctx.builder
    uncompleted = 0
    for st in ctx.states:
        if st.seen_init and not st.seen_finalize:
            raise TraceFormatError(
                f"truncated: no finalize after the last action (line {st.last_record})",
                file=st.file,
                rank=st.rank,
                record=st.last_record,
            )
        for covered in st.waitalls:
            covered.sort()
        uncompleted += sum(1 for dq in st.pending.values() for r in dq if r.owner is None)
    if ctx.msg_dialect:
        for pair, recvs in ctx.msg_recvs.items():
            sends = ctx.msg_sends.get(pair, [])
            if len(sends) != len(recvs):
                raise TraceFormatError(
                    f"MSG dialect: {len(recvs)} receives from rank {pair[0]} to rank {pair[1]} "
                    f"but {len(sends)} sends: receive sizes cannot be matched",
                    rank=pair[1],
                )
            for (rank, idx), nbytes in zip(recvs, sends, strict=True):
                b.patch(rank, idx, bytes_recv=nbytes)
    if ctx.failed_tests:
        b.note(
            f"{ctx.failed_tests} test(s) followed by a wait on the same request were "
            "failed tests (progress calls) and dropped"
        )
    if uncompleted:
        b.note(f"{uncompleted} request(s) are never completed in the trace")
    any_src = sum(
        1 for rows in b.rows for row in rows if row[0] == OpKind.IRECV and row[2] == ANY_SOURCE
    )
    if any_src:
        b.note(f"{any_src} receive(s) recorded with source -333 read as ANY_SOURCE")
