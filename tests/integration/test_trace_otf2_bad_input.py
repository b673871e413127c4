"""OTF2 reader on damaged archives: timestamps bounded by the trace's own clock
properties, damaged records and definitions give a TraceFormatError, and nothing
the C library or its bindings print reaches the terminal (issue 14)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from shared_data import TRACES

from mpiuq.simulator.trace import TraceFormatError, read_otf2

DATA = TRACES
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/traces is absent")


def _copy(tmp: Path, name: str = "otf2_pipit_pingpong_2r") -> Path:
    dst = tmp / "t"
    shutil.copytree(DATA / name, dst)
    for f in dst.rglob("*"):
        os.chmod(f, 0o755 if f.is_dir() else 0o644)
    return dst


def _flip(path: Path, pos: int, mask: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos] ^= mask
    path.write_bytes(bytes(data))


def test_flipped_timestamp_is_outside_the_clock_range(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    d = _copy(tmp_path)
    _flip(d / "traces" / "0.evt", 21, 0x40)  # a bit of the first event's timestamp
    with pytest.raises(TraceFormatError, match=r"outside the trace's clock range") as info:
        read_otf2(d)
    err = info.value
    assert err.file == str(d / "traces.otf2") and err.rank == 0 and err.record == 0
    assert "ClockProperties" in str(err)
    assert capfd.readouterr().err == ""


def test_damaged_records_and_definitions_are_typed_errors(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    d = _copy(tmp_path)
    _flip(d / "traces" / "0.evt", 0, 0x40)
    with pytest.raises(TraceFormatError, match="cannot read OTF2 archive"):
        read_otf2(d)
    d2 = _copy(tmp_path / "b")
    defs = d2 / "traces.def"
    defs.write_bytes(defs.read_bytes()[: defs.stat().st_size // 2])
    with pytest.raises(TraceFormatError, match="cannot read OTF2 archive"):
        read_otf2(d2)
    assert "Traceback" not in capfd.readouterr().err


def test_compute_burst_bound_is_in_seconds_of_the_trace_clock(tmp_path: Path) -> None:
    from mpiuq.simulator.trace.limits import MAX_ACTION_SECONDS

    trace = read_otf2(DATA / "otf2_tracer_stencil4d_32r")
    assert float(trace.seconds.max()) < MAX_ACTION_SECONDS
