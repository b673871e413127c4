"""DUMPI reader on damaged input: crashes of the C reader are contained in a child
process and reported with file, rank and record; magnitudes are bounded (issue 14)."""

from __future__ import annotations

import shutil
import struct
import time
import tracemalloc
from pathlib import Path

import pytest
from shared_data import TRACES

from mpiuq.simulator.trace import TraceFormatError, read_dumpi
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.child import run_contained
from mpiuq.simulator.trace.dumpi.comms import CommState
from mpiuq.simulator.trace.dumpi.lower import Lowering, lower_rank
from mpiuq.simulator.trace.dumpi.raw import RawCall, RawRank

DATA = TRACES
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/traces is absent")


def _copy(tmp: Path) -> Path:
    dst = tmp / "tt"
    shutil.copytree(DATA / "dumpi_sstdumpi_testtrace_4r", dst)
    for f in dst.iterdir():
        f.chmod(0o644)
    return dst


@needs_data
def test_crash_in_record_stream_is_contained(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    d = _copy(tmp_path)
    f = d / "testtrace-0001.bin"
    data = bytearray(f.read_bytes())
    data[16:18] = b"\xff\xff"  # first function label beyond DUMPI_END_OF_STREAM
    f.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match=r"died \(SIGABRT\) while decoding record 0") as info:
        read_dumpi(d)
    err = info.value
    assert err.file == str(f) and err.rank == 1 and err.record == 0
    assert "dumpi_read_next_function: Assertion" in str(err)
    assert "Assertion" not in capfd.readouterr().err  # the library's message is in the error only


@needs_data
def test_crash_while_opening_is_contained(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    f = d / "testtrace-0002.bin"
    data = bytearray(f.read_bytes())
    sizes_at = struct.unpack(">7q", data[-56:])[0]  # index entry 0: the datatype size table
    data[sizes_at : sizes_at + 4] = b"\xff\xff\xff\xff"  # a negative number of datatypes
    f.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="while opening the file") as info:
        read_dumpi(d)
    assert info.value.file == str(f) and info.value.rank == 2
    assert "dumpi_read_datatype_sizes" in str(info.value)


@needs_data
def test_huge_numprocs_is_refused_without_building_paths(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    meta = d / "testtrace.meta"
    meta.write_text("numprocs=2147483647\nfileprefix=testtrace\n")
    tracemalloc.start()
    with pytest.raises(TraceFormatError, match=r"numprocs=2147483647 outside 1\.\.4194304"):
        read_dumpi(d)
    meta.write_text("numprocs=4194304\nfileprefix=testtrace\n")
    with pytest.raises(
        TraceFormatError, match=r"rank file testtrace-0004\.bin .* missing \(4 rank files found\)"
    ):
        read_dumpi(d)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20e6  # 4 million paths would take several hundred MB


def test_child_time_limit_and_defects(tmp_path: Path) -> None:
    f = tmp_path / "x.bin"
    f.write_bytes(b"x")

    def slow(progress: object) -> None:
        time.sleep(30)

    with pytest.raises(TraceFormatError, match=r"did not finish within 1 s and was stopped"):
        run_contained(slow, [f], [0], timeout_s=1.0)

    def buggy(progress: object) -> None:
        raise KeyError("oops")

    with pytest.raises(RuntimeError, match=r"DUMPI reader \(libundumpi\) failed: KeyError: 'oops'"):
        run_contained(buggy, [f], [0])

    def format_error(progress: object) -> None:
        raise TraceFormatError("bad record", file="f.bin", rank=3, record=7)

    with pytest.raises(TraceFormatError, match="bad record") as info:
        run_contained(format_error, [f], [0])
    assert (info.value.file, info.value.rank, info.value.record) == ("f.bin", 3, 7)


def _lower(calls: list[RawCall], sizes: tuple[int, ...] = (4,)) -> None:
    raw = RawRank("r0.bin", calls, sizes, {}, len(calls))
    b = TraceBuilder("dumpi", "t", 2)
    st = CommState(0, {2: 0, 3: b.add_comm([0], key=("self", 0))})
    lower_rank(Lowering(b, raw, st, 0, use_cpu=False))


def _call(name: str, index: int, t: float, *args: object) -> RawCall:
    return RawCall(name, index, t, t + 1e-6, t, t + 1e-6, tuple(args))


@pytest.mark.parametrize(
    ("calls", "sizes", "match"),
    [
        (
            [_call("send", 0, 1.0, 1, 0, 1, -5, 2)],
            (4,),
            r"MPI_Send: tag -5 outside 0\.\.2147483647",
        ),
        ([_call("recv", 0, 1.0, 1, 0, 1, -7, 2)], (4,), r"tag -7 outside -1\.\.2147483647"),
        (
            [_call("send", 0, 1.0, 2**31 - 1, 0, 1, 0, 2)],
            (2**20,),
            r"message of 2251799812636672 bytes",
        ),
        ([_call("send", 0, 1.0, 1, 0, 1, 0, 2)], (-8,), r"message of -8 bytes"),
        (
            [_call("barrier", 0, 1.0, 2), _call("barrier", 1, 3e6, 2)],
            (4,),
            r"MPI_Barrier starts 3e\+06 s \(wall clock\) after the previous call; more than the 1e\+06 s",
        ),
    ],
)
def test_out_of_range_values_name_rank_and_record(
    calls: list[RawCall], sizes: tuple[int, ...], match: str
) -> None:
    with pytest.raises(TraceFormatError, match=match) as info:
        _lower(calls, sizes)
    assert info.value.file == "r0.bin" and info.value.rank == 0
    assert info.value.record == calls[-1].index
