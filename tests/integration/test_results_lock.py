"""One run at a time per results folder: the exclusive lock of ``hold_results_folder``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpiuq.calibration.errors import ResultsError
from mpiuq.calibration.reporting.artefacts import LOCK_FILE, hold_results_folder


def test_a_second_holder_is_refused_naming_folder_and_process(tmp_path: Path) -> None:
    out = tmp_path / "results"
    with hold_results_folder(out):
        assert (out / LOCK_FILE).read_text().strip() == str(os.getpid())
        busy = rf"results/ is being written .* {os.getpid()}"
        with pytest.raises(ResultsError, match=busy), hold_results_folder(out):
            pass  # pragma: no cover - never entered
    with hold_results_folder(out):  # released when the block ended
        pass


def test_the_lock_goes_with_a_killed_process(tmp_path: Path) -> None:
    out = tmp_path / "results"
    holder = (
        "import os, sys\n"
        "from mpiuq.calibration.reporting.artefacts import hold_results_folder\n"
        f"with hold_results_folder({str(out)!r}):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", holder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(ResultsError, match=f"process {proc.pid}"), hold_results_folder(out):
            pass  # pragma: no cover - never entered
    finally:
        proc.kill()
        proc.wait()
    with hold_results_folder(out):  # the dead holder's lock is gone
        pass
