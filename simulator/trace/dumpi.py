"""Reader of DUMPI (SST) traces into a :class:`~mpiuq.simulator.trace.ir.Trace`.

Steps: read every rank file (:mod:`.dumpi_raw`); choose the clock for compute gaps;
resolve communicators across ranks (DUMPI communicator ids are local to each rank:
``comm_split``/``comm_dup``/``comm_create`` are matched collectively per parent
communicator, groups are tracked as lists of world ranks); then lower each rank's
calls to operations.

Request ids are matched with a FIFO per id, because DUMPI ids repeat among
simultaneously pending requests (LULESH). A single ``.bin`` file without its
``.meta`` is a *partial* trace: world size and the file's rank come from its
``comm_size``/``comm_rank`` records, and members of communicators that only the
missing ranks could name are ``UNKNOWN_PEER``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import numpy as np

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.dumpi_files import find_dumpi_files, find_dumpi_meta
from mpiuq.simulator.trace.dumpi_raw import RawCall, RawRank, read_dumpi_rank
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import ANY_SOURCE, ANY_TAG, NO_PEER, UNKNOWN_PEER, OpKind, Trace

__all__ = ["CLOCKS", "find_dumpi_files", "find_dumpi_meta", "read_dumpi"]

CLOCKS = ("wall", "cpu", "auto")
#: auto clock: CPU gaps when (sum of wall gaps) / (sum of CPU gaps) over all ranks exceeds this
OVERSUBSCRIPTION_RATIO = 2.0

_COMM_NULL, _COMM_WORLD, _COMM_SELF = 1, 2, 3
_GROUP_NULL, _GROUP_EMPTY = 1, 2
_REQUEST_NULL = 1
_BOOKKEEPING = frozenset(
    {
        "init",
        "init_thread",
        "finalize",
        "comm_split",
        "comm_dup",
        "comm_create",
        "comm_free",
        "comm_group",
        "group_incl",
        "group_excl",
        "group_free",
    }
)
_CREATE = frozenset({"comm_split", "comm_dup", "comm_create"})
_MPI_NAMES = {"sendrecv_replace": "MPI_Sendrecv_replace", "reduce_scatter": "MPI_Reduce_scatter"}


def _mpi_name(short: str) -> str:
    return _MPI_NAMES.get(short, "MPI_" + short.capitalize())


# --- clock ----------------------------------------------------------------------------------
def _gap_sums(calls: list[RawCall]) -> tuple[float, float]:
    wall = cpu = 0.0
    for a, b in pairwise(calls):
        wall += max(0.0, b.wall_start - a.wall_stop)
        cpu += max(0.0, b.cpu_start - a.cpu_stop)
    return wall, cpu


def _choose_clock(raws: list[RawRank], clock: str) -> tuple[bool, str]:
    """Pick the clock for compute gaps; ``auto`` compares wall and CPU gap totals.

    The ratio is taken over the totals of all ranks rather than as a median of per-rank
    ratios: in the oversubscribed LULESH runs most ranks have ratio ~1 while a few
    descheduled ranks carry most of the inflated wall gaps (27 ranks: 0.86 s wall vs
    0.09 s CPU per rank on average, but a per-rank median ratio of ~1).
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    sums = np.array([_gap_sums(r.calls) for r in raws]).reshape(-1, 2)
    wall, cpu = float(sums[:, 0].sum()), float(sums[:, 1].sum())
    ratio = wall / cpu if cpu > 0.0 else float("nan")
    if clock == "auto":
        use_cpu = cpu > 0.0 and ratio > OVERSUBSCRIPTION_RATIO
        why = f"auto: wall/CPU gap ratio {ratio:.3g} {'>' if use_cpu else '<='} "
        why += f"{OVERSUBSCRIPTION_RATIO:g}, totals over ranks {wall:.4g} s / {cpu:.4g} s"
    else:
        use_cpu = clock == "cpu"
        why = f"requested; wall/CPU gap ratio {ratio:.3g}"
    name = "CPU" if use_cpu else "wall"
    return use_cpu, (
        f"compute gaps from the {name} clock ({why}); time inside calls that produce no "
        "operation (Comm_rank, Wtime, type calls...) counts as compute"
    )


# --- communicators --------------------------------------------------------------------------
@dataclass
class _CommState:
    """Per-rank communicator and group tables (local DUMPI id -> global id / world ranks)."""

    rank: int
    comms: dict[int, int] = field(default_factory=dict)
    groups: dict[int, list[int]] = field(default_factory=dict)
    seq: dict[int, int] = field(default_factory=dict)
    created: dict[int, int | None] = field(default_factory=dict)  # call index -> global id
    growable: set[int] = field(default_factory=set)  # partial traces: comms of unknown size
    partial: bool = False


def _self_comm(b: TraceBuilder, rank: int) -> int:
    return b.add_comm([rank], key=("self", rank))


def _apply_local(st: _CommState, b: TraceBuilder, call: RawCall, file: str) -> None:
    a = call.args
    if call.name == "comm_free":
        st.comms.pop(a[0], None)
    elif call.name == "comm_group":
        g = _lookup(st, a[0], call, file)
        st.groups[a[1]] = list(b.comms[g])
    elif call.name in ("group_incl", "group_excl"):
        base = st.groups.get(a[0])
        if base is None:
            raise TraceFormatError(
                f"{call.name} on unknown group id {a[0]}",
                file=file,
                rank=st.rank,
                record=call.index,
            )
        try:
            if call.name == "group_incl":
                st.groups[a[2]] = [base[i] for i in a[1]]
            else:
                drop = set(a[1])
                st.groups[a[2]] = [m for i, m in enumerate(base) if i not in drop]
        except IndexError:
            raise TraceFormatError(
                f"{call.name} ranks {a[1]} outside group of size {len(base)}",
                file=file,
                rank=st.rank,
                record=call.index,
            ) from None


def _lookup(st: _CommState, local: int, call: RawCall, file: str) -> int:
    g = st.comms.get(local)
    if g is None and st.partial:
        raise _Unknown(local)
    if g is None:
        raise TraceFormatError(
            f"{_mpi_name(call.name)} on communicator id {local}, which this rank never created "
            "(or already freed)",
            file=file,
            rank=st.rank,
            record=call.index,
        )
    return g


def _resolve_full(raws: list[RawRank], b: TraceBuilder, ranks: list[int]) -> list[_CommState]:
    """Match communicator creations collectively across all ranks."""
    states = [_CommState(r, {_COMM_WORLD: 0, _COMM_SELF: _self_comm(b, r)}) for r in ranks]
    events = [[c for c in raw.calls if c.name in _CREATE or c.name in _BOOKKEEPING] for raw in raws]
    ptr = [0] * len(raws)
    while True:
        arrived: dict[tuple[int, int], list[int]] = {}
        for i, raw in enumerate(raws):
            st = states[i]
            while ptr[i] < len(events[i]):
                call = events[i][ptr[i]]
                if call.name not in _CREATE:
                    _apply_local(st, b, call, raw.file)
                    ptr[i] += 1
                    continue
                parent = _lookup(st, call.args[0], call, raw.file)
                arrived.setdefault((parent, st.seq.get(parent, 0)), []).append(i)
                break
        if not arrived:
            break
        progress = False
        for (parent, seq), idx in arrived.items():
            members = b.comms[parent]
            if sorted(states[i].rank for i in idx) != sorted(members):
                continue
            _create_collectively(raws, states, events, ptr, idx, parent, seq, b)
            progress = True
        if not progress:
            (parent, _seq), idx = next(iter(arrived.items()))
            i = idx[0]
            call = events[i][ptr[i]]
            raise TraceFormatError(
                f"{_mpi_name(call.name)} on a communicator of {len(b.comms[parent])} ranks is "
                f"not matched by the same call on every member (arrived: "
                f"{sorted(states[j].rank for j in idx)})",
                file=raws[i].file,
                rank=states[i].rank,
                record=call.index,
            )
    return states


def _create_collectively(
    raws: list[RawRank],
    states: list[_CommState],
    events: list[list[RawCall]],
    ptr: list[int],
    idx: list[int],
    parent: int,
    seq: int,
    b: TraceBuilder,
) -> None:
    calls = {i: events[i][ptr[i]] for i in idx}
    kinds = {c.name for c in calls.values()}
    if len(kinds) != 1:
        i = idx[0]
        raise TraceFormatError(
            f"members of communicator {parent} call different creation "
            f"functions {sorted(kinds)} at the same point",
            file=raws[i].file,
            rank=states[i].rank,
            record=calls[i].index,
        )
    kind = kinds.pop()
    members = b.comms[parent]
    new_ids: dict[int, int | None] = {}
    if kind == "comm_dup":
        g = b.add_comm(list(members), key=("dup", parent, seq))
        new_ids = dict.fromkeys(idx, g)
    elif kind == "comm_split":
        by_color: dict[int, list[tuple[int, int, int]]] = {}
        for i in idx:
            _old, color, key, _new = calls[i].args
            if color >= 0:
                by_color.setdefault(color, []).append((key, members.index(states[i].rank), i))
        new_ids = dict.fromkeys(idx)
        for color, entries in sorted(by_color.items()):
            entries.sort()
            g = b.add_comm(
                [members[pos] for _k, pos, _i in entries], key=("split", parent, seq, color)
            )
            for _k, _pos, i in entries:
                new_ids[i] = g
    else:  # comm_create: the group (world ranks) is known locally on every rank
        new_ids = dict.fromkeys(idx)
        for i in idx:
            gid = calls[i].args[1]
            if gid in (_GROUP_NULL, _GROUP_EMPTY):
                continue
            group = states[i].groups.get(gid)
            if group is None:
                raise TraceFormatError(
                    f"MPI_Comm_create with unknown group id {gid}",
                    file=raws[i].file,
                    rank=states[i].rank,
                    record=calls[i].index,
                )
            if states[i].rank in group:
                new_ids[i] = b.add_comm(list(group), key=("create", parent, seq, tuple(group)))
    for i in idx:
        st = states[i]
        st.seq[parent] = seq + 1
        st.created[calls[i].index] = new_ids[i]
        ptr[i] += 1
        newcomm = calls[i].args[-1]
        if new_ids[i] is not None and newcomm != _COMM_NULL:
            st.comms[newcomm] = new_ids[i]  # type: ignore[assignment]


def _partial_world(raw: RawRank) -> tuple[int, int, list[str]]:
    """World size and rank of a lone rank file, from its own records."""
    notes = []
    size = rank = None
    top = -1
    for c in raw.calls:
        if c.name == "comm_size" and c.args[0] == _COMM_WORLD:
            size = c.args[1]
        elif c.name == "comm_rank" and c.args[0] == _COMM_WORLD:
            rank = c.args[1]
        elif (
            c.name
            in (
                "send",
                "bsend",
                "ssend",
                "rsend",
                "isend",
                "ibsend",
                "issend",
                "irsend",
                "recv",
                "irecv",
            )
            and c.args[4] == _COMM_WORLD
        ):
            top = max(top, c.args[2])
    if rank is None:
        rank = 0
        notes.append(
            "partial trace: no MPI_Comm_rank on MPI_COMM_WORLD; the file is taken as rank 0"
        )
    if size is None:
        size = max(top, rank) + 1
        notes.append(
            f"partial trace: no MPI_Comm_size on MPI_COMM_WORLD; world size {size} "
            "inferred from the largest peer rank"
        )
    return size, rank, notes


class _Unknown(Exception):
    """Internal: a partial trace uses a communicator created before the trace started."""


def unknown_comm(st: _CommState, b: TraceBuilder, local: int) -> int:
    """Register a communicator a partial trace uses without having created it."""
    g = b.add_comm([UNKNOWN_PEER], key=("unknown", st.rank, local, len(b.comms)))
    st.comms[local] = g
    st.growable.add(g)
    b.note(
        f"partial trace: communicator id {local} was created before the trace started; "
        "its members are unknown"
    )
    return g


def _resolve_partial(raw: RawRank, b: TraceBuilder, rank: int) -> _CommState:
    """Communicators of a lone rank: only what this rank's records tell."""
    st = _CommState(rank, {_COMM_WORLD: 0, _COMM_SELF: _self_comm(b, rank)}, partial=True)
    calls = raw.calls
    for k, call in enumerate(calls):
        if call.name not in _CREATE:
            if call.name in _BOOKKEEPING:
                try:
                    _apply_local(st, b, call, raw.file)
                except _Unknown as exc:
                    unknown_comm(st, b, exc.args[0])
                    _apply_local(st, b, call, raw.file)
            continue
        try:
            parent = _lookup(st, call.args[0], call, raw.file)
        except _Unknown as exc:
            parent = unknown_comm(st, b, exc.args[0])
        seq = st.seq.get(parent, 0)
        st.seq[parent] = seq + 1
        newcomm = call.args[-1]
        g: int | None = None
        if call.name == "comm_dup":
            g = b.add_comm(list(b.comms[parent]), key=("dup", parent, seq))
        elif call.name == "comm_create":
            group = st.groups.get(call.args[1], [])
            if rank in group:
                g = b.add_comm(list(group), key=("create", parent, seq))
        elif call.args[1] >= 0:  # split with a defined color: members unknown
            size, pos = _partial_comm_shape(calls, k, newcomm)
            members = [UNKNOWN_PEER] * size
            if pos is not None:
                members[pos] = rank
            g = b.add_comm(members, key=("split", parent, seq))
            st.growable.add(g)
        st.created[call.index] = g
        if g is not None and newcomm != _COMM_NULL:
            st.comms[newcomm] = g
    return st


def _partial_comm_shape(calls: list[RawCall], k: int, local: int) -> tuple[int, int | None]:
    """Size and own position of a split communicator of a lone rank, from later records."""
    size = pos = None
    for c in calls[k + 1 :]:
        if c.name == "comm_free" and c.args[0] == local:
            break
        if c.name in _CREATE and c.args[-1] == local:
            break
        a = c.args
        if c.name == "comm_size" and a[0] == local:
            size = a[1]
        elif c.name == "comm_rank" and a[0] == local:
            pos = a[1]
    n = max(size or 0, (pos or 0) + 1, 1)
    return n, pos


_SENDS = ("send", "bsend", "ssend", "rsend")
_ISENDS = ("isend", "ibsend", "issend", "irsend")


# --- lowering -------------------------------------------------------------------------------
class _Bad(Exception):
    pass


@dataclass
class _Lowering:
    b: TraceBuilder
    raw: RawRank
    st: _CommState
    rank: int
    use_cpu: bool
    fifo: dict[int, deque[int]] = field(default_factory=dict)
    local: dict[int, int] = field(default_factory=dict)

    def size(self, count: int, dt: int) -> int:
        sizes = self.raw.type_sizes
        if not 0 <= dt < len(sizes):
            raise _Bad(f"datatype id {dt} outside the trace's size table (0..{len(sizes) - 1})")
        if count < 0:
            raise _Bad(f"negative count {count}")
        return count * sizes[dt]

    def comm(self, local: int) -> int:
        g = self.local.get(local)
        if g is None and self.st.partial:
            g = self.local[local] = unknown_comm(self.st, self.b, local)
        if g is None:
            raise _Bad(f"communicator id {local} was never created on this rank (or was freed)")
        return g

    def world(self, comm: int, p: int) -> int:
        members = self.b.comms[comm]
        if comm in self.st.growable and p >= len(members):
            members.extend([UNKNOWN_PEER] * (p + 1 - len(members)))
        try:
            return self.b.world_rank(comm, p)
        except IndexError as exc:
            raise _Bad(str(exc)) from None

    def peer(self, comm: int, p: int, recv: bool) -> int | None:
        if p == -1 and recv:
            return ANY_SOURCE
        if p < 0:
            return None  # MPI_PROC_NULL and friends: no message
        return self.world(comm, p)

    def root(self, comm: int, r: int) -> int:
        return self.world(comm, r)

    def post(self, rid_local: int) -> int:
        rid = self.b.new_request()
        self.fifo.setdefault(rid_local, deque()).append(rid)
        return rid

    def complete(self, rid_local: int, name: str) -> int | None:
        if rid_local == _REQUEST_NULL:
            return None
        dq = self.fifo.get(rid_local)
        if not dq:
            self.b.unsupported[f"{name} (request never posted in the trace)"] += 1
            return None
        return dq.popleft()


def _lower_rank(lw: _Lowering) -> None:
    b, rank = lw.b, lw.rank
    lw.local = {_COMM_WORLD: 0, _COMM_SELF: lw.st.comms.get(_COMM_SELF, 0)}
    prev_stop: float | None = None
    for call in lw.raw.calls:
        start, stop = (
            (call.cpu_start, call.cpu_stop) if lw.use_cpu else (call.wall_start, call.wall_stop)
        )
        name = call.name
        if name in _BOOKKEEPING:
            if name in _CREATE:
                g = lw.st.created.get(call.index)
                if g is not None and call.args[-1] != _COMM_NULL:
                    lw.local[call.args[-1]] = g
            elif name == "comm_free":
                lw.local.pop(call.args[0], None)
            elif name == "finalize" and prev_stop is not None:
                b.add_compute(rank, start - prev_stop)
            if prev_stop is None:
                prev_stop = stop
            continue
        n_before = b.n_ops(rank)
        gap = start - prev_stop if prev_stop is not None else 0.0
        b.add_compute(rank, gap)
        n_mid = b.n_ops(rank)
        try:
            _lower_call(lw, call)
        except _Bad as exc:
            raise TraceFormatError(
                f"{_mpi_name(name)}: {exc}", file=lw.raw.file, rank=rank, record=call.index
            ) from None
        if b.n_ops(rank) > n_mid:
            prev_stop = stop
        else:
            del b.rows[rank][n_before:]  # the call produced no operation: no gap either
            if prev_stop is None:
                prev_stop = stop


def _lower_call(lw: _Lowering, call: RawCall) -> None:
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    cid = b.call_id(_mpi_name(name))
    if name in _SENDS or name in _ISENDS:
        count, dt, dest, tag, comm_l = a[:5]
        comm = lw.comm(comm_l)
        peer = lw.peer(comm, dest, recv=False)
        if peer is None:
            b.unsupported[f"{_mpi_name(name)} to MPI_PROC_NULL"] += 1
            if name in _ISENDS:
                lw.post(a[5])
            return
        nb = lw.size(count, dt)
        if name in _SENDS:
            b.add(rank, OpKind.SEND, cid, peer=peer, tag=tag, comm=comm, bytes_send=nb)
        else:
            b.add(
                rank,
                OpKind.ISEND,
                cid,
                peer=peer,
                tag=tag,
                comm=comm,
                bytes_send=nb,
                request=lw.post(a[5]),
            )
    elif name in ("recv", "irecv"):
        count, dt, src, tag, comm_l = a[:5]
        comm = lw.comm(comm_l)
        peer = lw.peer(comm, src, recv=True)
        tag = ANY_TAG if tag == -1 else tag
        if peer is None:
            b.unsupported[f"{_mpi_name(name)} from MPI_PROC_NULL"] += 1
            if name == "irecv":
                lw.post(a[5])
            return
        nb = lw.size(count, dt)
        if name == "recv":
            b.add(rank, OpKind.RECV, cid, peer=peer, tag=tag, comm=comm, bytes_recv=nb)
        else:
            b.add(
                rank,
                OpKind.IRECV,
                cid,
                peer=peer,
                tag=tag,
                comm=comm,
                bytes_recv=nb,
                request=lw.post(a[5]),
            )
    elif name in ("sendrecv", "sendrecv_replace"):
        scount, stype, dest, stag, rcount, rtype, src, rtag, comm_l = a
        comm = lw.comm(comm_l)
        dst_w = lw.peer(comm, dest, recv=False)
        src_w = lw.peer(comm, src, recv=True)
        b.add(
            rank,
            OpKind.SENDRECV,
            cid,
            peer=NO_PEER if dst_w is None else dst_w,
            peer2=NO_PEER if src_w is None else src_w,
            tag=stag,
            tag2=ANY_TAG if rtag == -1 else rtag,
            comm=comm,
            bytes_send=0 if dst_w is None else lw.size(scount, stype),
            bytes_recv=0 if src_w is None else lw.size(rcount, rtype),
        )
    elif name in ("wait", "test"):
        if name == "test" and not a[1]:
            return  # failed test: a progress call
        rid = lw.complete(a[0], _mpi_name(name))
        if rid is not None:
            b.add(rank, OpKind.WAIT, cid, request=rid)
        elif a[0] == _REQUEST_NULL:
            b.unsupported[f"{_mpi_name(name)} on MPI_REQUEST_NULL"] += 1
    elif name in ("waitall", "testall"):
        if name == "testall" and not a[1]:
            return
        completed = [lw.complete(r, _mpi_name(name)) for r in a[0]]
        b.add_waitall(rank, cid, [r for r in completed if r is not None])
    elif name in ("waitany", "testany", "waitsome", "testsome"):
        reqs = a[0]
        if name in ("waitany", "testany"):
            ok = name == "waitany" or bool(a[2])
            picked = [a[1]] if ok and 0 <= a[1] < len(reqs) else []
        else:
            picked = [i for i in a[1] if 0 <= i < len(reqs)]
        done: list[int] = [
            r for r in (lw.complete(reqs[i], _mpi_name(name)) for i in picked) if r is not None
        ]
        if len(done) == 1:
            b.add(rank, OpKind.WAIT, cid, request=done[0])
        elif done:
            b.add_waitall(rank, cid, done)
    else:
        _lower_collective(lw, call, cid)


def _lower_collective(lw: _Lowering, call: RawCall, cid: int) -> None:
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    if name == "barrier":
        b.add(rank, OpKind.BARRIER, cid, comm=lw.comm(a[0]))
    elif name in ("bcast", "reduce"):
        count, dt, root, comm_l = a
        comm = lw.comm(comm_l)
        nb = lw.size(count, dt)
        kind = OpKind.BCAST if name == "bcast" else OpKind.REDUCE
        b.add(rank, kind, cid, peer=lw.root(comm, root), comm=comm, bytes_send=nb, bytes_recv=nb)
    elif name in ("allreduce", "scan", "exscan"):
        count, dt, comm_l = a
        nb = lw.size(count, dt)
        kind = {"allreduce": OpKind.ALLREDUCE, "scan": OpKind.SCAN, "exscan": OpKind.EXSCAN}[name]
        b.add(rank, kind, cid, comm=lw.comm(comm_l), bytes_send=nb, bytes_recv=nb)
    elif name in ("gather", "scatter", "allgather", "alltoall"):
        scount, stype, rcount, rtype = a[:4]
        comm = lw.comm(a[-1])
        kind = {
            "gather": OpKind.GATHER,
            "scatter": OpKind.SCATTER,
            "allgather": OpKind.ALLGATHER,
            "alltoall": OpKind.ALLTOALL,
        }[name]
        peer = lw.root(comm, a[4]) if name in ("gather", "scatter") else NO_PEER
        b.add(
            rank,
            kind,
            cid,
            peer=peer,
            comm=comm,
            bytes_send=lw.size(scount, stype),
            bytes_recv=lw.size(rcount, rtype),
        )
    elif name in ("gatherv", "allgatherv"):
        scount, stype, rcounts, rtype = a[:4]
        comm = lw.comm(a[5] if name == "gatherv" else a[4])
        recv = _vec(lw, rcounts, rtype, comm, is_root_side=True)
        kind = OpKind.GATHERV if name == "gatherv" else OpKind.ALLGATHERV
        peer = lw.root(comm, a[4]) if name == "gatherv" else NO_PEER
        b.add_vcollective(
            rank,
            kind,
            cid,
            recv,
            peer=peer,
            comm=comm,
            bytes_send=lw.size(scount, stype),
            bytes_recv=sum(recv),
        )
    elif name == "scatterv":
        scounts, stype, rcount, rtype, root, comm_l, _n = a
        comm = lw.comm(comm_l)
        send = _vec(lw, scounts, stype, comm, is_root_side=True)
        b.add_vcollective(
            rank,
            OpKind.SCATTERV,
            cid,
            send,
            peer=lw.root(comm, root),
            comm=comm,
            bytes_send=sum(send),
            bytes_recv=lw.size(rcount, rtype),
        )
    elif name == "alltoallv":
        scounts, stype, rcounts, rtype, comm_l, _n = a
        comm = lw.comm(comm_l)
        send = _vec(lw, scounts, stype, comm, is_root_side=False)
        recv = _vec(lw, rcounts, rtype, comm, is_root_side=False)
        b.add_vcollective(
            rank,
            OpKind.ALLTOALLV,
            cid,
            send + recv,
            comm=comm,
            bytes_send=sum(send),
            bytes_recv=sum(recv),
        )
    elif name == "reduce_scatter":
        rcounts, dt, comm_l, _n = a
        comm = lw.comm(comm_l)
        recv = _vec(lw, rcounts, dt, comm, is_root_side=False)
        pos = b.comms[comm].index(rank) if rank in b.comms[comm] else 0
        b.add_vcollective(
            rank,
            OpKind.REDUCE_SCATTER,
            cid,
            recv,
            comm=comm,
            bytes_send=sum(recv),
            bytes_recv=recv[pos] if recv else 0,
        )
    else:
        b.unsupported[_mpi_name(name)] += 1


def _vec(
    lw: _Lowering, counts: tuple[int, ...], dt: int, comm: int, is_root_side: bool
) -> list[int]:
    """Per-rank byte counts; non-root ranks of rooted v-collectives record no counts (zeros)."""
    if counts:
        lw.world(comm, len(counts) - 1)  # grows communicators of partial traces
    n = lw.b.comm_size(comm)
    if not counts and is_root_side:
        return [0] * n
    if len(counts) != n:
        raise _Bad(f"{len(counts)} per-rank counts for a communicator of {n} ranks")
    return [lw.size(c, dt) for c in counts]


def read_dumpi(path: str | Path, *, clock: str = "auto") -> Trace:
    """Read a DUMPI trace.

    Parameters
    ----------
    path : str or Path
        ``.meta`` file, directory holding one ``.meta``, or a single ``.bin`` file
        (partial trace of one rank).
    clock : {"wall", "cpu", "auto"}
        Clock for compute gaps (next call's start - previous operation's stop).
        ``auto`` uses CPU time when the run was oversubscribed (sum of wall gaps /
        sum of CPU gaps over all ranks > 2), wall time otherwise.

    Returns
    -------
    Trace
        With ``format="dumpi"``; the clock choice and assumptions are in ``notes``.

    Raises
    ------
    TraceFormatError
        On a truncated or malformed file, naming file, rank and record index.
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    files, world = find_dumpi_files(path)
    raws = [read_dumpi_rank(f) for f in files]
    use_cpu, clock_note = _choose_clock(raws, clock)
    notes: list[str] = []
    if world is None:
        n_ranks, rank, notes = _partial_world(raws[0])
        ranks = [rank]
        notes.insert(
            0,
            f"partial trace: one rank file (rank {rank} of {n_ranks}); the other "
            "ranks have no operations and cannot be replayed",
        )
    else:
        n_ranks, ranks = world, list(range(world))
    b = TraceBuilder("dumpi", str(path), n_ranks)
    for n in [*notes, clock_note]:
        b.note(n)
    if world is None:
        states = [_resolve_partial(raws[0], b, ranks[0])]
    else:
        states = _resolve_full(raws, b, ranks)
    for raw, st, r in zip(raws, states, ranks, strict=True):
        lw = _Lowering(b, raw, st, r, use_cpu)
        _lower_rank(lw)
        pending = sum(len(dq) for dq in lw.fifo.values())
        if pending:
            b.note(f"rank {r}: {pending} request(s) never completed in the trace")
        for other, cnt in raw.other.items():
            b.unsupported[_mpi_name(other)] += cnt
    return b.build()
