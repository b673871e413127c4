"""State of the compiled TI parser: operation rows, requests and their (src, dst, tag) FIFOs.

Everything lives in numpy arrays so that the compiled parser runs without Python
objects. Operations are appended in parse order, directly into the columns of the
final :class:`Trace` (tuple ``ops``, one row per trace line at most, plus the rank
of each row); requests and the FIFO of each (rank, src, dst, tag) key are linked
lists threaded through int32 tables. Tables whose size is bounded by the number
of lines are allocated uninitialised at that bound (memory is only touched as rows
are written: on this kind of machine first-touching fresh memory costs about
3 ms per MB, more than parsing the lines that fill it); the key hash and the
vcount pool grow between calls of :func:`~.ti.parse.parse_lines`, never inside
its loop. The request semantics are
those of :mod:`.ti` (see its docstring): a ``waitall`` tentatively owns every
request pending at that point, a later ``wait`` takes one back, and a ``test``
whose request is waited later was a failed test and is dropped.

Wait-any groups (SMPI's ``waitAny``): :mod:`.ti.groups`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mpiuq.simulator.runtime.jit import intrinsic, njit
from mpiuq.simulator.trace.ir import NO_PEER, OpKind

# --- error codes reported by the kernel (messages in .messages) --------------------------
E_SYNTAX = 1
E_RANK_RANGE = 2
E_BYTE = 3
E_AFTER_FINALIZE = 4
E_FEW_ARGS = 5
E_NUMBER = 6
E_INTEGRAL = 7
E_FLOPS = 8
E_SECONDS = 9
E_PEER = 10
E_DEST_ANY = 11
E_DATATYPE = 12
E_COUNT = 13
E_BYTES = 14
E_TAG = 15
E_WAIT_NO_REQ = 16
E_NO_PENDING_IRECV = 17
E_VEC = 18
E_ROOT = 19
E_NO_ACTION = 20
E_KEY = 21
E_CAPACITY = 22

# --- per-rank state columns (R) ------------------------------------------------------------
R_LAST = 0  # index of the rank's last operation row (-1: none)
R_DT = 1  # size of the default datatype: 1 (MPI_BYTE) or 8 (MPI_DOUBLE, init with args)
R_INIT = 2
R_FINAL = 3
R_LINE = 4  # line of the rank's last action (for the truncation error)
R_FILE = 5
R_CAND = 6  # newest request posted since the rank's last waitall (list via Q_RNEXT)
R_CHAIN = 7  # newest request still possibly pending (list via Q_RPREV; MSG "wait")
R_GROUP = 8  # the rank's open wait-any group: its first member's request id (-1: none)
R_GROW = 9  # ... the row of its first WAITANY (the members' Q_OWNER)
R_GSIZE = 10  # ... its members
R_GDONE = 11  # ... the WAITANY rows it has had (it closes when they equal its members)
R_COLS = 12

# --- request columns (Q) and states --------------------------------------------------------
Q_STATE = 0
Q_OWNER = 1  # row of the waitall / test that completes it
Q_KEY = 2
Q_NEXT = 3  # next request in its key's FIFO
Q_RNEXT = 4
Q_RPREV = 5
Q_COLS = 6
S_NONE = 0  # pending
S_WAITALL = 1  # tentatively completed by a waitall
S_TEST = 2  # tentatively completed by a test
S_WAITED = 3  # completed by a wait (taken out of its FIFO)
S_ANY = 4  # member of a wait-any group (Q_OWNER: the row of the group's first WAITANY)

# --- key FIFOs (K) and the hash of keys (H) ------------------------------------------------
K_HEAD = 0
K_TAIL = 1
K_OWNED = 2  # requests in the FIFO tentatively owned by a waitall or test
H_A = 0
H_B = 1
H_ID = 2  # key id + 1 (0: empty slot)

# --- counters (C) --------------------------------------------------------------------------
C_OPS = 0
C_REQS = 1
C_KEYS = 2
C_FAILED_TESTS = 3
C_TEST_NONE = 4
C_CALLS = 5
C_VPOOL = 6
C_UNKNOWN = 7
C_MSG_SENDS = 8
C_MSG_RECVS = 9
C_WAITANY_NONE = 10  # waitany lines with no request to choose from (MPI_UNDEFINED)
C_ANY_MEMBERS = 11  # requests that joined a wait-any group
C_COLS = 12

# --- one decoded line (D: int64, DF: float64), written by .kernel, applied by .parse ------
D_TOK = 0  # error: index of the bad token (-1: none)
D_A = 1  # error details: allowed bounds, counts
D_B = 2
D_KIND = 3  # OpKind of the operation to append, or one of the X_* actions below
D_PEER = 4
D_PEER2 = 5
D_TAG = 6
D_BS = 7
D_BR = 8
D_POST = 9  # 1: the operation posts a request under key (D_KS, D_KD, D_KT)
D_KS = 10
D_KD = 11
D_KT = 12
D_VLEN = 13  # v-collective: number of counts written to the pool at C[C_VPOOL]
D_MSG = 14  # MSG dialect: 1 = a send to remember, 2 = a receive to size later
D_COLS = 15
DF_VALUE = 0  # error detail
DF_SEC = 1  # seconds of the operation (reduction cost)
X_NONE = -1  # nothing to append
X_WAIT = -2  # complete the oldest request of key (D_KS, D_KD, D_KT)
X_TEST = -3
X_WAITALL = -4
X_WAIT_LAST = -5  # MSG "wait": the newest pending request's key
X_MSG_UNSUPPORTED = -6
X_WAITANY = -7
WAIT_NONE, WAIT_DONE, WAIT_GROUP = 0, 1, 2  # results of wait()

SMPI_ANY_SOURCE = -333
#: How SMPI (SimGrid 3.32) writes MPI_ANY_TAG in TI traces (receives and wait keys).
SMPI_ANY_TAG = -444
DROPPED = -1  # kind of a row removed after the fact (a failed test)
#: O_VSTART of a WAITALL row listing a wait-any group (O_REQ: the group's first member;
#: :func:`~.ti.assemble.assemble` points it at the group's list and resets O_VSTART to -1)
GROUP_WAITALL = -2

K_COMPUTE = int(OpKind.COMPUTE)
K_WAIT = int(OpKind.WAIT)
K_WAITALL = int(OpKind.WAITALL)
K_WAITANY = int(OpKind.WAITANY)


# --- operation rows: the tuple ops of columns ------------------------------------------------
O_KIND = 0  # int8 OpKind (DROPPED: a failed test, removed when packing)
O_CALL = 1  # int16
O_PEER = 2  # int32
O_PEER2 = 3  # int32
O_TAG = 4  # int32
O_SEND = 5  # int64 bytes_send
O_RECV = 6  # int64 bytes_recv
O_REQ = 7  # int64 request
O_COUNT = 8  # int64: number of vcounts of a v-collective (waitall: set when packing)
O_VSTART = 9  # int64 vcounts_offset: start of the row's vcounts in the pool, -1: none
O_SEC = 10  # float64 seconds
O_RANK = 11  # int32 rank of the row
_O_DTYPES = (
    np.int8,
    np.int16,
    np.int32,
    np.int32,
    np.int32,
    np.int64,
    np.int64,
    np.int64,
    np.int64,
    np.int64,
    np.float64,
    np.int32,
)


def new_rows(n: int) -> tuple[np.ndarray, ...]:
    """Uninitialised columns ``ops`` for at most ``n`` operations (parse order)."""
    return tuple(np.empty(n, dt) for dt in _O_DTYPES)


def _borrow(typingctx, arr):  # type: ignore[no-untyped-def]
    """A view of ``arr`` without reference counting (no NRT meminfo).

    Every array handed to a compiled function call is reference counted with two
    atomic operations; with a few dozen array arguments per trace line that was a
    third of the parse time. :func:`~.ti.parse.parse_lines` calls its helpers with
    borrowed views instead. A borrowed view must not outlive the array it views:
    use it only inside the compiled call that received the array.
    """
    from numba import types

    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        src = context.make_array(sig.args[0])(context, builder, value=args[0])
        out = context.make_array(sig.return_type)(context, builder)
        context.populate_array(
            out,
            data=src.data,
            shape=src.shape,
            strides=src.strides,
            itemsize=src.itemsize,
            meminfo=None,
        )
        return out._getvalue()

    return arr(arr), codegen


#: The intrinsic as compiled code calls it: ``borrow(array)`` (typing context implied).
borrow: Any = intrinsic(_borrow)


@njit()
def borrow_rows(ops):  # type: ignore[no-untyped-def]
    """:func:`borrow` of every column of ``ops``."""
    return (
        borrow(ops[0]),
        borrow(ops[1]),
        borrow(ops[2]),
        borrow(ops[3]),
        borrow(ops[4]),
        borrow(ops[5]),
        borrow(ops[6]),
        borrow(ops[7]),
        borrow(ops[8]),
        borrow(ops[9]),
        borrow(ops[10]),
        borrow(ops[11]),
    )


@njit()
def emit(ops, C, R, rank, kind, call, peer, peer2, tag, bs, br, req, sec):  # type: ignore[no-untyped-def]
    """Append one operation row of ``rank``; return its row index."""
    i = C[C_OPS]
    ops[O_KIND][i] = kind
    ops[O_CALL][i] = call
    ops[O_PEER][i] = peer
    ops[O_PEER2][i] = peer2
    ops[O_TAG][i] = tag
    ops[O_SEND][i] = bs
    ops[O_RECV][i] = br
    ops[O_REQ][i] = req
    ops[O_COUNT][i] = 0
    ops[O_VSTART][i] = -1
    ops[O_SEC][i] = sec
    ops[O_RANK][i] = rank
    C[C_OPS] = i + 1
    R[rank, R_LAST] = i
    return i


@njit()
def add_compute(ops, C, R, rank, seconds, call):  # type: ignore[no-untyped-def]
    """``seconds`` of computation, merged into the rank's last row if that is a COMPUTE."""
    if seconds <= 0.0:
        return
    last = R[rank, R_LAST]
    if last >= 0 and ops[O_KIND][last] == K_COMPUTE:
        ops[O_SEC][last] = ops[O_SEC][last] + seconds
        return
    emit(ops, C, R, rank, K_COMPUTE, call, NO_PEER, NO_PEER, 0, 0, 0, -1, seconds)


@njit()
def _hash_slot(H, a, b):  # type: ignore[no-untyped-def]
    mask = np.uint64(H.shape[0] - 1)
    x = (np.uint64(a) * np.uint64(0x9E3779B97F4A7C15)) ^ (
        np.uint64(b) * np.uint64(0xC2B2AE3D27D4EB4F)
    )
    x ^= x >> np.uint64(31)
    i = np.int64(x & mask)
    while H[i, H_ID] != 0 and (H[i, H_A] != a or H[i, H_B] != b):
        i = (i + 1) & np.int64(mask)
    return i


@njit()
def grow_hash(H):  # type: ignore[no-untyped-def]
    """The key hash with twice the slots (same keys)."""
    G = np.zeros((2 * H.shape[0], 3), np.int64)
    for i in range(H.shape[0]):
        if H[i, H_ID] != 0:
            j = _hash_slot(G, H[i, H_A], H[i, H_B])
            G[j, 0] = H[i, 0]
            G[j, 1] = H[i, 1]
            G[j, 2] = H[i, 2]
    return G


@njit()
def _key_ab(rank, s, d, t):  # type: ignore[no-untyped-def]
    # rank < 2^22, s, d in [-333, 2^22), t in [-1, 2^31): both parts fit in 63 bits
    return (rank << 26) | (s + 334), ((d + 334) << 33) | (t + 1)


@njit()
def find_key(H, rank, s, d, t):  # type: ignore[no-untyped-def]
    """Key id of (rank, src, dst, tag), -1 if no request was ever posted with it."""
    a, b = _key_ab(rank, s, d, t)
    i = _hash_slot(H, a, b)
    return H[i, H_ID] - 1


@njit()
def _compact_fifo(Q, K, kid):  # type: ignore[no-untyped-def]
    # the key is posted again: tentative completions of its older requests become final
    head = -1
    tail = -1
    r = K[kid, K_HEAD]
    while r != -1:
        nxt = Q[r, Q_NEXT]
        if Q[r, Q_STATE] == S_NONE:
            Q[r, Q_NEXT] = -1
            if tail == -1:
                head = r
            else:
                Q[tail, Q_NEXT] = r
            tail = r
        r = nxt
    K[kid, K_HEAD] = head
    K[kid, K_TAIL] = tail
    K[kid, K_OWNED] = 0


@njit()
def post(Q, K, H, C, R, rank, s, d, t):  # type: ignore[no-untyped-def]
    """A new request of ``rank`` under key (src, dst, tag); return its id.

    The caller guarantees room for one more request, key and hash entry.
    """
    a, b = _key_ab(rank, s, d, t)
    i = _hash_slot(H, a, b)
    if H[i, H_ID] == 0:
        kid = C[C_KEYS]
        C[C_KEYS] = kid + 1
        H[i, H_A] = a
        H[i, H_B] = b
        H[i, H_ID] = kid + 1
        K[kid, K_HEAD] = -1
        K[kid, K_TAIL] = -1
        K[kid, K_OWNED] = 0
    else:
        kid = H[i, H_ID] - 1
        if K[kid, K_OWNED] > 0:
            _compact_fifo(Q, K, kid)
    rid = C[C_REQS]
    C[C_REQS] = rid + 1
    Q[rid, Q_STATE] = S_NONE
    Q[rid, Q_OWNER] = -1
    Q[rid, Q_KEY] = kid
    Q[rid, Q_NEXT] = -1
    Q[rid, Q_RNEXT] = R[rank, R_CAND]
    Q[rid, Q_RPREV] = R[rank, R_CHAIN]
    R[rank, R_CAND] = rid
    R[rank, R_CHAIN] = rid
    if K[kid, K_TAIL] == -1:
        K[kid, K_HEAD] = rid
    else:
        Q[K[kid, K_TAIL], Q_NEXT] = rid
    K[kid, K_TAIL] = rid
    return rid


@njit()
def wait(ops, C, R, Q, K, rank, kid, call):  # type: ignore[no-untyped-def]
    """Complete the oldest request of key ``kid``: WAIT_DONE, or WAIT_NONE if there is
    none, or WAIT_GROUP for a member of the rank's open wait-any group (the caller
    appends one more WAITANY of the group: :func:`.ti.groups.group_row`); members of
    closed groups (consumed) are skipped."""
    while kid >= 0 and K[kid, K_HEAD] != -1:
        r = K[kid, K_HEAD]
        K[kid, K_HEAD] = Q[r, Q_NEXT]
        if K[kid, K_HEAD] == -1:
            K[kid, K_TAIL] = -1
        state = Q[r, Q_STATE]
        if state == S_ANY:
            K[kid, K_OWNED] -= 1
            if ops[O_REQ][Q[r, Q_OWNER]] == R[rank, R_GROUP]:
                return WAIT_GROUP
            continue
        if state == S_WAITALL:
            K[kid, K_OWNED] -= 1  # the waitall did not cover it after all
        elif state == S_TEST:
            K[kid, K_OWNED] -= 1
            ops[O_KIND][Q[r, Q_OWNER]] = DROPPED  # that test failed: a progress call
            C[C_FAILED_TESTS] += 1
        Q[r, Q_STATE] = S_WAITED
        emit(ops, C, R, rank, K_WAIT, call, NO_PEER, NO_PEER, 0, 0, 0, r, 0.0)
        return WAIT_DONE
    return WAIT_NONE


@njit()
def test(ops, C, R, Q, K, rank, kid, call):  # type: ignore[no-untyped-def]
    """A test on key ``kid``: tentatively completes its oldest pending request."""
    r = K[kid, K_HEAD] if kid >= 0 else -1
    while r != -1 and Q[r, Q_STATE] != S_NONE:
        r = Q[r, Q_NEXT]
    if r == -1:
        C[C_TEST_NONE] += 1
        return
    Q[r, Q_OWNER] = emit(ops, C, R, rank, K_WAIT, call, NO_PEER, NO_PEER, 0, 0, 0, r, 0.0)
    Q[r, Q_STATE] = S_TEST
    K[kid, K_OWNED] += 1


@njit()
def waitall(ops, C, R, Q, K, rank, call):  # type: ignore[no-untyped-def]
    """A waitall of ``rank``: tentatively owns every request of the rank still pending
    (with a wait-any group open: :func:`.ti.groups.group_waitall` instead)."""
    row = emit(ops, C, R, rank, K_WAITALL, call, NO_PEER, NO_PEER, 0, 0, 0, -1, 0.0)
    r = R[rank, R_CAND]
    while r != -1:
        if Q[r, Q_STATE] == S_NONE:
            Q[r, Q_STATE] = S_WAITALL
            Q[r, Q_OWNER] = row
            K[Q[r, Q_KEY], K_OWNED] += 1
        r = Q[r, Q_RNEXT]
    R[rank, R_CAND] = -1


@njit()
def last_pending_key(R, Q, rank):  # type: ignore[no-untyped-def]
    """Key of the rank's newest still-pending request (MSG ``wait``), -1 if none."""
    r = R[rank, R_CHAIN]
    while r != -1 and Q[r, Q_STATE] != S_NONE:
        r = Q[r, Q_RPREV]  # never pending again: drop it from the chain for good
    R[rank, R_CHAIN] = r
    return -1 if r == -1 else Q[r, Q_KEY]
