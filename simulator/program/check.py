"""Compiled scan behind :meth:`mpiuq.simulator.program.table.Program.validate` (numba).

One pass over the operations finds, per kind of problem, the first operation that
has it; ``Program.validate`` turns the findings into the error message, checking
the kinds in a fixed order. Array expressions did the same in about 30 passes
over the program (0.05 s for two million operations).
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator import codes
from mpiuq.simulator.codes import (
    ANY_SOURCE,
    OP_COMPUTE,
    OP_IRECV,
    OP_ISEND,
    OP_MARK,
    OP_WAIT,
    OP_WAITALL,
    OP_WAITANY,
)
from mpiuq.simulator.runtime.jit import njit

# kinds of problem, in the order Program.validate reports them: row of ``found``
BAD_KIND = 0
BAD_PEER = 1
BAD_BYTES = 2
BAD_TIME = 3
BAD_REQ = 4
DUP_REQ = 5
BAD_LIST = 6
UNKNOWN_WAIT = 7  # wait (WAIT before WAITALL entries) on an id outside 0..n_requests-1
FOREIGN_WAIT = 8  # wait on a request the waiting rank did not create
BAD_MARK = 9
BAD_CALL = 10
N_PROBLEMS = 11


@njit()
def _first_creation(rank_ptr, ops, q):  # type: ignore[no-untyped-def]
    """The first ``ISEND``/``IRECV`` (ranks in order) that creates request ``q``."""
    for r in range(rank_ptr.shape[0] - 1):
        for i in range(rank_ptr[r], rank_ptr[r + 1]):
            k = ops[i, codes.COL_KIND]
            if k in (OP_ISEND, OP_IRECV) and ops[i, codes.COL_REQ] == q:
                return i
    return -1


@njit()
def first_problems(  # type: ignore[no-untyped-def]
    rank_ptr, ops, nbytes, seconds, wait_list, n_requests, n_marks, n_calls
):
    """``found (N_PROBLEMS, 3)``: per problem the first operation (-1: none) and two values.

    Values: ``BAD_REQ`` / ``UNKNOWN_WAIT`` the request id; ``DUP_REQ`` the smallest
    id created twice (operation: its first creation); ``FOREIGN_WAIT`` the id and
    its owner rank (-1: nobody created it). ``UNKNOWN_WAIT`` and ``FOREIGN_WAIT``
    report the first ``WAIT`` if any, else the first ``WAITALL`` or ``WAITANY``.
    """
    n_ranks = rank_ptr.shape[0] - 1
    n_wl = wait_list.shape[0]
    # first operation with each problem (-1: none); locals, not array cells, so
    # that the compiler keeps them in registers
    bad_kind = bad_peer = bad_bytes = bad_time = bad_req = bad_list = -1
    bad_mark = bad_call = -1
    bad_req_id = -1
    owner = np.full(n_requests, -1, np.int32)
    dup = n_requests
    for r in range(n_ranks):
        for i in range(rank_ptr[r], rank_ptr[r + 1]):
            k = ops[i, codes.COL_KIND]
            if k in (OP_ISEND, OP_IRECV):
                p = ops[i, codes.COL_PEER]
                if bad_peer < 0 and (p >= n_ranks or p < ANY_SOURCE or (k == OP_ISEND and p < 0)):
                    bad_peer = i
                if bad_bytes < 0 and nbytes[i] < 0:
                    bad_bytes = i
                q = ops[i, codes.COL_REQ]
                if q < 0 or q >= n_requests:
                    if bad_req < 0:
                        bad_req = i
                        bad_req_id = q
                elif owner[q] < 0:
                    owner[q] = r
                elif q < dup:
                    dup = q
            elif k == OP_COMPUTE:
                d = seconds[i]
                if bad_time < 0 and not (np.isfinite(d) and d >= 0.0):
                    bad_time = i
            elif k in (OP_WAITALL, OP_WAITANY):
                lo = ops[i, codes.COL_REQ]
                c = ops[i, codes.COL_COUNT]
                if bad_list < 0 and (lo < 0 or c < 0 or lo + c > n_wl):
                    bad_list = i
            elif k == OP_MARK:
                if bad_mark < 0 and (ops[i, codes.COL_REQ] < 0 or ops[i, codes.COL_REQ] >= n_marks):
                    bad_mark = i
            elif k != OP_WAIT and bad_kind < 0:
                bad_kind = i
            cl = ops[i, codes.COL_CALL]
            if bad_call < 0 and (cl < 0 or cl >= n_calls):
                bad_call = i
    found = np.full((N_PROBLEMS, 3), -1, np.int64)
    found[BAD_KIND, 0] = bad_kind
    found[BAD_PEER, 0] = bad_peer
    found[BAD_BYTES, 0] = bad_bytes
    found[BAD_TIME, 0] = bad_time
    found[BAD_REQ, 0] = bad_req
    found[BAD_REQ, 1] = bad_req_id
    found[BAD_LIST, 0] = bad_list
    found[BAD_MARK, 0] = bad_mark
    found[BAD_CALL, 0] = bad_call
    if dup < n_requests:  # its first creation: found again, not stored per request
        found[DUP_REQ, 0] = _first_creation(rank_ptr, ops, dup)
        found[DUP_REQ, 1] = dup
    if bad_req >= 0 or bad_list >= 0:
        return found  # the wait checks below need valid ids and lists
    # waits, in one pass: the first bad WAIT is reported before the first bad WAITALL
    unknown = np.full((2, 2), -1, np.int64)  # [WAIT, WAITALL] x (operation, id)
    foreign = np.full((2, 3), -1, np.int64)  # ... x (operation, id, owner)
    for r in range(n_ranks):
        for i in range(rank_ptr[r], rank_ptr[r + 1]):
            k = ops[i, codes.COL_KIND]
            if k == OP_WAIT:
                w, lo, hi = 0, i, i + 1
            elif k in (OP_WAITALL, OP_WAITANY):
                w, lo = 1, ops[i, codes.COL_REQ]
                hi = lo + ops[i, codes.COL_COUNT]
            else:
                continue
            for j in range(lo, hi):
                q = ops[j, codes.COL_REQ] if w == 0 else wait_list[j]
                if q < 0 or q >= n_requests:
                    if unknown[w, 0] < 0:
                        unknown[w, 0] = i
                        unknown[w, 1] = q
                elif owner[q] != r and foreign[w, 0] < 0:
                    foreign[w, 0] = i
                    foreign[w, 1] = q
                    foreign[w, 2] = owner[q]
    w = 0 if unknown[0, 0] >= 0 else 1
    found[UNKNOWN_WAIT, 0] = unknown[w, 0]
    found[UNKNOWN_WAIT, 1] = unknown[w, 1]
    w = 0 if foreign[0, 0] >= 0 else 1
    found[FOREIGN_WAIT, 0] = foreign[w, 0]
    found[FOREIGN_WAIT, 1] = foreign[w, 1]
    found[FOREIGN_WAIT, 2] = foreign[w, 2]
    return found
