"""The TI parse on two cores: the files in two groups, each parsed in its own thread, then joined.

A trace of many rank files is parsed as two groups of whole files, the first files
and the rest, split where their sizes balance. Each group is parsed by
:func:`~.ti.parse.parse_lines` (the compiled loop releases the GIL) with its own
:class:`~.ti.parse.ParserState`, the first group's in the calling thread into arrays
sized for the whole trace, the second's in a worker thread; the second group's rows,
requests, v-counts and unknown actions are then appended to the first's with their
indices shifted, and its call names interned after the first's, so that the joined state
is the serial parse's (:func:`~.ti.parse.run_parser` over all files in order), array for
array, except the key tables ``K`` and ``H``, which only the parse itself reads.

That holds when no rank has lines in both groups: a rank's requests, and the
waits and tests that complete them, are then all in one group, and nothing else of
the parse depends on an earlier file. :func:`run_parser_split` checks it after the
parse (the ranks each group touched) and returns ``None`` when it does not hold, or
for the MSG dialect (whose receive sizes come from sends of other ranks); the caller
then parses serially. An error in the first group is the serial parse's first error;
an error in the second is too, when the ranks it touched up to the error are not the
first group's.
"""

from __future__ import annotations

import ctypes

import numpy as np

from mpiuq.simulator.runtime.watch import run_pair
from mpiuq.simulator.trace.ti.parse import ParserState, run_parser
from mpiuq.simulator.trace.ti.state import (
    C_ANY_MEMBERS,
    C_CALLS,
    C_FAILED_TESTS,
    C_KEYS,
    C_OPS,
    C_REQS,
    C_TEST_NONE,
    C_UNKNOWN,
    C_VPOOL,
    C_WAITANY_NONE,
    O_CALL,
    O_REQ,
    O_VSTART,
    Q_KEY,
    Q_NEXT,
    Q_OWNER,
    Q_RNEXT,
    Q_RPREV,
    R_CAND,
    R_CHAIN,
    R_GROUP,
    R_GROW,
    R_LAST,
    R_LINE,
)

__all__ = ["SPLIT_MIN_BYTES", "run_parser_split", "split_point"]

#: Text bytes below which a trace is parsed in one thread (a thread and the join cost
#: more than half of parsing it).
SPLIT_MIN_BYTES = 1 << 21


def split_point(sizes: list[int]) -> int:
    """Number of leading files whose bytes come closest to half of all (at least 1,
    at most ``len(sizes) - 1``)."""
    total = sum(sizes)
    best, best_gap, acc = 1, None, 0
    for k in range(1, len(sizes)):
        acc += sizes[k - 1]
        gap = abs(2 * acc - total)
        if best_gap is None or gap < best_gap:
            best, best_gap = k, gap
    return best


def run_parser_split(
    texts: list[bytes],
    lines: list[int],
    n_ranks: int,
    msg: bool,
    rate: float,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> ParserState | None:
    """:func:`~.ti.parse.run_parser` over ``texts`` on two threads, or ``None`` when the
    files cannot be parsed apart (fewer than two, the MSG dialect, or a rank with lines
    in both groups): parse serially then.

    ``lines`` holds each file's action lines (the scan's count, which sizes the arrays).
    """
    if msg or len(texts) < 2:
        return None
    k = split_point([len(t) for t in texts])
    n_codes = tables[0].shape[0]
    # one set of row and request arrays for the whole trace; the second group writes
    # its rows and requests after room for the first's (the first group's lines bound
    # both), and they are moved down onto the first's end afterwards: every page is
    # first touched once, as in a serial parse (on this kind of machine first touches
    # cost more than the parse that fills them)
    head = ParserState.new(n_ranks, sum(lines) + 1, False, n_codes)
    tail = ParserState.new(n_ranks, sum(lines[k:]), False, n_codes)
    ops, Q, gap = head.ops, head.Q, sum(lines[:k]) + 1
    head.ops, head.Q = tuple(col[:gap] for col in ops), Q[:gap]  # each its serial room
    tail.ops, tail.Q = tuple(col[gap:] for col in ops), Q[gap:]
    run_pair(
        lambda: run_parser(texts[:k], n_ranks, False, rate, tables, 0, state=head),
        lambda: run_parser(texts[k:], n_ranks, False, rate, tables, 0, state=tail, first=k),
    )
    if np.any((head.R[:, R_LINE] > 0) & (tail.R[:, R_LINE] > 0)):
        return None  # a rank in both groups: its state of the first group is needed
    if head.E[0]:
        return head
    if tail.E[0]:
        return tail
    head.ops, head.Q = ops, Q
    _append(head, tail, gap)
    return head


def _move_rows(arr: np.ndarray, src: int, dst: int, n: int) -> None:
    """Move rows ``[src, src + n)`` of the C-contiguous ``arr`` to ``[dst, dst + n)``
    (the ranges may overlap; no temporary copy)."""
    row = arr.strides[0]
    if n > 0 and src != dst:
        ctypes.memmove(arr.ctypes.data + dst * row, arr.ctypes.data + src * row, n * row)


def _shift(col: np.ndarray, by: int) -> None:
    """Add ``by`` to the entries >= 0 of ``col`` (indices; -1 means none), in place."""
    if by:
        np.add(col, by, out=col, where=col >= 0)


def _append(head: ParserState, tail: ParserState, gap: int) -> None:
    """Append the state of the second group of files (``tail``, whose rows and requests
    start at row ``gap`` of ``head``'s arrays) to the first's (``head``)."""
    C, Ct = head.C, tail.C
    rows, reqs, keys, pool = int(C[C_OPS]), int(C[C_REQS]), int(C[C_KEYS]), int(C[C_VPOOL])
    n, m = int(Ct[C_OPS]), int(Ct[C_REQS])
    # call names: the tail's, in its order of first use, after the head's
    remap = np.empty(max(int(Ct[C_CALLS]), 1), np.int64)
    for local in range(int(Ct[C_CALLS])):
        code = int(tail.ORDER[local])
        if head.CALLS[code] < 0:
            head.CALLS[code] = C[C_CALLS]
            head.ORDER[C[C_CALLS]] = code
            C[C_CALLS] += 1
        remap[local] = head.CALLS[code]
    for c, col in enumerate(head.ops):
        _move_rows(col, gap, rows, n)
        part = col[rows : rows + n]
        if c == O_CALL and np.any(remap[: int(Ct[C_CALLS])] != np.arange(int(Ct[C_CALLS]))):
            part[:] = remap[part]
        elif c == O_REQ:
            _shift(part, reqs)
        elif c == O_VSTART:
            _shift(part, pool)
    # requests: owner rows, keys and the links between requests shift
    _move_rows(head.Q, gap, reqs, m)
    Q = head.Q[reqs : reqs + m]
    _shift(Q[:, Q_OWNER], rows)
    _shift(Q[:, Q_KEY], keys)
    for q in (Q_NEXT, Q_RNEXT, Q_RPREV):
        _shift(Q[:, q], reqs)
    # ranks of the tail: their rows
    mine = tail.R[:, R_LINE] > 0
    R = tail.R[mine]
    _shift(R[:, R_LAST], rows)
    _shift(R[:, R_CAND], reqs)
    _shift(R[:, R_CHAIN], reqs)
    _shift(R[:, R_GROUP], reqs)
    _shift(R[:, R_GROW], rows)
    head.R[mine] = R
    # v-counts and unknown actions
    vn = int(Ct[C_VPOOL])
    if pool + vn > head.VP.shape[0]:
        grown = np.empty(pool + vn, np.int64)
        grown[:pool] = head.VP[:pool]
        head.VP = grown
    head.VP[pool : pool + vn] = tail.VP[:vn]
    u, un = int(C[C_UNKNOWN]), int(Ct[C_UNKNOWN])
    head.U[u : u + un] = tail.U[:un]
    head.MSGU += tail.MSGU
    for counter in (
        C_OPS, C_REQS, C_KEYS, C_FAILED_TESTS, C_TEST_NONE, C_VPOOL, C_UNKNOWN,
        C_WAITANY_NONE, C_ANY_MEMBERS,
    ):  # fmt: skip
        C[counter] += Ct[counter]
