"""The TI parser's rows packed into a trace's columns.

:func:`assemble` drops failed tests, orders rows by rank (stable: each rank keeps its
line order), and builds the ``wait_reqs`` and ``vcounts`` pools exactly as
:class:`~mpiuq.simulator.trace.builder.TraceBuilder` would.
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.trace.ti.state import (
    C_ANY_MEMBERS,
    C_OPS,
    C_REQS,
    C_VPOOL,
    DROPPED,
    GROUP_WAITALL,
    K_WAITALL,
    K_WAITANY,
    O_CALL,
    O_COUNT,
    O_KIND,
    O_PEER,
    O_PEER2,
    O_RANK,
    O_RECV,
    O_REQ,
    O_SEC,
    O_SEND,
    O_TAG,
    O_VSTART,
    Q_OWNER,
    Q_STATE,
    S_ANY,
    S_WAITALL,
)

__all__ = ["assemble"]


@njit()
def _permute(col, new, scratch):  # type: ignore[no-untyped-def]
    for i in range(new.shape[0]):
        if new[i] >= 0:
            scratch[new[i]] = col[i]
    for j in range(new.shape[0]):
        col[j] = scratch[j]


@njit()
def _reorder(ops, n_rows, rank_ptr):  # type: ignore[no-untyped-def]
    """Group rows by rank (stable) and drop failed tests, in place; the old-to-new map.

    In place (through one scratch column) because fresh memory is expensive: every
    new page is zeroed by the kernel on first touch.
    """
    n = rank_ptr.shape[0] - 1
    pos = rank_ptr[:n].copy()
    new = np.full(n_rows, -1, np.int64)
    for i in range(n_rows):
        if ops[O_KIND][i] != DROPPED:
            r = ops[O_RANK][i]
            new[i] = pos[r]
            pos[r] += 1
    scratch = np.empty(n_rows, np.int64)
    _permute(ops[O_KIND], new, scratch)
    _permute(ops[O_CALL], new, scratch)
    _permute(ops[O_PEER], new, scratch)
    _permute(ops[O_PEER2], new, scratch)
    _permute(ops[O_TAG], new, scratch)
    _permute(ops[O_SEND], new, scratch)
    _permute(ops[O_RECV], new, scratch)
    _permute(ops[O_REQ], new, scratch)
    _permute(ops[O_COUNT], new, scratch)
    _permute(ops[O_VSTART], new, scratch)
    _permute(ops[O_SEC], new, scratch.view(np.float64))
    return new


@njit()
def assemble(ops, C, n, Q, VP):  # type: ignore[no-untyped-def]
    """Final columns (rank-major, failed tests dropped), ``rank_ptr`` and the pools.

    The columns are the parse columns (trimmed views), regrouped in place by rank
    when the rows are not already in rank order or a failed test was dropped.
    """
    n_rows = C[C_OPS]
    kind = ops[O_KIND]
    ranks = ops[O_RANK]
    rank_ptr = np.zeros(n + 1, np.int64)
    in_order = True
    for i in range(n_rows):
        if kind[i] != DROPPED:
            rank_ptr[ranks[i] + 1] += 1
            if i > 0 and ranks[i] < ranks[i - 1]:
                in_order = False
        else:
            in_order = False
    for r in range(n):
        rank_ptr[r + 1] += rank_ptr[r]
    new = np.empty(0, np.int64) if in_order else _reorder(ops, n_rows, rank_ptr)
    m = rank_ptr[n]
    P = (
        ops[0][:m], ops[1][:m], ops[2][:m], ops[3][:m], ops[4][:m], ops[5][:m],
        ops[6][:m], ops[7][:m], ops[8][:m], ops[9][:m], ops[10][:m],
    )  # fmt: skip
    # vcounts: each v-collective's counts, in final row order (parse order if in order)
    if in_order:
        vcounts = VP[: C[C_VPOOL]].copy()
    else:
        nv = 0
        for j in range(m):
            if P[O_VSTART][j] >= 0:
                nv += P[O_COUNT][j]
        vcounts = np.empty(nv, np.int64)
        at = 0
        for j in range(m):
            s = P[O_VSTART][j]
            if s >= 0:
                k = P[O_COUNT][j]
                vcounts[at : at + k] = VP[s : s + k]
                P[O_VSTART][j] = at
                at += k
    # wait_reqs: each waitall's requests in id order, waitalls in final row order, then the
    # wait-any groups' lists
    n_req = C[C_REQS]
    count = P[O_COUNT]
    for rid in range(n_req):
        if Q[rid, Q_STATE] == S_WAITALL:
            row = Q[rid, Q_OWNER]
            count[row if in_order else new[row]] += 1
    total = 0
    for j in range(m):
        if P[O_KIND][j] == K_WAITALL and P[O_VSTART][j] != GROUP_WAITALL:
            P[O_REQ][j] = total
            total += count[j]
    wait_reqs = np.empty(total + C[C_ANY_MEMBERS], np.int64)
    for rid in range(n_req - 1, -1, -1):  # fill each list from its end: ascending ids
        if Q[rid, Q_STATE] == S_WAITALL:
            row = Q[rid, Q_OWNER]
            j = row if in_order else new[row]
            count[j] -= 1
            wait_reqs[P[O_REQ][j] + count[j]] = rid
    nxt = total
    for j in range(m - 1, -1, -1):  # restore the counts from the offsets
        if P[O_KIND][j] == K_WAITALL and P[O_VSTART][j] != GROUP_WAITALL:
            count[j] = nxt - P[O_REQ][j]
            nxt = P[O_REQ][j]
    if C[C_ANY_MEMBERS]:
        _group_lists(P, Q, n_req, new, in_order, wait_reqs, total)
    return P, rank_ptr, wait_reqs, vcounts


@njit()
def _group_lists(P, Q, n_req, new, in_order, wait_reqs, at):  # type: ignore[no-untyped-def]
    """Each wait-any group's members in id (posting) order into ``wait_reqs[at:]``, groups in
    order of their first member; its WAITANY rows (and the WAITALL that ends it, if any)
    then point at the group's list (their ``count``: the prefix they choose from)."""
    key = P[O_REQ]  # of a group's rows: the group's first member
    size = np.zeros(n_req, np.int64)
    for rid in range(n_req):
        if Q[rid, Q_STATE] == S_ANY:
            row = Q[rid, Q_OWNER]
            size[key[row if in_order else new[row]]] += 1
    start = np.full(n_req, -1, np.int64)
    for g in range(n_req):
        if size[g] > 0:
            start[g] = at
            at += size[g]
    fill = start.copy()
    for rid in range(n_req):
        if Q[rid, Q_STATE] == S_ANY:
            row = Q[rid, Q_OWNER]
            g = key[row if in_order else new[row]]
            wait_reqs[fill[g]] = rid
            fill[g] += 1
    for j in range(key.shape[0]):
        group_waitall = P[O_KIND][j] == K_WAITALL and P[O_VSTART][j] == GROUP_WAITALL
        if P[O_KIND][j] == K_WAITANY or group_waitall:
            key[j] = start[key[j]]
            if group_waitall:
                P[O_VSTART][j] = -1
