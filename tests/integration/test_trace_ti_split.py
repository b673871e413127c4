"""The TI parse on two threads (:mod:`mpiuq.simulator.trace.ti.split`): the same trace
as the serial parse, field for field, on hand-written traces that exercise every index
the join shifts, on every shared TI trace, and the serial fallback and error order."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import SHARED_TI_TRACES, TRACES, needs_traces
from trace_checks import assert_same_trace

from mpiuq.simulator.trace import TraceFormatError, read_ti
from mpiuq.simulator.trace.ir import Trace
from mpiuq.simulator.trace.ti import reader as ti_module
from mpiuq.simulator.trace.ti import split as ti_split


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, split: bool) -> tuple[Trace, int]:
    """The trace read on two threads (the parse split whatever the size) or on one; and
    how many times the split parse joined two halves."""
    joins = [0]
    real_append = ti_split._append

    def counting(*args: object) -> None:
        joins[0] += 1
        real_append(*args)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(ti_module, "SPLIT_MIN_BYTES", 0)
        m.setattr(ti_split, "_append", counting)
        trace = read_ti(path, threads=2 if split else 1)
    return trace, joins[0]


def _index(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp / name).write_text(text)
    index = tmp / "index.txt"
    index.write_text("".join(f"{name}\n" for name in files))
    return index


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


#: Four ranks, one file each: the second half (ranks 2, 3) uses its calls in another
#: order than the first (so its call names are interned after), posts requests that a
#: waitall tentatively owns and a later wait takes back, has a failed test (dropped),
#: v-collectives (counts in the pool), an unknown action and an any-source receive.
FOUR_RANKS = {
    "r0.txt": _lines(
        "0 init",
        "0 isend 1 5 100",
        "0 irecv 1 6 100",
        "0 waitall 2",
        "0 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "0 compute 1e6",
        "0 finalize",
    ),
    "r1.txt": _lines(
        "1 init",
        "1 irecv 0 5 100",
        "1 isend 0 6 100",
        "1 waitall 2",
        "1 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "1 finalize",
    ),
    "r2.txt": _lines(
        "2 init",
        "2 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "2 sleep 0.5",
        "2 irecv 3 1 8",
        "2 test 3 2 1",
        "2 wait 3 2 1",  # the test before it failed: dropped
        "2 irecv -333 2 8",
        "2 isend 3 3 8",
        "2 waitall 2",
        "2 wait -333 2 2",  # not covered by the waitall after all
        "2 frobnicate 1 2",  # unknown action: counted
        "2 finalize",
    ),
    "r3.txt": _lines(
        "3 init",
        "3 send 2 1 8",
        "3 send 2 2 8",
        "3 recv 2 3 8",
        "3 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "3 frobnicate",
        "3 finalize",
    ),
}


def test_split_point_balances_bytes() -> None:
    assert ti_split.split_point([5, 5]) == 1
    assert ti_split.split_point([1, 1, 1, 1]) == 2
    assert ti_split.split_point([10, 1, 1]) == 1
    assert ti_split.split_point([1, 1, 10]) == 2
    assert ti_split.split_point([1, 2, 3, 4, 5, 6]) == 4  # 10 of 21 bytes first


def test_split_parse_gives_the_serial_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(tmp_path, FOUR_RANKS)
    serial, serial_joins = _read(index, monkeypatch, split=False)
    split, joins = _read(index, monkeypatch, split=True)
    assert serial_joins == 0 and joins == 1
    assert_same_trace(serial, split)
    # the cases the hand-written trace is for, as the serial parse reads them
    assert serial.unsupported == {"TI action frobnicate": 2}
    assert any("failed test" in note for note in serial.notes)
    assert serial.call_names.index("MPI_Alltoallv") < serial.call_names.index("sleep")
    assert int(serial.n_requests) == 7  # the isends and irecvs (blocking calls post none)


#: Wait-any groups in both halves: their rows' group references (a request id and a row)
#: shift with the join; a waitall and a wait end groups of the second half.
WAITANY_RANKS = {
    "r0.txt": _lines(
        "0 init", "0 irecv 1 0 8", "0 irecv 1 1 8", "0 waitAny 2", "0 waitAny 2",
        "0 isend 1 2 8", "0 waitAny 1", "0 finalize",
    ),
    "r1.txt": _lines(
        "1 init", "1 send 0 0 8", "1 send 0 1 8", "1 recv 0 2 8", "1 finalize",
    ),
    "r2.txt": _lines(
        "2 init", "2 irecv 3 0 8", "2 irecv 3 1 8", "2 waitAny 2", "2 irecv 3 2 8",
        "2 waitall", "2 irecv 3 3 8", "2 irecv 3 4 8", "2 waitAny 2", "2 wait 3 2 4",
        "2 finalize",
    ),
    "r3.txt": _lines(
        "3 init", "3 send 2 0 8", "3 send 2 1 8", "3 send 2 2 8", "3 send 2 3 8",
        "3 send 2 4 8", "3 finalize",
    ),
}  # fmt: skip


def test_split_parse_keeps_waitany_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index(tmp_path, WAITANY_RANKS)
    serial, _ = _read(index, monkeypatch, split=False)
    split, joins = _read(index, monkeypatch, split=True)
    assert joins == 1
    assert_same_trace(serial, split)
    assert serial.n_requests == 8 and sorted(serial.wait_reqs.tolist()) == list(range(8))


def test_a_rank_in_both_halves_is_parsed_serially(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rank 1's lines are in both files: the second half would not know its requests
    index = _index(
        tmp_path,
        {
            "a.txt": _lines("0 init", "1 init", "1 irecv 0 5 8", "0 send 1 5 8", "0 finalize"),
            "b.txt": _lines("1 wait 0 1 5", "1 finalize"),
        },
    )
    serial, _ = _read(index, monkeypatch, split=False)
    split, joins = _read(index, monkeypatch, split=True)
    assert joins == 0  # the halves were not joined: parsed again, serially
    assert_same_trace(serial, split)


#: Broken files, the error expected, and the file and line it names, on one thread as
#: on two: a parse error in the second half; one in each half (the first file's is
#: raised); a scan error (bad rank token) in the second half.
BROKEN = {
    "second half": (
        {"r3.txt": _lines("3 init", "3 send 2 1 abc", "3 finalize")},
        "expected a number",
        "r3.txt",
    ),
    "both halves": (
        {
            "r1.txt": _lines("1 init", "1 wait 0 1 5", "1 finalize"),
            "r3.txt": _lines("3 init", "3 send 2 1 abc", "3 finalize"),
        },
        "no isend/irecv posted",
        "r1.txt",
    ),
    "scan, second half": (
        {"r2.txt": _lines("2 init", "two compute 5", "2 finalize")},
        "expected '<rank> <action>",
        "r2.txt",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("split", [False, True])
def test_errors_are_the_serial_parse_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, split: bool
) -> None:
    broken, match, named = BROKEN[case]
    index = _index(tmp_path, {**FOUR_RANKS, **broken})
    with pytest.raises(TraceFormatError, match=match) as info:
        _read(index, monkeypatch, split=split)
    assert info.value.file == str(tmp_path / named) and info.value.record == 2


#: The shared TI trace folders (each read as a folder: its index, or its rank files).
_MULTI_FILE_TI_TRACES = sorted([*SHARED_TI_TRACES, "ti_simgrid_replay_examples"])


@needs_traces
@pytest.mark.parametrize("name", _MULTI_FILE_TI_TRACES)
def test_every_shared_ti_trace_split_equals_serial(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = TRACES / name
    serial, _ = _read(index, monkeypatch, split=False)
    split, _ = _read(index, monkeypatch, split=True)
    assert_same_trace(serial, split)


@pytest.mark.parametrize("threads", [3, 0, -1, True, 2.5, "2", None])
def test_threads_must_be_one_or_two(tmp_path: Path, threads: object) -> None:
    index = _index(tmp_path, FOUR_RANKS)
    with pytest.raises(ValueError, match=r"threads=.* is invalid: expected 1 or 2"):
        read_ti(index, threads=threads)  # type: ignore[arg-type]
