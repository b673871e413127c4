"""Compiled lexing of SimGrid TI text: lines, tokens, action names and numbers.

The text of every rank file is one ``uint8`` buffer; these functions work on byte
offsets into it. The grammar (SimGrid's own parser splits on whitespace):

* lines end at ``\\n``; blank lines and lines whose first token starts with ``#``
  are skipped;
* tokens are separated by space, tab, CR, VT or FF; any other control byte or a
  byte >= 0x80 outside a comment is an error (TI traces are ASCII);
* integers are ``[+-]?[0-9]+``; other numbers are decimal floating point
  ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)`` (counts written as ``1e6``
  are accepted when integral, as SimGrid does).

Floats are converted exactly as Python's ``float`` does: the common short forms
(up to 19 significant digits, decimal exponents within +-22) by one correctly
rounded IEEE operation (Clinger's fast path), the rare others by ``float`` itself.
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.runtime.jit import njit, objmode

__all__ = [
    "ACTIONS",
    "BYTE_CLASS",
    "NUM_BAD",
    "NUM_OK",
    "NUM_RANGE",
    "NUM_UNINTEGRAL",
    "action_table",
    "lookup_action",
    "parse_float",
    "parse_int",
    "tokenize",
]

#: Action names (lower case) in code order; code 0 is an unknown action.
ACTIONS: tuple[str, ...] = (
    "",
    "compute",
    "sleep",
    "init",
    "finalize",
    "comm_size",
    "comm_split",
    "comm_dup",
    "location",
    "send",
    "isend",
    "recv",
    "irecv",
    "wait",
    "test",
    "waitall",
    "sendrecv",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "scatter",
    "scatterv",
    "reducescatter",
    "scan",
    "exscan",
    "waitany",
)
_MAX_NAME = 16
_SLOTS = 4

NUM_OK = 0
NUM_BAD = 1  # not a number
NUM_UNINTEGRAL = 2  # a number, but a count must be integral
NUM_RANGE = 3  # integral but beyond +-2^62 (no count, rank or tag is that large)

_LIMIT = 1 << 62
_TWO53 = float(1 << 53)
_POW10 = np.array([10.0**k for k in range(23)], dtype=np.float64)


def action_table() -> tuple[np.ndarray, np.ndarray]:
    """Lookup tables of :data:`ACTIONS` for :func:`lookup_action`.

    Returns ``(names, slots)``: ``names[code]`` is the name as bytes padded with
    zeros; ``slots[length, first letter - 'a']`` lists the candidate codes.
    """
    names = np.zeros((len(ACTIONS), _MAX_NAME), dtype=np.uint8)
    slots = np.zeros((_MAX_NAME, 26, _SLOTS), dtype=np.int64)
    for code, name in enumerate(ACTIONS):
        if not name:
            continue
        raw = name.encode()
        names[code, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        row = slots[len(raw), raw[0] - ord("a")]
        free = int(np.flatnonzero(row == 0)[0])  # IndexError here means _SLOTS is too small
        row[free] = code
    return names, slots


#: Byte classes for :func:`tokenize`: 0 token byte (printable ASCII), 1 whitespace
#: (space, tab, CR, VT, FF), 2 line end, 3 forbidden (other control bytes, >= 0x80).
BYTE_CLASS = np.full(256, 3, dtype=np.uint8)
BYTE_CLASS[33:127] = 0
BYTE_CLASS[[32, 9, 13, 11, 12]] = 1
BYTE_CLASS[10] = 2


@njit()
def tokenize(
    buf: np.ndarray, start: int, end: int, TK: np.ndarray, cls: np.ndarray
) -> tuple[int, int]:
    """Split the line starting at ``buf[start]`` into tokens: ``TK[k, 0:2]`` = start, end.

    Returns ``(n, line end)``: ``n`` is the number of tokens (1 for a comment line),
    ``-1 - k`` if the line holds more than ``len(TK)`` tokens (``k`` found so far;
    the caller grows ``TK`` and retries), or ``-(1 << 40) - column`` for a byte
    that is neither printable ASCII nor whitespace (not reported inside comments).
    ``cls`` is :data:`BYTE_CLASS`; the line ends at ``\\n`` (excluded) or ``end``.
    """
    n = 0
    p = start
    cap = TK.shape[0]
    while p < end:
        c = cls[buf[p]]
        if c == 1:
            p += 1
            continue
        if c == 2:
            return n, p
        if n == 0 and buf[p] == 35:  # '#': a comment line
            TK[0, 0] = p
            while p < end and buf[p] != 10:
                p += 1
            TK[0, 1] = p
            return 1, p
        if c == 3:
            q = p
            while q < end and buf[q] != 10:
                q += 1
            return -(1 << 40) - (p - start), q
        if n == cap:
            q = p
            while q < end and buf[q] != 10:
                q += 1
            return -1 - n, q
        TK[n, 0] = p
        p += 1
        while p < end:
            c = cls[buf[p]]
            if c != 0:
                break
            p += 1
        TK[n, 1] = p
        n += 1
    return n, p


@njit()
def lookup_action(buf: np.ndarray, s: int, e: int, names: np.ndarray, slots: np.ndarray) -> int:
    """Code of the action name ``buf[s:e]`` (ASCII case-insensitive), 0 if unknown."""
    n = e - s
    if n < 1 or n >= names.shape[1]:
        return 0
    first = buf[s] | 32
    if first < 97 or first > 122:
        return 0
    for k in range(slots.shape[2]):
        code = slots[n, first - 97, k]
        if code == 0:
            return 0
        same = True
        for i in range(n):
            c = buf[s + i]
            if 65 <= c <= 90:
                c += 32
            if c != names[code, i]:
                same = False
                break
        if same:
            return code
    return 0


@njit()
def _float_slow(buf: np.ndarray, s: int, e: int) -> float:
    with objmode(value="float64"):
        value = float(bytes(buf[s:e]).decode("ascii"))
    return value


@njit()
def parse_float(buf: np.ndarray, s: int, e: int) -> tuple[int, float]:
    """``(NUM_OK, value)`` for a decimal number in ``buf[s:e]``, ``(NUM_BAD, 0.0)`` otherwise.

    The value is bit-identical to Python's ``float(text)``.
    """
    p = s
    neg = False
    if p < e and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    w = 0
    nsig = 0
    ndig = 0
    nfrac = 0
    while p < e and 48 <= buf[p] <= 57:
        d = buf[p] - 48
        if nsig > 0 or d != 0:
            nsig += 1
            if nsig <= 19:
                w = w * 10 + d
        ndig += 1
        p += 1
    if p < e and buf[p] == 46:
        p += 1
        while p < e and 48 <= buf[p] <= 57:
            d = buf[p] - 48
            if nsig > 0 or d != 0:
                nsig += 1
                if nsig <= 19:
                    w = w * 10 + d
            ndig += 1
            nfrac += 1
            p += 1
    if ndig == 0:
        return 1, 0.0
    exp = 0
    if p < e and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < e and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        nexp = 0
        while p < e and 48 <= buf[p] <= 57:
            if nexp < 9:
                exp = exp * 10 + (buf[p] - 48)
            nexp += 1
            p += 1
        if nexp == 0:
            return 1, 0.0
        if nexp >= 9:
            return 0, _float_slow(buf, s, e)
        if eneg:
            exp = -exp
    if p != e:
        return 1, 0.0
    if nsig > 19:
        return 0, _float_slow(buf, s, e)
    e10 = exp - nfrac
    if w == 0:
        return 0, -0.0 if neg else 0.0
    value = 0.0
    if w <= (1 << 53) and -22 <= e10 <= 22:
        value = float(w) * _POW10[e10] if e10 >= 0 else float(w) / _POW10[-e10]
    elif w <= (1 << 53) and 22 < e10 <= 37:
        scaled = float(w) * _POW10[e10 - 22]  # exact while it stays below 2^53
        if scaled >= _TWO53:
            return 0, _float_slow(buf, s, e)
        value = scaled * _POW10[22]
    else:
        return 0, _float_slow(buf, s, e)
    return 0, -value if neg else value


@njit()
def parse_int(buf: np.ndarray, s: int, e: int) -> tuple[int, int]:
    """``(status, value)`` of an integer count written as an integer or an integral float.

    ``status`` is :data:`NUM_OK`, :data:`NUM_BAD` (not a number),
    :data:`NUM_UNINTEGRAL` or :data:`NUM_RANGE` (beyond +-2^62).
    """
    p = s
    neg = False
    if p < e and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    if p < e:
        v = 0
        q = p
        while q < e and 48 <= buf[q] <= 57:
            if v > _LIMIT:
                return NUM_RANGE, 0
            v = v * 10 + (buf[q] - 48)
            q += 1
        if q == e:
            if v > _LIMIT:
                return NUM_RANGE, 0
            return NUM_OK, -v if neg else v
    status, f = parse_float(buf, s, e)
    if status != NUM_OK:
        return NUM_BAD, 0
    if not np.isfinite(f) or f != np.floor(f):
        return NUM_UNINTEGRAL, 0
    if abs(f) > _LIMIT:
        return NUM_RANGE, 0
    return NUM_OK, int(f)
