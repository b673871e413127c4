"""Lowering of one rank's DUMPI calls to trace operations.

Compute gaps come from the chosen clock (next call's start - previous operation's
stop). Request ids are matched with a FIFO per id, because DUMPI ids repeat among
simultaneously pending requests (LULESH).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.dumpi.common import (
    BOOKKEEPING,
    COMM_NULL,
    COMM_SELF,
    COMM_WORLD,
    CREATE,
    REQUEST_NULL,
    mpi_name,
)
from mpiuq.simulator.trace.dumpi.comms import CommState, unknown_comm
from mpiuq.simulator.trace.dumpi.raw import RawCall, RawRank
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import ANY_SOURCE, ANY_TAG, NO_PEER, UNKNOWN_PEER, OpKind
from mpiuq.simulator.trace.limits import MAX_ACTION_SECONDS, MAX_MESSAGE_BYTES, MAX_RANKS, MAX_TAG

_SENDS = ("send", "bsend", "ssend", "rsend")
_ISENDS = ("isend", "ibsend", "issend", "irsend")


class _Bad(Exception):
    pass


@dataclass
class Lowering:
    b: TraceBuilder
    raw: RawRank
    st: CommState
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
        nb = count * sizes[dt]
        if not 0 <= nb <= MAX_MESSAGE_BYTES:
            raise _Bad(
                f"message of {nb} bytes ({count} x {sizes[dt]} B, datatype {dt}) outside "
                f"0..{MAX_MESSAGE_BYTES} (1 TiB)"
            )
        return nb

    def tag(self, tag: int, recv: bool) -> int:
        """A message tag: 0..MAX_TAG, or -1 (MPI_ANY_TAG) on receives."""
        if recv and tag == -1:
            return ANY_TAG
        if not 0 <= tag <= MAX_TAG:
            lo = -1 if recv else 0
            raise _Bad(
                f"tag {tag} outside {lo}..{MAX_TAG}" + (" (-1 = MPI_ANY_TAG)" if recv else "")
            )
        return tag

    def comm(self, local: int) -> int:
        g = self.local.get(local)
        if g is None and self.st.partial:
            g = self.local[local] = unknown_comm(self.st, self.b, local)
        if g is None:
            raise _Bad(f"communicator id {local} was never created on this rank (or was freed)")
        return g

    def world(self, comm: int, p: int) -> int:
        members = self.b.comms[comm]
        if comm in self.st.growable and len(members) <= p < MAX_RANKS:
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
        if rid_local == REQUEST_NULL:
            return None
        dq = self.fifo.get(rid_local)
        if not dq:
            self.b.unsupported[f"{name} (request never posted in the trace)"] += 1
            return None
        return dq.popleft()


def lower_rank(lw: Lowering) -> None:
    b, rank = lw.b, lw.rank
    lw.local = {COMM_WORLD: 0, COMM_SELF: lw.st.comms.get(COMM_SELF, 0)}
    prev_stop: float | None = None
    for call in lw.raw.calls:
        start, stop = (
            (call.cpu_start, call.cpu_stop) if lw.use_cpu else (call.wall_start, call.wall_stop)
        )
        if prev_stop is not None and start - prev_stop > MAX_ACTION_SECONDS:
            clock = "CPU" if lw.use_cpu else "wall"
            raise TraceFormatError(
                f"{mpi_name(call.name)} starts {start - prev_stop:.4g} s ({clock} clock) after "
                f"the previous call; more than the {MAX_ACTION_SECONDS:g} s allowed for one "
                "compute burst (corrupt timestamps?)",
                file=lw.raw.file,
                rank=lw.rank,
                record=call.index,
            )
        name = call.name
        if name in BOOKKEEPING:
            if name in CREATE:
                g = lw.st.created.get(call.index)
                if g is not None and call.args[-1] != COMM_NULL:
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
                f"{mpi_name(name)}: {exc}", file=lw.raw.file, rank=rank, record=call.index
            ) from None
        if b.n_ops(rank) > n_mid:
            prev_stop = stop
        else:
            del b.rows[rank][n_before:]  # the call produced no operation: no gap either
            if prev_stop is None:
                prev_stop = stop


def _lower_call(lw: Lowering, call: RawCall) -> None:
    name = call.name
    cid = lw.b.call_id(mpi_name(name))  # interned first: call ids follow first use
    if name in _SENDS or name in _ISENDS:
        _lower_send(lw, call, cid)
    elif name in ("recv", "irecv"):
        _lower_recv(lw, call, cid)
    elif name in ("sendrecv", "sendrecv_replace"):
        _lower_sendrecv(lw, call, cid)
    elif name in ("wait", "test", "waitall", "testall"):
        _lower_completion(lw, call, cid)
    elif name in ("waitany", "testany", "waitsome", "testsome"):
        _lower_partial_completion(lw, call, cid)
    else:
        _lower_collective(lw, call, cid)


def _lower_send(lw: Lowering, call: RawCall, cid: int) -> None:
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    count, dt, dest, tag, comm_l = a[:5]
    comm = lw.comm(comm_l)
    peer = lw.peer(comm, dest, recv=False)
    if peer is None:
        b.unsupported[f"{mpi_name(name)} to MPI_PROC_NULL"] += 1
        if name in _ISENDS:
            lw.post(a[5])
        return
    nb = lw.size(count, dt)
    tag = lw.tag(tag, recv=False)
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


def _lower_recv(lw: Lowering, call: RawCall, cid: int) -> None:
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    count, dt, src, tag, comm_l = a[:5]
    comm = lw.comm(comm_l)
    peer = lw.peer(comm, src, recv=True)
    if peer is None:
        b.unsupported[f"{mpi_name(name)} from MPI_PROC_NULL"] += 1
        if name == "irecv":
            lw.post(a[5])
        return
    nb = lw.size(count, dt)
    tag = lw.tag(tag, recv=True)
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


def _lower_sendrecv(lw: Lowering, call: RawCall, cid: int) -> None:
    scount, stype, dest, stag, rcount, rtype, src, rtag, comm_l = call.args
    comm = lw.comm(comm_l)
    dst_w = lw.peer(comm, dest, recv=False)
    src_w = lw.peer(comm, src, recv=True)
    if dst_w is not None:
        lw.tag(stag, recv=False)
    if src_w is not None:
        lw.tag(rtag, recv=True)
    lw.b.add(
        lw.rank,
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


def _lower_completion(lw: Lowering, call: RawCall, cid: int) -> None:
    """``wait``/``test`` (one request) and ``waitall``/``testall``; failed tests are
    progress calls and produce nothing."""
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    if name in ("wait", "test"):
        if name == "test" and not a[1]:
            return  # failed test: a progress call
        rid = lw.complete(a[0], mpi_name(name))
        if rid is not None:
            b.add(rank, OpKind.WAIT, cid, request=rid)
        elif a[0] == REQUEST_NULL:
            b.unsupported[f"{mpi_name(name)} on MPI_REQUEST_NULL"] += 1
    else:
        if name == "testall" and not a[1]:
            return
        completed = [lw.complete(r, mpi_name(name)) for r in a[0]]
        b.add_waitall(rank, cid, [r for r in completed if r is not None])


def _lower_partial_completion(lw: Lowering, call: RawCall, cid: int) -> None:
    """``waitany``/``testany``/``waitsome``/``testsome``: the requests they picked."""
    b, rank, name, a = lw.b, lw.rank, call.name, call.args
    reqs = a[0]
    if name in ("waitany", "testany"):
        ok = name == "waitany" or bool(a[2])
        picked = [a[1]] if ok and 0 <= a[1] < len(reqs) else []
    else:
        picked = [i for i in a[1] if 0 <= i < len(reqs)]
    done: list[int] = [
        r for r in (lw.complete(reqs[i], mpi_name(name)) for i in picked) if r is not None
    ]
    if len(done) == 1:
        b.add(rank, OpKind.WAIT, cid, request=done[0])
    elif done:
        b.add_waitall(rank, cid, done)


def _lower_collective(lw: Lowering, call: RawCall, cid: int) -> None:
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
        b.unsupported[mpi_name(name)] += 1


def _vec(
    lw: Lowering, counts: tuple[int, ...], dt: int, comm: int, is_root_side: bool
) -> list[int]:
    """Per-rank byte counts; non-root ranks of rooted v-collectives record no counts (zeros)."""
    if counts:
        lw.world(comm, len(counts) - 1)  # grows communicators of partial traces
    n = lw.b.comm_size(comm)
    if not counts and is_root_side:
        return [0] * n
    if len(counts) != n:
        raise _Bad(f"{len(counts)} per-rank counts for a communicator of {n} ranks")
    out = [lw.size(c, dt) for c in counts]
    if sum(out) > MAX_MESSAGE_BYTES:
        raise _Bad(f"{sum(out)} bytes in one collective: more than {MAX_MESSAGE_BYTES} (1 TiB)")
    return out
