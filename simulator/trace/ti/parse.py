"""The compiled line loop of the TI parser.

:func:`parse_lines` walks every line of every file (in the order given), checks the
rank token and the finalize rule, decodes each action (:mod:`.ti.kernel`) and
applies it to the parser state (:mod:`.ti.state`); :func:`~.ti.assemble.assemble`
then packs the rows into a trace's columns.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.trace.ti.args import T_COLS, arg_seconds, read_tokens
from mpiuq.simulator.trace.ti.groups import group_row, group_waitall, waitany
from mpiuq.simulator.trace.ti.kernel import (
    A_ALLGATHERV,
    A_ALLTOALLV,
    A_COMPUTE,
    A_FINALIZE,
    A_GATHERV,
    A_INIT,
    A_IRECV,
    A_LOCATION,
    A_REDUCESCATTER,
    A_SCATTERV,
    A_SENDRECV,
    A_SLEEP,
    A_WAITALL,
    A_WAITANY,
    decode_collective,
    decode_completion,
    decode_msg,
    decode_p2p,
    decode_vcollective,
    decode_waitany,
)
from mpiuq.simulator.trace.ti.lex import BYTE_CLASS, lookup_action, tokenize
from mpiuq.simulator.trace.ti.state import (
    C_CALLS,
    C_COLS,
    C_KEYS,
    C_MSG_RECVS,
    C_MSG_SENDS,
    C_OPS,
    C_REQS,
    C_UNKNOWN,
    C_VPOOL,
    D_A,
    D_B,
    D_BR,
    D_BS,
    D_COLS,
    D_KD,
    D_KIND,
    D_KS,
    D_KT,
    D_MSG,
    D_PEER,
    D_PEER2,
    D_POST,
    D_TAG,
    D_TOK,
    D_VLEN,
    DF_SEC,
    E_AFTER_FINALIZE,
    E_BYTE,
    E_CAPACITY,
    E_NO_PENDING_IRECV,
    E_RANK_RANGE,
    E_SYNTAX,
    E_WAIT_NO_REQ,
    NO_PEER,
    O_COUNT,
    O_KIND,
    O_VSTART,
    Q_COLS,
    R_CAND,
    R_CHAIN,
    R_COLS,
    R_DT,
    R_FILE,
    R_FINAL,
    R_GROUP,
    R_INIT,
    R_LAST,
    R_LINE,
    WAIT_GROUP,
    WAIT_NONE,
    X_MSG_UNSUPPORTED,
    X_TEST,
    X_WAIT_LAST,
    X_WAITALL,
    X_WAITANY,
    add_compute,
    borrow,
    borrow_rows,
    emit,
    find_key,
    grow_hash,
    last_pending_key,
    new_rows,
    post,
    test,
    wait,
    waitall,
)

_BYTE_ERROR = -(1 << 40)
DONE = 0
NEED_ROOM = 1  # an array is full: grow it (ParserState.grow_for_line) and call again
FAILED = 2  # E holds the error


@dataclass
class ParserState:
    """The arrays :func:`parse_lines` works on (see :mod:`.ti.state` for their columns)."""

    TK: np.ndarray
    ops: tuple[np.ndarray, ...]
    C: np.ndarray
    R: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    H: np.ndarray
    VP: np.ndarray
    U: np.ndarray
    MS: np.ndarray
    MR: np.ndarray
    MSGU: np.ndarray
    CALLS: np.ndarray
    ORDER: np.ndarray
    D: np.ndarray
    DF: np.ndarray
    E: np.ndarray

    @classmethod
    def new(cls, n_ranks: int, n_lines: int, msg: bool, n_codes: int) -> ParserState:
        """State for ``n_ranks`` ranks and at most ``n_lines`` action lines.

        Tables bounded by the number of lines are uninitialised (touched as used).
        """
        R = np.zeros((n_ranks, R_COLS), np.int32)
        R[:, [R_LAST, R_CAND, R_CHAIN, R_GROUP]] = -1
        R[:, R_DT] = 1
        cap = n_lines + 1
        m = cap if msg else 1
        st = cls(
            TK=np.zeros((64, T_COLS), np.int64),
            ops=new_rows(cap),
            C=np.zeros(C_COLS, np.int64),
            R=R,
            Q=np.empty((cap, Q_COLS), np.int32),
            K=np.empty((cap, 3), np.int32),
            H=np.zeros((1024, 3), np.int64),
            VP=np.empty(1 << 16, np.int64),  # uninitialised: costs only what is used
            U=np.empty((cap, 3), np.int64),
            MS=np.empty((m, 3), np.int64),
            MR=np.empty((m, 3), np.int64),
            MSGU=np.zeros(n_codes, np.int64),
            CALLS=np.full(n_codes, -1, np.int64),
            ORDER=np.zeros(n_codes, np.int64),
            D=np.zeros(D_COLS, np.int64),
            DF=np.zeros(2, np.float64),
            E=np.zeros(10, np.int64),
        )
        st.CALLS[A_COMPUTE] = 0  # "compute" is call 0, as in TraceBuilder
        st.ORDER[0] = A_COMPUTE
        st.C[C_CALLS] = 1
        return st

    def arrays(self) -> tuple[object, ...]:
        """The arrays in the argument order of :func:`parse_lines`."""
        return tuple(getattr(self, f.name) for f in fields(self))

    def grow_for_line(self, n_ranks: int) -> None:
        """Enlarge whatever array the next line may not fit in (doubling)."""
        C = self.C
        if self.E[9]:
            self.TK = np.zeros((2 * int(self.E[9]), T_COLS), np.int64)
            self.E[9] = 0
        if 2 * (C[C_KEYS] + 1) > self.H.shape[0]:
            self.H = grow_hash(self.H)
        if C[C_VPOOL] + 2 * n_ranks > self.VP.shape[0]:
            rows = max(2 * self.VP.shape[0], int(C[C_VPOOL]) + 2 * n_ranks)
            grown = np.empty(rows, np.int64)
            grown[: int(C[C_VPOOL])] = self.VP[: int(C[C_VPOOL])]
            self.VP = grown


def run_parser(
    texts: list[bytes],
    n_ranks: int,
    msg: bool,
    rate: float,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_lines: int,
    *,
    state: ParserState | None = None,
    first: int = 0,
) -> ParserState:
    """Parse every line of every file (the texts, in order), growing arrays as needed.

    ``tables`` = (action names, action slots, datatype sizes). Check ``E[0]`` of the
    result for an error (``E[4]`` is then the index of the file). ``state``: parse into
    this state (default: a new one for ``n_lines`` lines); ``first``: the index of the
    first text among the trace's files (as errors and unknown actions name them).
    """
    names, slots, dtsize = tables
    st = ParserState.new(n_ranks, n_lines, msg, names.shape[0]) if state is None else state
    pos = np.zeros(2, np.int64)
    for f, text in enumerate(texts, start=first):
        buf = np.frombuffer(text, dtype=np.uint8)
        pos[:] = 0
        while True:
            status = parse_lines(
                buf, f, pos, n_ranks, msg, rate, names, slots, dtsize, *st.arrays()
            )
            if status == FAILED:
                return st
            if status == DONE:
                break
            st.grow_for_line(n_ranks)
    return st


@njit()
def _call(CALLS, ORDER, C, code):  # type: ignore[no-untyped-def]
    """Call-name index of an action (interned in order of first use)."""
    c = CALLS[code]
    if c < 0:
        c = C[C_CALLS]
        C[C_CALLS] = c + 1
        CALLS[code] = c
        ORDER[c] = code
    return c


@njit()
def _rank_token(buf, s, e):  # type: ignore[no-untyped-def]
    """Rank of a ``7`` / ``p7`` token, -1 if it is not one (digits only, no sign)."""
    if buf[s] == 112 and e - s > 1:
        s += 1
    v = 0
    for p in range(s, e):
        c = buf[p]
        if c < 48 or c > 57:
            return -1
        if v < (1 << 40):
            v = v * 10 + (c - 48)
    return v


@njit()
def parse_lines(  # type: ignore[no-untyped-def]
    buf,
    f,
    pos,
    n,
    msg,
    rate,
    names,
    slots,
    dtsize,
    TK,
    ops,
    C,
    R,
    Q,
    K,
    H,
    VP,
    U,
    MS,
    MR,
    MSGU,
    CALLS,
    ORDER,
    D,
    DF,
    E,
):
    """Interpret the lines of file ``f`` (text ``buf``) from ``pos = [byte, line]`` on.

    Returns DONE, FAILED (``E = [code, token, detail, detail, file, line, line
    start, line end, rank]``, ``DF[0]`` a float detail) or NEED_ROOM when a line
    may not fit the token, hash or vcount arrays (``pos`` then points at it; the
    caller grows them and calls again). Arrays are never reassigned here, helpers
    get borrowed views (:func:`.ti.state.borrow`), and the loop only calls small
    functions: a call into a large compiled function costs hundreds of ns to set up.
    """
    buf, TK, ops, C, R = borrow(buf), borrow(TK), borrow_rows(ops), borrow(C), borrow(R)
    Q, K, H, VP, U = borrow(Q), borrow(K), borrow(H), borrow(VP), borrow(U)
    MS, MR, MSGU, CALLS, ORDER = borrow(MS), borrow(MR), borrow(MSGU), borrow(CALLS), borrow(ORDER)
    D, DF, E, names, slots = borrow(D), borrow(DF), borrow(E), borrow(names), borrow(slots)
    dtsize, cls = borrow(dtsize), BYTE_CLASS
    p = pos[0]
    lineno = pos[1]
    end = buf.shape[0]
    while p < end:
        ntok, q = tokenize(buf, p, end, TK, cls)
        if not _room(ops, C, Q, K, U, MS, MR):  # sized from the line count: checked anyway
            return _fail(E, D, E_CAPACITY, f, lineno + 1, p, q, -1)
        if _BYTE_ERROR < ntok < 0 or 2 * (C[C_KEYS] + 1) > H.shape[0] or C[C_VPOOL] + 2 * n > VP.shape[0]:  # fmt: skip
            pos[0], pos[1], E[9] = p, lineno, -ntok if _BYTE_ERROR < ntok < 0 else 0
            return NEED_ROOM
        lineno += 1
        if ntok == 0 or (ntok == 1 and buf[TK[0, 0]] == 35):  # blank line or comment
            p = q + 1
            continue
        err = 0
        rank = -1 if ntok <= _BYTE_ERROR else _rank_token(buf, TK[0, 0], TK[0, 1])
        code = 0
        if ntok <= _BYTE_ERROR:
            err = E_BYTE
            D[D_A] = _BYTE_ERROR - ntok
        elif rank < 0 or ntok < 2:
            err, rank = E_SYNTAX, -1
        elif rank >= n:  # cannot happen after scan_ranks; guards the per-rank table
            err, rank = E_RANK_RANGE, -1
        else:
            R[rank, R_LINE] = lineno
            R[rank, R_FILE] = f
            if R[rank, R_FINAL]:
                err = E_AFTER_FINALIZE
            code = lookup_action(buf, TK[1, 0], TK[1, 1], names, slots)
        na = ntok - 2
        if err == 0:
            read_tokens(buf, TK, ntok)
            if A_INIT <= code <= A_LOCATION:  # bookkeeping: init, finalize, comm_*, location
                _bookkeeping(R, rank, code, na)
            elif code in (A_COMPUTE, A_SLEEP):
                err, sec = arg_seconds(buf, TK, na, 0, rate if code == A_COMPUTE else 1.0, D, DF)
                if err == 0:
                    call = 0 if code == A_COMPUTE else _call(CALLS, ORDER, C, code)
                    add_compute(ops, C, R, rank, sec, call)
            elif code == 0:  # unknown action: counted by name afterwards
                k = C[C_UNKNOWN]
                U[k, 0], U[k, 1], U[k, 2] = f, TK[1, 0], TK[1, 1]
                C[C_UNKNOWN] = k + 1
            else:
                call = _call(CALLS, ORDER, C, code)
                err = _decode(buf, TK, na, n, msg, rate, dtsize, code, rank, R[rank, R_DT], C, VP, D, DF)  # fmt: skip
                if err == 0:
                    err = _apply(ops, C, R, Q, K, H, MS, MR, MSGU, D, DF, rank, code, call)
        if err:
            return _fail(E, D, err, f, lineno, p, q, rank)
        p = q + 1
    return DONE


@njit(inline="always")
def _decode(buf, TK, na, n, msg, rate, dtsize, code, rank, dt, C, VP, D, DF):  # type: ignore[no-untyped-def]
    """Decode the arguments of an action with a call into ``D``/``DF`` (by dialect and
    action family: :mod:`.ti.kernel`); the error code (0: none). Inlined into
    :func:`parse_lines`, as are :func:`_apply` and the small helpers."""
    _clear(D, DF)
    if msg:
        return decode_msg(buf, TK, na, n, code, rank, rate, D, DF)
    if code <= A_IRECV or code == A_SENDRECV:
        return decode_p2p(TK, na, n, dt, dtsize, code, rank, D)
    if code <= A_WAITALL:
        return decode_completion(TK, na, n, code, False, D)
    if code == A_WAITANY:
        return decode_waitany(TK, na, D)
    if _is_vcollective(code):
        at = C[C_VPOOL]
        return decode_vcollective(buf, TK, na, n, dt, dtsize, code, rank, rate, VP, at, D, DF)
    return decode_collective(buf, TK, na, n, dt, dtsize, code, rate, D, DF)


@njit(inline="always")
def _apply(ops, C, R, Q, K, H, MS, MR, MSGU, D, DF, rank, code, call):  # type: ignore[no-untyped-def]
    """Apply a decoded action (``D``) to the parser state: emit its row (posting its
    request), complete requests (wait, test, waitall, waitany) or count it as unsupported
    (MSG);
    the error code (0: none)."""
    kind = D[D_KIND]
    if kind >= 0:
        req = post(Q, K, H, C, R, rank, D[D_KS], D[D_KD], D[D_KT]) if D[D_POST] else -1
        row = _emit_decoded(ops, C, R, D, DF, rank, call, req)
        if D[D_VLEN] or D[D_MSG]:
            _extras(ops, C, MS, MR, D, rank, row)
    elif kind == X_WAITALL:
        if R[rank, R_GROUP] >= 0:
            group_waitall(ops, C, R, Q, K, rank, call)
        else:
            waitall(ops, C, R, Q, K, rank, call)
    elif kind == X_WAITANY:
        waitany(ops, C, R, Q, K, rank, call)
    elif kind == X_MSG_UNSUPPORTED:
        MSGU[code] += 1
    elif kind == X_WAIT_LAST and last_pending_key(R, Q, rank) < 0:
        return E_NO_PENDING_IRECV
    else:  # wait / test on the decoded key (MSG wait: the newest pending)
        if kind == X_WAIT_LAST:
            kid = last_pending_key(R, Q, rank)
        else:
            kid = find_key(H, rank, D[D_KS], D[D_KD], D[D_KT])
        if kind == X_TEST:
            test(ops, C, R, Q, K, rank, kid, call)
        else:
            done = wait(ops, C, R, Q, K, rank, kid, call)
            if done == WAIT_GROUP:
                group_row(ops, C, R, rank, call)
            elif done == WAIT_NONE:
                D[D_TOK], D[D_A], D[D_B] = D[D_KS], D[D_KD], D[D_KT]
                return E_WAIT_NO_REQ
    return 0


@njit()
def _fail(E, D, err, f, lineno, p, q, rank):  # type: ignore[no-untyped-def]
    E[0], E[1], E[2], E[3] = err, D[D_TOK], D[D_A], D[D_B]
    E[4], E[5], E[6], E[7], E[8] = f, lineno, p, q, rank
    return FAILED


@njit()
def _bookkeeping(R, rank, code, na):  # type: ignore[no-untyped-def]
    if code == A_INIT:
        R[rank, R_INIT] = 1
        R[rank, R_DT] = 8 if na > 0 else 1  # init with an argument: MPI_DOUBLE default
    elif code == A_FINALIZE:
        R[rank, R_FINAL] = 1


@njit()
def _clear(D, DF):  # type: ignore[no-untyped-def]
    D[D_PEER] = D[D_PEER2] = NO_PEER
    D[D_TAG] = D[D_BS] = D[D_BR] = D[D_POST] = D[D_VLEN] = D[D_MSG] = 0
    DF[DF_SEC] = 0.0


@njit()
def _emit_decoded(ops, C, R, D, DF, rank, call, req):  # type: ignore[no-untyped-def]
    return emit(
        ops, C, R, rank, D[D_KIND], call, D[D_PEER], D[D_PEER2], D[D_TAG], D[D_BS], D[D_BR],
        req, DF[DF_SEC],
    )  # fmt: skip


@njit()
def _room(ops, C, Q, K, U, MS, MR):  # type: ignore[no-untyped-def]
    return (
        C[C_OPS] < ops[O_KIND].shape[0]
        and C[C_REQS] < Q.shape[0]
        and C[C_KEYS] < K.shape[0]
        and C[C_UNKNOWN] < U.shape[0]
        and C[C_MSG_SENDS] < MS.shape[0]
        and C[C_MSG_RECVS] < MR.shape[0]
    )


@njit()
def _is_vcollective(code):  # type: ignore[no-untyped-def]
    return code in (A_ALLTOALLV, A_GATHERV, A_ALLGATHERV, A_SCATTERV, A_REDUCESCATTER)


@njit()
def _extras(ops, C, MS, MR, D, rank, row):  # type: ignore[no-untyped-def]
    """A v-collective's place in the pool; MSG sends and receives to match later."""
    if D[D_VLEN]:
        ops[O_VSTART][row] = C[C_VPOOL]
        ops[O_COUNT][row] = D[D_VLEN]
        C[C_VPOOL] += D[D_VLEN]
    if D[D_MSG] == 1:
        k = C[C_MSG_SENDS]
        MS[k, 0], MS[k, 1], MS[k, 2] = rank, D[D_PEER], D[D_BS]
        C[C_MSG_SENDS] = k + 1
    elif D[D_MSG] == 2:
        k = C[C_MSG_RECVS]
        MR[k, 0], MR[k, 1], MR[k, 2] = D[D_PEER], rank, row
        C[C_MSG_RECVS] = k + 1
