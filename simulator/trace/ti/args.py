"""Compiled readers of TI action arguments with range checks.

:func:`read_tokens` splits a line and parses every argument token once into the
token table ``TK`` (start, end, integer value and status, and the same for the
token read as a rank with SimGrid's optional ``p`` prefix). The ``arg_*``
functions then only look values up and check their range, so each line parses
its numbers in one place. They return ``(error code, value)`` with code 0 on
success; on failure the code is an ``E_*`` constant of :mod:`.ti.state` and ``D``
holds the details (token index, allowed bounds) for :mod:`.ti.messages`.
Argument ``i`` is token ``i + 2`` (after the rank and the action name).
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.trace.ir import ANY_SOURCE
from mpiuq.simulator.trace.limits import MAX_ACTION_SECONDS, MAX_COUNT, MAX_MESSAGE_BYTES, MAX_TAG
from mpiuq.simulator.trace.ti.lex import NUM_BAD, NUM_OK, NUM_RANGE, parse_float, parse_int
from mpiuq.simulator.trace.ti.state import (
    D_A,
    D_B,
    D_TOK,
    DF_VALUE,
    E_BYTES,
    E_COUNT,
    E_DATATYPE,
    E_DEST_ANY,
    E_FEW_ARGS,
    E_FLOPS,
    E_INTEGRAL,
    E_KEY,
    E_NUMBER,
    E_PEER,
    E_ROOT,
    E_SECONDS,
    E_TAG,
    E_VEC,
    SMPI_ANY_SOURCE,
    SMPI_ANY_TAG,
)

# token table columns
T_START = 0
T_END = 1
T_INT = 2  # value as a count
T_INT_STATUS = 3
T_RANK = 4  # value as a rank ("p7" allowed)
T_RANK_STATUS = 5
T_COLS = 6

# peer roles
DEST = 0  # destination of a send: 0..n-1
SOURCE = 1  # source of a receive: 0..n-1 or -333 (any source -> ANY_SOURCE)
SOURCE_NO_P = 2  # as SOURCE, but without SimGrid's "p" prefix (SMPI receives)
ROOT = 3  # root of a collective: 0..n-1


@njit()
def read_tokens(buf, TK, ntok):  # type: ignore[no-untyped-def]
    """Parse tokens 2.. of a tokenized line as counts and as ranks (into ``TK``)."""
    for k in range(2, ntok):
        s = TK[k, T_START]
        e = TK[k, T_END]
        status, v = parse_int(buf, s, e)
        TK[k, T_INT] = v
        TK[k, T_INT_STATUS] = status
        if buf[s] == 112 and e - s > 1:  # "p7"
            status, v = parse_int(buf, s + 1, e)
        TK[k, T_RANK] = v
        TK[k, T_RANK_STATUS] = status


@njit()
def _fail(D, code, tok, a, b):  # type: ignore[no-untyped-def]
    D[D_TOK] = tok
    D[D_A] = a
    D[D_B] = b
    return code


@njit()
def arg_int(TK, na, i, lo, hi, code, D):  # type: ignore[no-untyped-def]
    """Integer argument ``i`` in ``lo..hi`` (else error ``code`` naming the range)."""
    if i >= na:
        return _fail(D, E_FEW_ARGS, -1, 0, 0), 0
    k = i + 2
    status = TK[k, T_INT_STATUS]
    v = TK[k, T_INT]
    if status == NUM_OK and lo <= v <= hi:
        return 0, v
    if status in (NUM_OK, NUM_RANGE):
        return _fail(D, code, k, lo, hi), 0
    return _fail(D, E_NUMBER if status == NUM_BAD else E_INTEGRAL, k, 0, 0), 0


@njit()
def arg_count(TK, na, i, D):  # type: ignore[no-untyped-def]
    """Element count argument ``i``: 0..MAX_COUNT."""
    return arg_int(TK, na, i, 0, MAX_COUNT, E_COUNT, D)


@njit()
def arg_bytes(TK, na, i, D):  # type: ignore[no-untyped-def]
    """Byte size argument ``i`` (MSG dialect): 0..MAX_MESSAGE_BYTES."""
    return arg_int(TK, na, i, 0, MAX_MESSAGE_BYTES, E_BYTES, D)


@njit()
def arg_tag(TK, na, i, lo, D):  # type: ignore[no-untyped-def]
    """Tag argument ``i``: lo..MAX_TAG (lo = -1 on receives: MPI_ANY_TAG, which SMPI
    writes as -444; both are read as -1)."""
    if lo < 0 and _is_smpi_any_tag(TK, na, i):
        return 0, -1
    return arg_int(TK, na, i, lo, MAX_TAG, E_TAG, D)


@njit()
def _is_smpi_any_tag(TK, na, i):  # type: ignore[no-untyped-def]
    """Whether argument ``i`` is SMPI's MPI_ANY_TAG (-444)."""
    return i < na and TK[i + 2, T_INT_STATUS] == NUM_OK and TK[i + 2, T_INT] == SMPI_ANY_TAG


@njit()
def arg_dt(TK, na, i, default, dtsize, D):  # type: ignore[no-untyped-def]
    """Size in bytes of the datatype id in argument ``i``; ``default`` when absent."""
    if i >= na:
        return 0, default
    err, code = arg_int(TK, na, i, 0, dtsize.shape[0] - 1, E_DATATYPE, D)
    if err:
        return err, 0
    return 0, dtsize[code]


@njit()
def arg_peer(TK, na, i, n, role, D):  # type: ignore[no-untyped-def]
    """World rank in argument ``i`` for ``role`` (ROOT: 0 when absent)."""
    if i >= na:
        if role == ROOT:
            return 0, 0
        return _fail(D, E_FEW_ARGS, -1, 0, 0), 0
    k = i + 2
    col = T_INT if role == SOURCE_NO_P else T_RANK
    status = TK[k, col + 1]
    v = TK[k, col]
    bad_range = E_ROOT if role == ROOT else E_PEER
    if status != NUM_OK:
        if status == NUM_RANGE:
            return _fail(D, bad_range, k, 0, n - 1), 0
        return _fail(D, E_NUMBER if status == NUM_BAD else E_INTEGRAL, k, 0, 0), 0
    if v == SMPI_ANY_SOURCE:
        if role in (SOURCE, SOURCE_NO_P):
            return 0, ANY_SOURCE
        return _fail(D, E_DEST_ANY if role == DEST else E_ROOT, k, 0, n - 1), 0
    if 0 <= v < n:
        return 0, v
    return _fail(D, bad_range, k, 0, n - 1), 0


@njit()
def arg_key(TK, na, n, D):  # type: ignore[no-untyped-def]
    """(src, dst, tag) naming a request in ``wait``/``test`` arguments 0..2."""
    err, s = arg_int(TK, na, 0, SMPI_ANY_SOURCE, n - 1, E_KEY, D)
    if err:
        return err, 0, 0, 0
    err, d = arg_int(TK, na, 1, SMPI_ANY_SOURCE, n - 1, E_KEY, D)
    if err:
        return err, 0, 0, 0
    if _is_smpi_any_tag(TK, na, 2):  # a wait for a receive of MPI_ANY_TAG
        return 0, s, d, -1
    err, t = arg_int(TK, na, 2, -1, MAX_TAG, E_KEY, D)
    return err, s, d, t


@njit()
def arg_seconds(buf, TK, na, i, rate, D, DF):  # type: ignore[no-untyped-def]
    """Seconds of argument ``i`` (flops divided by ``rate``; rate 1 for ``sleep``)."""
    if i >= na:
        return _fail(D, E_FEW_ARGS, -1, 0, 0), 0.0
    k = i + 2
    status, f = parse_float(buf, TK[k, T_START], TK[k, T_END])
    if status != NUM_OK:
        return _fail(D, E_NUMBER, k, 0, 0), 0.0
    if not (f >= 0.0) or f == np.inf:
        return _fail(D, E_FLOPS, k, 0, 0), 0.0
    sec = f / rate
    if sec > MAX_ACTION_SECONDS:
        DF[DF_VALUE] = sec
        return _fail(D, E_SECONDS, k, 0, 0), 0.0
    return 0, sec


@njit()
def arg_vec(TK, na, start, n, size, VP, at, D):  # type: ignore[no-untyped-def]
    """``n`` per-rank counts from argument ``start`` times ``size`` into ``VP[at:at+n]``.

    Returns ``(error, total bytes)``; the total is bounded by MAX_MESSAGE_BYTES.
    """
    total = 0
    for k in range(n):
        i = start + k
        if i >= na:
            return _fail(D, E_VEC, -1, n, max(0, na - start)), 0
        err, c = arg_count(TK, na, i, D)
        if err:
            return err, 0
        VP[at + k] = c * size
        total += c * size
        if total > MAX_MESSAGE_BYTES:
            return _fail(D, E_BYTES, i + 2, 0, MAX_MESSAGE_BYTES), 0
    return 0, total
