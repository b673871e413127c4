"""Compiled decoding of TI actions: one line's arguments to one operation (scalars in ``D``).

:func:`scan_ranks` finds the world size and dialect (one pass over the first token
of every line, rejecting ranks beyond MAX_RANKS before anything is allocated per
rank). The ``decode_*`` functions turn the arguments of one action into the
operation it stands for, written as scalars to ``D``/``DF`` (fields in
:mod:`.ti.state`); :mod:`.ti.parse` applies them to the parser state. Keeping
decoding apart from the state keeps each compiled call down to a few arrays (every
array argument costs reference counting on every line).
"""

from __future__ import annotations

from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.trace.limits import MAX_COUNT, MAX_RANKS
from mpiuq.simulator.trace.ti.args import (
    DEST,
    ROOT,
    SOURCE,
    SOURCE_NO_P,
    arg_bytes,
    arg_count,
    arg_dt,
    arg_int,
    arg_key,
    arg_peer,
    arg_seconds,
    arg_tag,
    arg_vec,
)
from mpiuq.simulator.trace.ti.state import (
    D_BR,
    D_BS,
    D_KD,
    D_KIND,
    D_KS,
    D_KT,
    D_MSG,
    D_PEER,
    D_PEER2,
    D_POST,
    D_TAG,
    D_VLEN,
    DF_SEC,
    E_COUNT,
    E_RANK_RANGE,
    NO_PEER,
    SMPI_ANY_SOURCE,
    X_MSG_UNSUPPORTED,
    X_TEST,
    X_WAIT,
    X_WAIT_LAST,
    X_WAITALL,
    X_WAITANY,
)

# action codes (index in lex.ACTIONS)
A_COMPUTE, A_SLEEP, A_INIT, A_FINALIZE = 1, 2, 3, 4
A_LOCATION = 8
A_SEND, A_ISEND, A_RECV, A_IRECV, A_WAIT, A_TEST, A_WAITALL, A_SENDRECV = range(9, 17)
A_BARRIER, A_BCAST, A_REDUCE, A_ALLREDUCE, A_ALLTOALL, A_ALLTOALLV = range(17, 23)
A_GATHER, A_GATHERV, A_ALLGATHER, A_ALLGATHERV, A_SCATTER, A_SCATTERV = range(23, 29)
A_REDUCESCATTER, A_SCAN, A_EXSCAN = 29, 30, 31
A_WAITANY = 32

# OpKind values
_SEND, _RECV, _ISEND, _IRECV, _SENDRECV = 1, 2, 3, 4, 7
_BARRIER, _BCAST, _REDUCE, _ALLREDUCE, _GATHER, _GATHERV, _SCATTER, _SCATTERV = range(10, 18)
_ALLGATHER, _ALLGATHERV, _ALLTOALL, _ALLTOALLV, _REDUCE_SCATTER, _SCAN, _EXSCAN = range(18, 25)

_WS = (32, 9, 13, 11, 12)  # space, tab, CR, VT, FF


@njit()
def scan_ranks(buf, f, E):  # type: ignore[no-untyped-def]
    """``(action lines, largest rank, MSG dialect?)`` of one file's text.

    A line counts when its first token is a rank (``7`` or ``p7``); a rank above
    MAX_RANKS - 1 stops the scan with E_RANK_RANGE (file ``f``, line and line span in
    ``E[4:8]``) before anything per rank exists.
    """
    lines = 0
    top = -1
    msg = False
    p = 0
    end = buf.shape[0]
    lineno = 0
    while p < end:
        lineno += 1
        q = p
        while q < end and buf[q] != 10:
            q += 1
        s = p
        while s < q and buf[s] in _WS:
            s += 1
        if s < q and buf[s] == 112:  # 'p'
            msg = True
            s += 1
        v = 0
        digits = 0
        while s < q and 48 <= buf[s] <= 57:
            if v < MAX_RANKS:
                v = v * 10 + (buf[s] - 48)
            digits += 1
            s += 1
        if digits > 0 and (s == q or buf[s] in _WS):
            if v >= MAX_RANKS:
                E[0] = E_RANK_RANGE
                E[4] = f
                E[5] = lineno
                E[6] = p
                E[7] = q
                return 0, -1, False
            lines += 1
            top = max(top, v)
        p = q + 1
    return lines, top, msg


@njit()
def decode_p2p(TK, na, n, dt, dtsize, code, rank, D):  # type: ignore[no-untyped-def]
    """SMPI send/isend/recv/irecv (peer tag count [dt]) and sendrecv."""
    if code in (A_SEND, A_ISEND):
        err, dst = arg_peer(TK, na, 0, n, DEST, D)
        tag = cnt = size = 0
        if err == 0:
            err, tag = arg_tag(TK, na, 1, 0, D)
        if err == 0:
            err, cnt = arg_count(TK, na, 2, D)
        if err == 0:
            err, size = arg_dt(TK, na, 3, dt, dtsize, D)
        D[D_KIND] = _SEND if code == A_SEND else _ISEND
        D[D_PEER] = dst
        D[D_TAG] = tag
        D[D_BS] = cnt * size
        D[D_POST] = 1 if code == A_ISEND else 0
        D[D_KS], D[D_KD], D[D_KT] = rank, dst, tag
        return err
    if code in (A_RECV, A_IRECV):
        err, src = arg_peer(TK, na, 0, n, SOURCE_NO_P, D)
        tag = cnt = size = 0
        if err == 0:
            err, tag = arg_tag(TK, na, 1, -1, D)
        if err == 0:
            err, cnt = arg_count(TK, na, 2, D)
        if err == 0:
            err, size = arg_dt(TK, na, 3, dt, dtsize, D)
        D[D_KIND] = _RECV if code == A_RECV else _IRECV
        D[D_PEER] = src
        D[D_TAG] = tag
        D[D_BR] = cnt * size
        D[D_POST] = 1 if code == A_IRECV else 0
        D[D_KS], D[D_KD], D[D_KT] = SMPI_ANY_SOURCE if src == -1 else src, rank, tag
        return err
    # sendrecv sendcount dst recvcount src [dt1 dt2]
    d1 = d2 = dt
    dst = src = sc = rc = 0
    err = 0
    if na > 5:
        err, d1 = arg_dt(TK, na, 4, dt, dtsize, D)
        if err == 0:
            err, d2 = arg_dt(TK, na, 5, dt, dtsize, D)
    if err == 0:
        err, dst = arg_peer(TK, na, 1, n, DEST, D)
    if err == 0:
        err, src = arg_peer(TK, na, 3, n, SOURCE, D)
    if err == 0:
        err, sc = arg_count(TK, na, 0, D)
    if err == 0:
        err, rc = arg_count(TK, na, 2, D)
    D[D_KIND] = _SENDRECV
    D[D_PEER] = dst
    D[D_PEER2] = src
    D[D_BS] = sc * d1
    D[D_BR] = rc * d2
    return err


@njit()
def decode_completion(TK, na, n, code, msg, D):  # type: ignore[no-untyped-def]
    """wait src dst tag / test src dst tag / waitall [n]; MSG ``wait`` without arguments."""
    if code == A_WAITALL:
        D[D_KIND] = X_WAITALL
        return 0
    if msg and na == 0:
        D[D_KIND] = X_WAIT_LAST
        return 0
    err, s, d, t = arg_key(TK, na, n, D)
    D[D_KIND] = X_TEST if code == A_TEST else X_WAIT
    D[D_KS], D[D_KD], D[D_KT] = s, d, t
    return err


@njit()
def decode_waitany(TK, na, D):  # type: ignore[no-untyped-def]
    """SMPI ``waitAny N`` (N: the length of the request array, >= 1: SMPI traces no call
    with fewer). The line does not say which request completed: the parser's wait-any
    group does (:func:`.ti.state.waitany`)."""
    err, _n = arg_int(TK, na, 0, 1, MAX_COUNT, E_COUNT, D)
    D[D_KIND] = X_WAITANY
    return err


@njit()
def decode_collective(buf, TK, na, n, dt, dtsize, code, rate, D, DF):  # type: ignore[no-untyped-def]
    """SMPI collectives with one count per rank (no vectors)."""
    if code == A_BARRIER:
        D[D_KIND] = _BARRIER
        return 0
    err, c0 = arg_count(TK, na, 0, D)
    c1 = d0 = d1 = 0
    root = NO_PEER
    sec = 0.0
    if code == A_BCAST:  # bcast size [root dt]
        if err == 0:
            err, d0 = arg_dt(TK, na, 2, dt, dtsize, D)
        if err == 0:
            err, root = arg_peer(TK, na, 1, n, ROOT, D)
        kind = _BCAST
        c1, d1 = c0, d0
    elif code in (A_REDUCE, A_ALLREDUCE, A_SCAN, A_EXSCAN):
        # reduce comm comp [root dt]; allreduce, scan, exscan: comm comp [dt]
        if err == 0:
            err, d0 = arg_dt(TK, na, 3 if code == A_REDUCE else 2, dt, dtsize, D)
        if err == 0 and code == A_REDUCE:
            err, root = arg_peer(TK, na, 2, n, ROOT, D)
        if err == 0:
            err, sec = arg_seconds(buf, TK, na, 1, rate, D, DF)
        kind = _REDUCE
        if code == A_ALLREDUCE:
            kind = _ALLREDUCE
        elif code == A_SCAN:
            kind = _SCAN
        elif code == A_EXSCAN:
            kind = _EXSCAN
        c1, d1 = c0, d0
    else:  # alltoall / allgather: send recv [dt1 dt2]; gather / scatter: send recv [root dt1 dt2]
        rooted = code in (A_GATHER, A_SCATTER)
        off = 1 if rooted else 0
        if err == 0 and rooted:
            err, root = arg_peer(TK, na, 2, n, ROOT, D)
        if err == 0:
            err, d0 = arg_dt(TK, na, 2 + off, dt, dtsize, D)
        if err == 0:
            err, c1 = arg_count(TK, na, 1, D)
        if err == 0:
            err, d1 = arg_dt(TK, na, 3 + off, dt, dtsize, D)
        kind = _ALLTOALL
        if code == A_ALLGATHER:
            kind = _ALLGATHER
        elif code == A_GATHER:
            kind = _GATHER
        elif code == A_SCATTER:
            kind = _SCATTER
    D[D_KIND] = kind
    D[D_PEER] = root
    D[D_BS] = c0 * d0
    D[D_BR] = c1 * d1
    DF[DF_SEC] = sec
    return err


@njit()
def decode_vcollective(buf, TK, na, n, dt, dtsize, code, rank, rate, VP, at, D, DF):  # type: ignore[no-untyped-def]
    """SMPI collectives with per-rank vectors of counts (N = world size), into ``VP[at:]``."""
    root = NO_PEER
    sec = 0.0
    nv = n
    d1 = d2 = dt
    bs = br = c = 0
    if code == A_ALLTOALLV:  # sbuf sendcounts*N rbuf recvcounts*N [dt1 dt2]
        err, d1 = arg_dt(TK, na, 2 * n + 2, dt, dtsize, D)
        if err == 0:
            err, d2 = arg_dt(TK, na, 2 * n + 3, dt, dtsize, D)
        if err == 0:
            err, bs = arg_vec(TK, na, 1, n, d1, VP, at, D)
        if err == 0:
            err, br = arg_vec(TK, na, n + 2, n, d2, VP, at + n, D)
        if err == 0:
            err, c = arg_count(TK, na, n + 1, D)
        if err == 0:
            err, c = arg_count(TK, na, 0, D)
        kind = _ALLTOALLV
        nv = 2 * n
    elif code in (A_GATHERV, A_ALLGATHERV):  # send recvcounts*N [root] [dt1 dt2]
        err = 0
        kind = _GATHERV
        if code == A_GATHERV:
            err, root = arg_peer(TK, na, 1 + n, n, ROOT, D)
            if err == 0:
                err, d1 = arg_dt(TK, na, 2 + n, dt, dtsize, D)
            if err == 0:
                err, d2 = arg_dt(TK, na, 3 + n, dt, dtsize, D)
        else:
            kind = _ALLGATHERV
            rest = max(0, na - (1 + n))
            if rest == 2 or rest == n + 2:  # dt1 dt2 [displacements*N]
                err, d1 = arg_dt(TK, na, 1 + n, dt, dtsize, D)
                if err == 0:
                    err, d2 = arg_dt(TK, na, 2 + n, dt, dtsize, D)
        if err == 0:
            err, br = arg_vec(TK, na, 1, n, d2, VP, at, D)
        if err == 0:
            err, c = arg_count(TK, na, 0, D)
        bs = c * d1
    elif code == A_SCATTERV:  # sendcounts*N recv [root dt1 dt2]
        err, d1 = arg_dt(TK, na, 3 + n, dt, dtsize, D)
        if err == 0:
            err, d2 = arg_dt(TK, na, 4 + n, dt, dtsize, D)
        if err == 0:
            err, bs = arg_vec(TK, na, 0, n, d1, VP, at, D)
        if err == 0:
            err, root = arg_peer(TK, na, n + 1, n, ROOT, D)
        if err == 0:
            err, c = arg_count(TK, na, n, D)
        br = c * d2
        kind = _SCATTERV
    else:  # reducescatter recvcounts*N comp_size [dt]
        err, d1 = arg_dt(TK, na, n + 1, dt, dtsize, D)
        if err == 0:
            err, bs = arg_vec(TK, na, 0, n, d1, VP, at, D)
        if err == 0:
            err, sec = arg_seconds(buf, TK, na, n, rate, D, DF)
        if err == 0:
            br = VP[at + rank]
        kind = _REDUCE_SCATTER
    D[D_KIND] = kind
    D[D_PEER] = root
    D[D_BS] = bs
    D[D_BR] = br
    D[D_VLEN] = nv
    DF[DF_SEC] = sec
    return err


@njit()
def decode_msg(buf, TK, na, n, code, rank, rate, D, DF):  # type: ignore[no-untyped-def]
    """MSG 2010 dialect: sizes in bytes, no tags, receive sizes from the matching send."""
    if code in (A_SEND, A_ISEND):
        err, dst = arg_peer(TK, na, 0, n, DEST, D)
        nb = 0
        if err == 0:
            err, nb = arg_bytes(TK, na, 1, D)
        D[D_KIND] = _SEND if code == A_SEND else _ISEND
        D[D_PEER] = dst
        D[D_BS] = nb
        D[D_POST] = 1 if code == A_ISEND else 0
        D[D_KS], D[D_KD], D[D_KT] = rank, dst, 0
        D[D_MSG] = 1
        return err
    if code in (A_RECV, A_IRECV):
        err, src = arg_peer(TK, na, 0, n, SOURCE, D)
        D[D_KIND] = _RECV if code == A_RECV else _IRECV
        D[D_PEER] = src
        D[D_POST] = 1 if code == A_IRECV else 0
        D[D_KS], D[D_KD], D[D_KT] = src, rank, 0
        D[D_MSG] = 2
        return err
    if code in (A_WAIT, A_WAITALL):
        return decode_completion(TK, na, n, code, True, D)
    if code == A_BARRIER:
        D[D_KIND] = _BARRIER
        return 0
    if code in (A_BCAST, A_REDUCE, A_ALLREDUCE):  # bytes [flops]
        err, nb = arg_bytes(TK, na, 0, D)
        sec = 0.0
        if err == 0 and code != A_BCAST and na > 1:
            err, sec = arg_seconds(buf, TK, na, 1, rate, D, DF)
        D[D_KIND] = _BCAST
        D[D_PEER] = 0
        if code == A_ALLREDUCE:
            D[D_KIND] = _ALLREDUCE
            D[D_PEER] = NO_PEER
        elif code == A_REDUCE:
            D[D_KIND] = _REDUCE
        D[D_BS] = nb
        D[D_BR] = nb
        DF[DF_SEC] = sec
        return err
    D[D_KIND] = X_MSG_UNSUPPORTED
    return 0
