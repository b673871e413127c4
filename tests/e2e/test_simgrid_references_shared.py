"""Replays of the shared TI traces, and of a trace SimGrid records now, agree with
SimGrid's simulated times (helpers in ``tests/integration/test_simgrid_references.py``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from shared_data import TRACES as DATA
from test_simgrid_references import LIMITS, REFS, SHARED, references, replay_time


@pytest.mark.parametrize("platform", list(LIMITS))
@pytest.mark.parametrize("name", SHARED)
def test_shared_traces_agree_with_simgrid(
    name: str, platform: str, capsys: pytest.CaptureFixture[str]
) -> None:
    index = DATA / name / f"{name.removeprefix('ti_')}.txt"
    if not index.is_file():
        pytest.skip(f"shared trace {name} not found under {DATA}")
    ref = references().get((name, platform))
    if ref is None:
        pytest.skip(f"no SimGrid reference of {name} on {platform} recorded yet")
    got = replay_time(index, platform, capsys)
    assert abs(got / ref - 1) <= LIMITS[platform], f"{name} on {platform}: {got} vs {ref}"


def test_a_fresh_simgrid_run_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SimGrid runs the wavefront program now (16 ranks), mpiuq replays its TI trace."""
    if shutil.which("smpirun") is None or shutil.which("smpicc") is None:
        pytest.skip("SimGrid's smpirun/smpicc not installed")
    exe = tmp_path / "wavefront"
    subprocess.run(
        ["smpicc", "-O2", str(REFS / "programs" / "wavefront.c"), "-o", str(exe)],
        check=True, capture_output=True,
    )  # fmt: skip
    platform = REFS / "platforms" / "cluster_backbone.xml"
    out = subprocess.run(
        ["smpirun", "-np", "16", "-platform", str(platform), "-hostfile",
         str(REFS / "platforms" / "hostfile"), "--cfg=smpi/display-timing:yes",
         "--cfg=smpi/simulate-computation:no", "-trace-ti", "--cfg=tracing/filename:w.txt",
         str(exe), "4", "4096", "70000", "3", "1e5"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    ref = float(re.search(r"Simulated time: (\S+) seconds", out.stdout + out.stderr).group(1))  # type: ignore[union-attr]
    got = replay_time(tmp_path / "w.txt", "backbone", capsys)
    assert abs(got / ref - 1) <= LIMITS["backbone"]
