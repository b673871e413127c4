"""Reader of SimGrid time-independent (TI) traces (compiled parser).

Three dialects are read:

* current SMPI (``0 isend 1 0 1e6 [dt]``, ``wait src dst tag``, ``waitall [n]``);
* SMPI 2014, identical but with camelCase collective names (``allReduce``);
* MSG actions of 2010 (``p0 send p1 5760``: sizes in bytes, no tags, ``recv``
  sizes taken from the matching send, ``wait`` completing the last ``Irecv``).

Sizes are converted to bytes at parse time with SimGrid's datatype table
(``src/smpi/mpi/smpi_datatype.cpp``); the default datatype is MPI_DOUBLE when
``init`` has an argument, MPI_BYTE otherwise. ``compute F`` becomes F / flop_rate
seconds and ``sleep S`` S seconds of the rank's time. Per-rank files may be
gzip-compressed.

SMPI records ``waitall <n>`` for a wait on *some* of the pending requests while
SimGrid's replayer completes all of them. We resolve it the way the recording
happened: a ``waitall`` tentatively owns every request pending at that point; a
later ``wait`` naming one of them (before its key is posted again) takes it back,
because the waitall did not cover it. ``test`` is resolved the same way: a test
whose request is later waited for failed (it is dropped), otherwise it completed
the request. Receives recorded with source -333 (any-source) become ``ANY_SOURCE``,
and tag -444 (SMPI's MPI_ANY_TAG, in receives and wait keys) ``ANY_TAG``.

Every value is checked against :mod:`.limits` as it is read (ranks, peers, roots,
counts, tags, bytes, compute seconds); any problem is a :class:`TraceFormatError`
naming file, rank and line. The text is parsed by compiled code over the raw bytes
(:mod:`.ti.kernel`), about 3-5 million lines per second; the files of a trace are
read, decompressed and scanned in two halves on two threads, and a trace of 2 MiB of text
or more is parsed that way too (:mod:`.ti.split`), with the serial parse's result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpiuq.simulator.runtime.watch import run_pair
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import ANY_SOURCE, Trace
from mpiuq.simulator.trace.limits import MAX_LINES
from mpiuq.simulator.trace.ti.assemble import assemble
from mpiuq.simulator.trace.ti.files import find_ti_files, read_text_bytes
from mpiuq.simulator.trace.ti.kernel import scan_ranks
from mpiuq.simulator.trace.ti.lex import ACTIONS, action_table
from mpiuq.simulator.trace.ti.messages import line_error
from mpiuq.simulator.trace.ti.parse import ParserState, run_parser
from mpiuq.simulator.trace.ti.split import SPLIT_MIN_BYTES, run_parser_split
from mpiuq.simulator.trace.ti.state import (
    C_ANY_MEMBERS,
    C_CALLS,
    C_FAILED_TESTS,
    C_MSG_RECVS,
    C_MSG_SENDS,
    C_OPS,
    C_REQS,
    C_TEST_NONE,
    C_UNKNOWN,
    C_WAITANY_NONE,
    O_KIND,
    O_PEER,
    O_RECV,
    Q_STATE,
    R_FILE,
    R_FINAL,
    R_INIT,
    R_LINE,
    S_NONE,
)

__all__ = ["SMPI_DATATYPE_BYTES", "find_ti_files", "read_ti"]

#: Size in bytes of SimGrid's datatype ids 0..54 (x86-64 sizes of the C types it
#: declares, ``src/smpi/mpi/smpi_datatype.cpp``; 0 = MPI_DOUBLE, 1 = MPI_INT, 6 = MPI_BYTE).
SMPI_DATATYPE_BYTES: dict[int, int] = dict(enumerate((
    8, 4, 1, 2, 8, 4, 1, 8, 1, 1, 2, 4, 8, 8, 16, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 8, 16, 32,
    8, 8, 8, 16, 16, 8, 8, 8, 16, 16, 4, 4, 4, 8, 0, 0, 0, 4, 2, 4, 8, 16, 32, 0, 0, 1, 8,
)))  # fmt: skip
_DT_SIZES = np.array([SMPI_DATATYPE_BYTES[k] for k in range(len(SMPI_DATATYPE_BYTES))], np.int64)
_NAMES, _SLOTS = action_table()

#: MPI function name of each action that produces operations (call names of the trace).
_MPI_NAME = {
    "send": "MPI_Send",
    "isend": "MPI_Isend",
    "recv": "MPI_Recv",
    "irecv": "MPI_Irecv",
    "wait": "MPI_Wait",
    "test": "MPI_Test",
    "waitall": "MPI_Waitall",
    "waitany": "MPI_Waitany",
    "sendrecv": "MPI_Sendrecv",
    "barrier": "MPI_Barrier",
    "bcast": "MPI_Bcast",
    "reduce": "MPI_Reduce",
    "allreduce": "MPI_Allreduce",
    "alltoall": "MPI_Alltoall",
    "alltoallv": "MPI_Alltoallv",
    "gather": "MPI_Gather",
    "gatherv": "MPI_Gatherv",
    "allgather": "MPI_Allgather",
    "allgatherv": "MPI_Allgatherv",
    "scatter": "MPI_Scatter",
    "scatterv": "MPI_Scatterv",
    "reducescatter": "MPI_Reduce_scatter",
    "scan": "MPI_Scan",
    "exscan": "MPI_Exscan",
    "compute": "compute",
    "sleep": "sleep",
}


def read_ti(
    path: str | Path,
    *,
    flop_rate: float = 1e9,
    located: tuple[list[Path], list[str]] | None = None,
    threads: int = 2,
) -> Trace:
    """Read a SimGrid time-independent trace.

    Parameters
    ----------
    path : str or Path
        Index file, single all-ranks file, or directory (see :func:`find_ti_files`).
    flop_rate : float
        Host speed in flop/s used to turn ``compute`` flops into seconds (default
        1 Gflop/s, the speed the shared TI traces were recorded at).
    located : tuple, optional
        ``find_ti_files(path)`` when the caller has it already (an index of many rank
        files is then resolved once).
    threads : int
        2 (default): the files are read and scanned in two halves on two threads, and a
        trace of :data:`~.ti.split.SPLIT_MIN_BYTES` or more is parsed that way too;
        1: everything on the calling thread. The trace is the same.

    Returns
    -------
    Trace
        With ``format="ti"``; every collective is on MPI_COMM_WORLD.

    Raises
    ------
    TraceFormatError
        On a malformed or truncated line or an out-of-range value, naming file, rank
        and line number.
    UnsupportedTraceError
        If the path holds no TI trace.
    """
    if not (flop_rate > 0.0 and np.isfinite(flop_rate)):
        raise ValueError(f"flop_rate={flop_rate!r} is invalid: expected a finite rate > 0 flop/s")
    if isinstance(threads, bool) or threads not in (1, 2):
        raise ValueError(f"threads={threads!r} is invalid: expected 1 or 2")
    files, notes = find_ti_files(path) if located is None else located
    texts, lines, top, msg = _read_and_scan(files, flop_rate, threads)
    n_ranks = top + 1
    tables = (_NAMES, _SLOTS, _DT_SIZES)
    st = None
    if threads == 2 and sum(len(t) for t in texts) >= SPLIT_MIN_BYTES:
        # on two cores, into the serial parse's state (None: it must run serially)
        st = run_parser_split(texts, lines, n_ranks, msg, float(flop_rate), tables)
    if st is None:
        st = run_parser(texts, n_ranks, msg, float(flop_rate), tables, sum(lines))
    C = st.C
    if st.E[0]:
        f = int(st.E[4])
        raise line_error(st.E, st.DF, files[f], np.frombuffer(texts[f], np.uint8), flop_rate)
    _check_finalized(st.R, files)
    if msg:
        _match_msg_sizes(st.ops[O_RECV], st.MS[: C[C_MSG_SENDS]], st.MR[: C[C_MSG_RECVS]], n_ranks)
    notes += _parse_notes(st, flop_rate, msg)
    trace = _build_trace(st, str(path), n_ranks, notes, texts)
    trace.validate()
    return trace


def _parse_notes(st: ParserState, flop_rate: float, msg: bool) -> list[str]:
    """What the trace's notes say about the parse (read before :func:`assemble`, which
    reorders the rows)."""
    C, Q = st.C, st.Q
    notes = [f"compute flops converted at {flop_rate:g} flop/s"]
    notes.append(
        "MSG 2010 dialect: sizes in bytes, tag 0, recv sizes from matching sends"
        if msg
        else "SMPI dialect (action names lower-cased)"
    )
    if C[C_FAILED_TESTS]:
        notes.append(
            f"{C[C_FAILED_TESTS]} test(s) followed by a wait on the same request were "
            "failed tests (progress calls) and dropped"
        )
    uncompleted = int(np.count_nonzero(Q[: C[C_REQS], Q_STATE] == S_NONE))
    if uncompleted:
        notes.append(f"{uncompleted} request(s) are never completed in the trace")
    n = C[C_OPS]
    any_src = int(np.count_nonzero((st.ops[O_KIND][:n] == 4) & (st.ops[O_PEER][:n] == ANY_SOURCE)))
    if any_src:
        notes.append(f"{any_src} receive(s) recorded with source -333 read as ANY_SOURCE")
    if C[C_ANY_MEMBERS]:
        notes.append(
            f"{C[C_ANY_MEMBERS]} request(s) completed by waitAny, which does not say which "
            "request it took: each waitAny takes the first to complete among its rank's "
            "pending requests not taken yet"
        )
    if C[C_WAITANY_NONE]:
        notes.append(
            f"{C[C_WAITANY_NONE]} waitAny with no pending request (MPI_UNDEFINED) take no time"
        )
    return notes


def _build_trace(
    st: ParserState, source: str, n_ranks: int, notes: list[str], texts: list[bytes]
) -> Trace:
    """The parser's rows as a :class:`Trace` (every collective on MPI_COMM_WORLD)."""
    C = st.C
    cols, rank_ptr, wait_reqs, vcounts = assemble(st.ops, C, n_ranks, st.Q, st.VP)
    kind, call, peer, peer2, tag, bs, br, req, count, vco, sec = cols
    m = kind.shape[0]
    return Trace(
        format="ti",
        source=source,
        n_ranks=n_ranks,
        rank_ptr=rank_ptr,
        kind=kind,
        call=call,
        peer=peer,
        peer2=peer2,
        tag=tag,
        tag2=np.zeros(m, np.int32),
        comm=np.zeros(m, np.int32),
        bytes_send=bs,
        bytes_recv=br,
        request=req,
        count=count,
        vcounts_offset=vco,
        seconds=sec,
        nonblocking=np.zeros(m, np.bool_),
        wait_reqs=wait_reqs,
        vcounts=vcounts,
        comm_ptr=np.array([0, n_ranks], np.int64),
        comm_members=np.arange(n_ranks, dtype=np.int32),
        call_names=tuple(_MPI_NAME[ACTIONS[int(c)]] for c in st.ORDER[: C[C_CALLS]]),
        n_requests=int(C[C_REQS]),
        unsupported=_unsupported(C, st.MSGU, st.U, texts),
        notes=tuple(dict.fromkeys(notes)),
    )


def _read_and_scan(
    files: list[Path], rate: float, threads: int
) -> tuple[list[bytes], list[int], int, bool]:
    """Each file's text (decompressed) and action lines, the largest rank and the
    dialect; the two halves of the files on two threads (decompression and the scan
    release the GIL; errors are raised in file order)."""
    if len(files) < 2 or threads < 2:
        texts, lines, top, msg = _read_group(files, 0, rate)
    else:
        k = len(files) // 2
        head, tail = run_pair(
            lambda: _read_group(files[:k], 0, rate), lambda: _read_group(files[k:], k, rate)
        )
        texts, lines = head[0] + tail[0], head[1] + tail[1]
        top, msg = max(head[2], tail[2]), head[3] or tail[3]
    n_lines = sum(lines)
    if top < 0:
        raise TraceFormatError(
            "no action line found: expected lines '<rank> <action> [args]'", file=str(files[0])
        )
    if n_lines > MAX_LINES:
        raise TraceFormatError(
            f"{n_lines} action lines, more than the {MAX_LINES} one trace may hold",
            file=str(files[0]),
        )
    return texts, lines, top, msg


def _read_group(
    files: list[Path], first: int, rate: float
) -> tuple[list[bytes], list[int], int, bool]:
    """Texts, action lines, largest rank and dialect of ``files`` (files ``first``, ...)."""
    E = np.zeros(10, np.int64)
    texts: list[bytes] = []
    per_file: list[int] = []
    top, msg = -1, False
    for i, path in enumerate(files):
        text = read_text_bytes(path)
        buf = np.frombuffer(text, np.uint8)
        lines, t, m = scan_ranks(buf, first + i, E)
        if E[0]:
            raise line_error(E, np.zeros(2), path, buf, rate)
        texts.append(text)
        per_file.append(int(lines))
        top = max(top, int(t))
        msg = msg or bool(m)
    return texts, per_file, top, msg


def _check_finalized(R: np.ndarray, files: list[Path]) -> None:
    """A rank that called init but never finalize was cut short (truncated file)."""
    open_ranks = np.flatnonzero((R[:, R_INIT] != 0) & (R[:, R_FINAL] == 0))
    if open_ranks.size:
        r = int(open_ranks[0])
        line = int(R[r, R_LINE])
        raise TraceFormatError(
            f"truncated: no finalize after the last action (line {line})",
            file=str(files[int(R[r, R_FILE])]),
            rank=r,
            record=line,
        )


def _match_msg_sizes(bytes_recv: np.ndarray, MS: np.ndarray, MR: np.ndarray, n: int) -> None:
    """MSG dialect: each receive gets the size of the matching send (FIFO per rank pair)."""
    if not MR.shape[0]:
        return
    skey = MS[:, 0] * n + MS[:, 1]
    rkey = MR[:, 0] * n + MR[:, 1]
    rkeys, first, rcount = np.unique(rkey, return_index=True, return_counts=True)
    skeys, scount = np.unique(skey, return_counts=True)
    sends = np.zeros_like(rcount)
    if len(skeys):
        at = np.clip(np.searchsorted(skeys, rkeys), 0, len(skeys) - 1)
        sends = np.where(skeys[at] == rkeys, scount[at], 0)
    bad = np.flatnonzero(sends != rcount)
    if bad.size:
        k = int(bad[np.argmin(first[bad])])
        src, dst = int(MR[first[k], 0]), int(MR[first[k], 1])
        raise TraceFormatError(
            f"MSG dialect: {int(rcount[k])} receives from rank {src} to rank {dst} "
            f"but {int(sends[k])} sends: receive sizes cannot be matched",
            rank=dst,
        )
    used = np.isin(skey, rkeys)
    order_s = np.argsort(skey[used], kind="stable")
    order_r = np.argsort(rkey, kind="stable")
    bytes_recv[MR[order_r, 2]] = MS[used][order_s, 2]


def _unsupported(
    C: np.ndarray, MSGU: np.ndarray, U: np.ndarray, texts: list[bytes]
) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f, s, e in U[: C[C_UNKNOWN]]:
        name = texts[f][s:e].decode("ascii").lower()
        key = f"TI action {name}"
        counts[key] = counts.get(key, 0) + 1
    for code in np.flatnonzero(MSGU):
        counts[f"TI action {ACTIONS[int(code)]} (MSG dialect)"] = int(MSGU[code])
    if C[C_TEST_NONE]:
        counts["MPI_Test (no pending request)"] = int(C[C_TEST_NONE])
    return dict(sorted(counts.items()))
