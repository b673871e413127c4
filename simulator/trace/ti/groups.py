"""Wait-any groups of the TI parser: SMPI's ``waitAny N``.

SMPI writes ``waitAny N`` (N: the length of the request array) without saying which
request completed. A ``waitany`` makes every request of its rank still pending a member
of the rank's open *wait-any group* (opening one if none is open) and appends a WAITANY
row whose list is the group's members so far, in posting order (a prefix of the group's
final list; the simulation takes the first to complete among those not consumed yet).
The group closes once it has had as many WAITANY rows as members. A ``waitall`` while a
group is open makes the rank's pending requests members too, lists the whole group (the
simulation skips the members already consumed) and closes it; a ``wait`` naming a member
of the open group is one more WAITANY of the group (the trace cannot tell whether a
wait-any took that very request), and one naming a member of a closed group skips it
(:func:`.ti.state.wait`).

A group is named by its first member's request id (``O_REQ`` of its rows until
:func:`~.ti.assemble.assemble` points them at the group's list); its members'
``Q_OWNER`` is the row of its first WAITANY. Both shift with the two-thread join
(:mod:`.ti.split`) as request ids and rows do.
"""

from __future__ import annotations

from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.trace.ir import NO_PEER
from mpiuq.simulator.trace.ti.state import (
    C_ANY_MEMBERS,
    C_OPS,
    C_WAITANY_NONE,
    GROUP_WAITALL,
    K_OWNED,
    K_WAITALL,
    K_WAITANY,
    O_COUNT,
    O_VSTART,
    Q_KEY,
    Q_OWNER,
    Q_RNEXT,
    Q_STATE,
    R_CAND,
    R_GDONE,
    R_GROUP,
    R_GROW,
    R_GSIZE,
    S_ANY,
    S_NONE,
    emit,
)

__all__ = ["group_row", "group_waitall", "join_group", "waitany"]


@njit()
def group_row(ops, C, R, rank, call):  # type: ignore[no-untyped-def]
    """One WAITANY row on the rank's open group (all its members so far); closes the group
    when it has had as many rows as members."""
    g = R[rank, R_GROUP]
    row = emit(ops, C, R, rank, K_WAITANY, call, NO_PEER, NO_PEER, 0, 0, 0, g, 0.0)
    ops[O_COUNT][row] = R[rank, R_GSIZE]
    R[rank, R_GDONE] += 1
    if R[rank, R_GDONE] >= R[rank, R_GSIZE]:
        R[rank, R_GROUP] = -1
    return row


@njit()
def waitany(ops, C, R, Q, K, rank, call):  # type: ignore[no-untyped-def]
    """A waitany of ``rank``: its pending requests join its open wait-any group (opened
    if none is), and a WAITANY row on the group is appended; nothing when the rank has
    neither an open group nor a pending request (MPI_UNDEFINED, counted)."""
    r = R[rank, R_CAND]
    first = -1
    while r != -1:
        if Q[r, Q_STATE] == S_NONE:
            first = r  # the chain runs newest first: the last one seen is the oldest
        r = Q[r, Q_RNEXT]
    if R[rank, R_GROUP] < 0:
        if first < 0:
            C[C_WAITANY_NONE] += 1
            return
        R[rank, R_GROUP] = first
        R[rank, R_GROW] = C[C_OPS]  # the row group_row appends below
        R[rank, R_GSIZE] = 0
        R[rank, R_GDONE] = 0
    join_group(C, R, Q, K, rank)
    group_row(ops, C, R, rank, call)


@njit()
def join_group(C, R, Q, K, rank):  # type: ignore[no-untyped-def]
    """The rank's pending requests join its open wait-any group."""
    r = R[rank, R_CAND]
    while r != -1:
        if Q[r, Q_STATE] == S_NONE:
            Q[r, Q_STATE] = S_ANY
            Q[r, Q_OWNER] = R[rank, R_GROW]
            K[Q[r, Q_KEY], K_OWNED] += 1
            R[rank, R_GSIZE] += 1
            C[C_ANY_MEMBERS] += 1
        r = Q[r, Q_RNEXT]
    R[rank, R_CAND] = -1  # every request on the chain is settled


@njit()
def group_waitall(ops, C, R, Q, K, rank, call):  # type: ignore[no-untyped-def]
    """A waitall of ``rank`` while its wait-any group is open: the pending requests join
    the group and the waitall's row lists the whole group (the simulation skips the
    members already consumed: waiting for all is waiting for the remaining ones)."""
    join_group(C, R, Q, K, rank)
    g = R[rank, R_GROUP]
    row = emit(ops, C, R, rank, K_WAITALL, call, NO_PEER, NO_PEER, 0, 0, 0, g, 0.0)
    ops[O_COUNT][row] = R[rank, R_GSIZE]
    ops[O_VSTART][row] = GROUP_WAITALL
    R[rank, R_GROUP] = -1
