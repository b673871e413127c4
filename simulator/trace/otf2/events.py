"""The events of an OTF2 archive translated to trace operations, location by location.

:class:`EventReader` holds the archive's definitions (world ranks, clock, communicators)
and the :class:`Location` state of every MPI location; :meth:`EventReader.event` is
called for every event in archive order (by :func:`~.reader.read_otf2`, in the reader
child) and :meth:`EventReader.finish` builds the trace. See :mod:`.reader` for how
ranks, peers, sizes and compute gaps are read.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpiuq.simulator.collectives import COLLECTIVES
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import ANY_SOURCE, ANY_TAG, NO_PEER, OpKind, Trace
from mpiuq.simulator.trace.limits import (
    MAX_ACTION_SECONDS,
    MAX_MESSAGE_BYTES,
    MAX_OP_SECONDS,
    MAX_RANKS,
    MAX_TAG,
)

__all__ = ["MAX_TIMER_RESOLUTION", "EventReader", "Location"]

_UNDEFINED_ROOT = 0xFFFFFFFF
#: Largest timer resolution accepted, ticks per second (1 THz: far above any real
#: clock; the shared traces use 1-2.1 GHz).
MAX_TIMER_RESOLUTION = 1e12
_SEND_REGIONS = frozenset({"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"})
_SENDRECV_REGIONS = frozenset({"MPI_Sendrecv", "MPI_Sendrecv_replace"})
_WAIT_ALL_REGIONS = frozenset({"MPI_Waitall", "MPI_Testall"})
# nonblocking forms of the collectives, including two that mpiuq does not replay
_NB_COLLECTIVES = frozenset(
    "MPI_I" + n for n in (*COLLECTIVES, "alltoallw", "reduce_scatter_block")
)
_COLL_KIND = {
    "BARRIER": OpKind.BARRIER,
    "BCAST": OpKind.BCAST,
    "REDUCE": OpKind.REDUCE,
    "ALLREDUCE": OpKind.ALLREDUCE,
    "GATHER": OpKind.GATHER,
    "SCATTER": OpKind.SCATTER,
    "ALLGATHER": OpKind.ALLGATHER,
    "ALLTOALL": OpKind.ALLTOALL,
    "SCAN": OpKind.SCAN,
    "EXSCAN": OpKind.EXSCAN,
}
_HANDLE_OPS = frozenset(
    {
        "CREATE_HANDLE",
        "DESTROY_HANDLE",
        "CREATE_HANDLE_AND_ALLOCATE",
        "DESTROY_HANDLE_AND_DEALLOCATE",
        "ALLOCATE",
        "DEALLOCATE",
    }
)


def _enum_name(value: Any) -> str:
    return str(value).split(".")[-1]


@dataclass
class Location:
    rank: int
    prev_stop: int | None = None
    acc: int = 0  # ticks of computation accumulated while no operation was emitted
    measuring: bool = True
    region: str | None = None
    region_depth: int = 0
    gap: int = 0
    ops_in_region: int = 0
    done: list[int] = field(default_factory=list)
    sendrecv: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    isend: dict[int, deque[int]] = field(default_factory=dict)
    irecv: dict[int, deque[tuple[int, int]]] = field(default_factory=dict)
    n_events: int = 0


class EventReader:
    def __init__(self, anchor: Path, defs: Any) -> None:
        import otf2

        self.otf2 = otf2
        self.file = str(anchor)
        world = next(
            (
                g
                for g in defs.groups
                if g.group_type == otf2.GroupType.COMM_LOCATIONS and g.paradigm == otf2.Paradigm.MPI
            ),
            None,
        )
        if world is None or len(world.members) == 0:
            raise TraceFormatError("no MPI COMM_LOCATIONS group: not an MPI trace", file=self.file)
        self.rank_of = {loc: i for i, loc in enumerate(world.members)}
        clock = defs.clock_properties
        self.res = float(clock.timer_resolution)
        if not 0 < self.res <= MAX_TIMER_RESOLUTION:
            raise TraceFormatError(
                f"timer resolution {self.res:g} ticks/s outside 1..{MAX_TIMER_RESOLUTION:g}",
                file=self.file,
            )
        self.t_first = int(clock.global_offset)
        length = int(clock.trace_length)
        if length / self.res > MAX_OP_SECONDS:
            raise TraceFormatError(
                f"clock properties give a trace of {length / self.res:.4g} s, more than "
                f"{MAX_OP_SECONDS:g} s",
                file=self.file,
            )
        # events lie within [global_offset, global_offset + trace_length] (all shared
        # traces do); a length of 0 means the writer left it unset
        self.t_last = self.t_first + length if length > 0 else None
        if len(world.members) > MAX_RANKS:
            raise TraceFormatError(
                f"{len(world.members)} MPI locations, more than {MAX_RANKS}", file=self.file
            )
        self.b = TraceBuilder("otf2", str(anchor.parent), len(world.members))
        self.locs = {loc: Location(r) for loc, r in self.rank_of.items()}
        self.comm_ids: dict[Any, int | None] = {}
        world_done = False
        for comm in defs.comms:
            g = comm.group
            if g is None or g.group_type == otf2.GroupType.COMM_SELF or len(g.members) == 0:
                self.comm_ids[comm] = None  # per-rank self communicator
                continue
            try:
                members = [self.rank_of[m] for m in g.members]
            except KeyError:
                raise TraceFormatError(
                    f"communicator {comm.name!r} has a member outside the MPI COMM_LOCATIONS group",
                    file=self.file,
                ) from None
            if not world_done and members == list(range(self.b.n_ranks)):
                self.comm_ids[comm] = 0
                world_done = True
            else:
                self.comm_ids[comm] = self.b.add_comm(members, key=("otf2", comm._ref))
        self.b.note(
            f"compute gaps from OTF2 timestamps (Leave -> Enter of MPI regions, "
            f"{self.res:.6g} ticks/s), excluding time with measurement off"
        )

    # --- helpers ------------------------------------------------------------------------
    def fail(self, st: Location, msg: str) -> TraceFormatError:
        return TraceFormatError(msg, file=self.file, rank=st.rank, record=st.n_events - 1)

    def comm(self, st: Location, comm: Any) -> int:
        if comm not in self.comm_ids:
            raise self.fail(st, f"event names communicator {comm!r} that is not defined")
        g = self.comm_ids[comm]
        return g if g is not None else self.b.add_comm([st.rank], key=("self", st.rank))

    def world(self, st: Location, comm: int, r: int) -> int:
        try:
            return self.b.world_rank(comm, r)
        except IndexError as exc:
            raise self.fail(st, str(exc)) from None

    def compute(self, st: Location, ticks: int) -> None:
        """Append ``ticks`` of computation (bounded by MAX_ACTION_SECONDS)."""
        seconds = ticks / self.res
        if seconds > MAX_ACTION_SECONDS:
            raise self.fail(
                st,
                f"{seconds:.4g} s of computation between two MPI calls, more than the "
                f"{MAX_ACTION_SECONDS:g} s allowed for one burst (corrupt timestamps?)",
            )
        self.b.add_compute(st.rank, seconds)

    def bytes(self, st: Location, value: int, what: str) -> int:
        if not 0 <= value <= MAX_MESSAGE_BYTES:
            raise self.fail(st, f"{what} {value} outside 0..{MAX_MESSAGE_BYTES} (1 TiB)")
        return value

    def tag(self, st: Location, value: int) -> int:
        if not 0 <= value <= MAX_TAG:
            raise self.fail(st, f"message tag {value} outside 0..{MAX_TAG}")
        return value

    def emit(self, st: Location, kind: int, **cols: Any) -> int:
        if st.gap > 0:
            self.compute(st, st.gap)
            st.gap = 0
        st.acc = 0
        st.ops_in_region += 1
        call = self.b.call_id(st.region or "MPI_unknown")
        return self.b.add(st.rank, kind, call, **cols)

    # --- events -------------------------------------------------------------------------
    def event(self, st: Location, ev: Any) -> None:
        """One event of location ``st``: counted, its time checked against the clock
        range, then handled by its type."""
        st.n_events += 1
        name = type(ev).__name__
        t = int(ev.time)
        if t < self.t_first or (self.t_last is not None and t > self.t_last):
            raise self.fail(
                st,
                f"{name} at tick {t}, outside the trace's clock range {self.t_first}.."
                f"{self.t_last} (global offset and length from its ClockProperties)",
            )
        if name == "Enter":
            self.on_enter(st, ev, t)
        elif name == "Leave":
            self.on_leave(st, ev, t)
        elif name == "MeasurementOnOff":
            self.on_measurement(st, ev, t)
        elif name in ("MpiSend", "MpiIsend"):
            self.on_send(st, ev, name)
        elif name == "MpiRecv":
            self.on_recv(st, ev)
        elif name == "MpiIrecvRequest":
            rid = self.b.new_request()
            idx = self.emit(st, OpKind.IRECV, peer=ANY_SOURCE, tag=ANY_TAG, request=rid)
            st.irecv.setdefault(int(ev.request_id), deque()).append((rid, idx))
        elif name == "MpiIrecv":
            self.on_irecv(st, ev)
        elif name == "MpiIsendComplete":
            q2 = st.isend.get(int(ev.request_id))
            if not q2:
                self.b.unsupported["MpiIsendComplete (request never posted)"] += 1
                return
            st.done.append(q2.popleft())
        elif name == "MpiCollectiveEnd":
            self.collective(st, ev)
        elif name == "MpiRequestCancelled":
            self.b.unsupported["MPI_Cancel"] += 1
        elif name in ("NonBlockingCollectiveRequest", "NonBlockingCollectiveComplete"):
            self.b.unsupported[name] += 1

    def on_enter(self, st: Location, ev: Any, t: int) -> None:
        """Enter of a region: an outermost MPI region starts a call and ends a gap."""
        rname = ev.region.name
        if not rname.startswith("MPI_"):
            return
        st.region_depth += 1
        if st.region_depth > 1:
            return
        st.region = rname
        st.ops_in_region = 0
        st.done = []
        st.sendrecv = {}
        if st.prev_stop is not None and st.measuring:
            st.gap = st.acc + max(0, t - st.prev_stop)
        else:
            st.gap = st.acc
        if rname == "MPI_Finalize" and st.gap > 0:
            self.compute(st, st.gap)
            st.gap = st.acc = 0
            st.prev_stop = None

    def on_leave(self, st: Location, ev: Any, t: int) -> None:
        """Leave of a region: an outermost MPI region's completions are emitted."""
        if not ev.region.name.startswith("MPI_"):
            return
        st.region_depth -= 1
        if st.region_depth > 0:
            return
        self.leave(st)
        if st.ops_in_region or (st.prev_stop is None and st.region != "MPI_Finalize"):
            st.prev_stop = t
        st.region = None

    def on_measurement(self, st: Location, ev: Any, t: int) -> None:
        """Measurement switched off (the time until it is back on is no gap) or on."""
        if _enum_name(ev.measurement_mode) == "OFF":
            if st.prev_stop is not None and st.measuring:
                st.acc += max(0, t - st.prev_stop)
            st.measuring = False
            st.prev_stop = None
        else:
            st.measuring = True
            st.prev_stop = t

    def on_send(self, st: Location, ev: Any, name: str) -> None:
        """MpiSend / MpiIsend (the send half of a sendrecv is kept for its Leave)."""
        comm = self.comm(st, ev.communicator)
        peer = self.world(st, comm, int(ev.receiver))
        nb = self.bytes(st, int(ev.msg_length), "message length")
        tag = self.tag(st, int(ev.msg_tag))
        if st.region in _SENDRECV_REGIONS:
            st.sendrecv["send"] = (peer, tag, comm, nb)
        elif name == "MpiSend":
            self.emit(st, OpKind.SEND, peer=peer, tag=tag, comm=comm, bytes_send=nb)
        else:
            rid = self.b.new_request()
            st.isend.setdefault(int(ev.request_id), deque()).append(rid)
            self.emit(st, OpKind.ISEND, peer=peer, tag=tag, comm=comm, bytes_send=nb, request=rid)

    def on_recv(self, st: Location, ev: Any) -> None:
        """MpiRecv (the receive half of a sendrecv is kept for its Leave)."""
        comm = self.comm(st, ev.communicator)
        peer = self.world(st, comm, int(ev.sender))
        nb = self.bytes(st, int(ev.msg_length), "message length")
        tag = self.tag(st, int(ev.msg_tag))
        if st.region in _SENDRECV_REGIONS:
            st.sendrecv["recv"] = (peer, tag, comm, nb)
        else:
            self.emit(st, OpKind.RECV, peer=peer, tag=tag, comm=comm, bytes_recv=nb)

    def on_irecv(self, st: Location, ev: Any) -> None:
        """MpiIrecv: the IRECV its request posted gets its peer, tag and size."""
        q = st.irecv.get(int(ev.request_id))
        if not q:
            raise self.fail(
                st,
                f"MpiIrecv completes request {ev.request_id}, which no MpiIrecvRequest posted",
            )
        rid, idx = q.popleft()
        comm = self.comm(st, ev.communicator)
        self.b.patch(
            st.rank,
            idx,
            peer=self.world(st, comm, int(ev.sender)),
            tag=self.tag(st, int(ev.msg_tag)),
            comm=comm,
            bytes_recv=self.bytes(st, int(ev.msg_length), "message length"),
        )
        st.done.append(rid)

    def collective(self, st: Location, ev: Any) -> None:
        op = _enum_name(ev.collective_op)
        if op in _HANDLE_OPS:
            return
        kind = _COLL_KIND.get(op)
        if kind is None:
            self.b.unsupported[f"{st.region} ({op}: OTF2 gives no per-rank counts)"] += 1
            return
        comm = self.comm(st, ev.communicator)
        n = self.b.comm_size(comm)
        sent = self.bytes(st, int(ev.size_sent), "size_sent")
        recvd = self.bytes(st, int(ev.size_received), "size_received")
        root = int(ev.root)
        peer = NO_PEER if root == _UNDEFINED_ROOT else self.world(st, comm, root)
        if kind in (OpKind.ALLREDUCE, OpKind.ALLGATHER, OpKind.ALLTOALL):
            bs = br = sent // n
        elif kind in (OpKind.BCAST, OpKind.SCATTER):
            bs = br = recvd
        else:  # reduce, gather, scan, exscan, barrier: every rank sends its buffer
            bs = br = sent
        self.emit(st, kind, peer=peer, comm=comm, bytes_send=bs, bytes_recv=br)

    def leave(self, st: Location) -> None:
        region = st.region or ""
        if region in _SENDRECV_REGIONS:
            s, r = st.sendrecv.get("send"), st.sendrecv.get("recv")
            if s is None or r is None:
                raise self.fail(st, f"{region} without both MpiSend and MpiRecv records")
            self.emit(
                st,
                OpKind.SENDRECV,
                peer=s[0],
                peer2=r[0],
                tag=s[1],
                tag2=r[1],
                comm=s[2],
                bytes_send=s[3],
                bytes_recv=r[3],
            )
        if st.done:
            done = sorted(st.done)
            if region in _WAIT_ALL_REGIONS or len(done) > 1:
                idx = self.emit(st, OpKind.WAIT, request=-1)  # placeholder replaced below
                self.b.rows[st.rank].pop(idx)
                self.b.add_waitall(st.rank, self.b.call_id(region), done)
            else:
                self.emit(st, OpKind.WAIT, request=done[0])
        elif region == "MPI_Waitall":
            self.emit(st, OpKind.WAITALL, request=-1)
            self.b.rows[st.rank].pop()
            self.b.add_waitall(st.rank, self.b.call_id(region), [])
            self.b.unsupported["MPI_Waitall (no completion recorded)"] += 1
        elif region == "MPI_Wait":
            self.b.unsupported["MPI_Wait (no completion recorded)"] += 1
        elif region in _NB_COLLECTIVES and not st.ops_in_region:
            self.b.unsupported[f"{region} (region only, no sizes)"] += 1

    def finish(self) -> Trace:
        never = 0
        for st in self.locs.values():
            never += sum(len(q) for q in st.isend.values())
            unmatched = sum(len(q) for q in st.irecv.values())
            if unmatched:
                self.b.note(
                    f"rank {st.rank}: {unmatched} Irecv(s) never completed; their peer "
                    "and size are unknown (ANY_SOURCE, 0 bytes)"
                )
        if never:
            self.b.note(
                f"{never} Isend(s) have no MpiIsendComplete (dumpi2otf2 drops "
                "completions of repeated request ids); the engine completes them at "
                "the end"
            )
        return self.b.build()
