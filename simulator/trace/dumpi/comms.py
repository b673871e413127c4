"""Communicators of a DUMPI trace (ids are local to each rank's file).

``comm_split``/``comm_dup``/``comm_create`` are matched collectively per parent
communicator across all ranks, groups are tracked as lists of world ranks. A lone
rank file (partial trace) only knows what its own records tell: members of
communicators only the missing ranks could name are ``UNKNOWN_PEER``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.dumpi.common import (
    BOOKKEEPING,
    COMM_NULL,
    COMM_SELF,
    COMM_WORLD,
    CREATE,
    GROUP_EMPTY,
    GROUP_NULL,
    mpi_name,
)
from mpiuq.simulator.trace.dumpi.raw import RawCall, RawRank
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import UNKNOWN_PEER
from mpiuq.simulator.trace.limits import MAX_RANKS


@dataclass
class CommState:
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


def _apply_local(st: CommState, b: TraceBuilder, call: RawCall, file: str) -> None:
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
            if any(i < 0 for i in a[1]):
                raise IndexError
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


def _lookup(st: CommState, local: int, call: RawCall, file: str) -> int:
    g = st.comms.get(local)
    if g is None and st.partial:
        raise _Unknown(local)
    if g is None:
        raise TraceFormatError(
            f"{mpi_name(call.name)} on communicator id {local}, which this rank never created "
            "(or already freed)",
            file=file,
            rank=st.rank,
            record=call.index,
        )
    return g


def resolve_full(raws: list[RawRank], b: TraceBuilder, ranks: list[int]) -> list[CommState]:
    """Match communicator creations collectively across all ranks."""
    states = [CommState(r, {COMM_WORLD: 0, COMM_SELF: _self_comm(b, r)}) for r in ranks]
    events = [[c for c in raw.calls if c.name in CREATE or c.name in BOOKKEEPING] for raw in raws]
    ptr = [0] * len(raws)
    while True:
        arrived: dict[tuple[int, int], list[int]] = {}
        for i, raw in enumerate(raws):
            st = states[i]
            while ptr[i] < len(events[i]):
                call = events[i][ptr[i]]
                if call.name not in CREATE:
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
                f"{mpi_name(call.name)} on a communicator of {len(b.comms[parent])} ranks is "
                f"not matched by the same call on every member (arrived: "
                f"{sorted(states[j].rank for j in idx)})",
                file=raws[i].file,
                rank=states[i].rank,
                record=call.index,
            )
    return states


def _create_collectively(
    raws: list[RawRank],
    states: list[CommState],
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
            if gid in (GROUP_NULL, GROUP_EMPTY):
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
        if new_ids[i] is not None and newcomm != COMM_NULL:
            st.comms[newcomm] = new_ids[i]  # type: ignore[assignment]


def partial_world(raw: RawRank) -> tuple[int, int, list[str]]:
    """World size and rank of a lone rank file, from its own records."""
    notes = []
    size = rank = None
    top = -1
    for c in raw.calls:
        if c.name == "comm_size" and c.args[0] == COMM_WORLD:
            size = _checked(raw, c, "MPI_COMM_WORLD size", c.args[1], 1, MAX_RANKS)
        elif c.name == "comm_rank" and c.args[0] == COMM_WORLD:
            rank = _checked(raw, c, "MPI_COMM_WORLD rank", c.args[1], 0, MAX_RANKS - 1)
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
            and c.args[4] == COMM_WORLD
        ):
            top = max(top, _checked(raw, c, "peer rank", c.args[2], -MAX_RANKS, MAX_RANKS - 1))
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
    if rank >= size:
        raise TraceFormatError(
            f"MPI_Comm_rank gives rank {rank} of MPI_COMM_WORLD, but its size is {size}",
            file=raw.file,
        )
    return size, rank, notes


def _checked(raw: RawRank, call: RawCall, what: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise TraceFormatError(
            f"{mpi_name(call.name)}: {what} {value} outside {low}..{high}",
            file=raw.file,
            record=call.index,
        )
    return value


class _Unknown(Exception):
    """Internal: a partial trace uses a communicator created before the trace started."""


def unknown_comm(st: CommState, b: TraceBuilder, local: int) -> int:
    """Register a communicator a partial trace uses without having created it."""
    g = b.add_comm([UNKNOWN_PEER], key=("unknown", st.rank, local, len(b.comms)))
    st.comms[local] = g
    st.growable.add(g)
    b.note(
        f"partial trace: communicator id {local} was created before the trace started; "
        "its members are unknown"
    )
    return g


def resolve_partial(raw: RawRank, b: TraceBuilder, rank: int) -> CommState:
    """Communicators of a lone rank: only what this rank's records tell."""
    st = CommState(rank, {COMM_WORLD: 0, COMM_SELF: _self_comm(b, rank)}, partial=True)
    calls = raw.calls
    for k, call in enumerate(calls):
        if call.name not in CREATE:
            if call.name in BOOKKEEPING:
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
            size, pos = _partial_comm_shape(raw, k, newcomm)
            members = [UNKNOWN_PEER] * size
            if pos is not None:
                members[pos] = rank
            g = b.add_comm(members, key=("split", parent, seq))
            st.growable.add(g)
        st.created[call.index] = g
        if g is not None and newcomm != COMM_NULL:
            st.comms[newcomm] = g
    return st


def _partial_comm_shape(raw: RawRank, k: int, local: int) -> tuple[int, int | None]:
    """Size and own position of a split communicator of a lone rank, from later records."""
    size = pos = None
    for c in raw.calls[k + 1 :]:
        if c.name == "comm_free" and c.args[0] == local:
            break
        if c.name in CREATE and c.args[-1] == local:
            break
        a = c.args
        if c.name == "comm_size" and a[0] == local:
            size = _checked(raw, c, "communicator size", a[1], 1, MAX_RANKS)
        elif c.name == "comm_rank" and a[0] == local:
            pos = _checked(raw, c, "communicator rank", a[1], 0, MAX_RANKS - 1)
    n = max(size or 0, (pos or 0) + 1, 1)
    return n, pos
