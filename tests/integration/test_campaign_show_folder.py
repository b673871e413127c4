"""``campaign show`` and ``campaign report`` on a results folder being written ("running
now (pid N)") and on the repository's own committed results, as the last commit holds them
(no warning a fresh run would not give: the large working files the repository does not
keep are not missing)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from shared_data import COMMITTED_CAMPAIGNS

from mpiuq.calibration.reporting.artefacts import (
    LOCK_FILE,
    WORKING_FILES,
    hold_results_folder,
    run_holder,
)
from mpiuq.main import main


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def test_show_and_report_of_a_folder_being_written_say_running_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    assert run_holder(out) is None  # no folder, no lock
    with hold_results_folder(out):
        assert run_holder(out) == os.getpid()
        for argv in (["campaign", "show", str(out)], ["campaign", "report", str(out)]):
            assert main(argv) == 2
            line = _one_line(capsys)
            assert f"its campaign is running now (pid {os.getpid()})" in line
            assert "summary.json appears when the run finishes" in line
    assert (out / LOCK_FILE).is_file() and run_holder(out) is None  # a finished run's lock
    assert main(["campaign", "show", str(out)]) == 2
    assert "interrupted, failed or never run" in _one_line(capsys)


def test_show_during_a_run_that_has_not_set_the_old_results_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], committed_results: Path
) -> None:
    out = tmp_path / "results"
    out.mkdir()
    source = committed_results / "stampede-ib"
    for f in source.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    with hold_results_folder(out):
        assert main(["campaign", "show", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"a campaign run is writing {out} now (pid {os.getpid()})" in err


@pytest.mark.parametrize("name", COMMITTED_CAMPAIGNS)
def test_committed_results_warn_of_no_file_a_fresh_run_keeps(
    name: str, committed_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The large working files the repository does not keep are no warning; a file the run
    wrote that is missing or changed would be."""
    folder = committed_results / name
    assert main(["campaign", "show", str(folder)]) == 0
    out = capsys.readouterr()
    warnings = [line for line in out.err.splitlines() if "check " not in line]
    assert not [w for w in warnings if "is missing" in w or "has changed" in w], warnings
    listed = json.loads((folder / "summary.json").read_text()).get("run", {}).get("files", {})
    absent = [n for n in listed if n in WORKING_FILES and not (folder / n).exists()]
    assert ("not in this folder: " + ", ".join(absent) in out.out) == bool(absent)


def test_a_working_file_that_changed_is_still_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], committed_results: Path
) -> None:
    out = tmp_path / "stampede-ib"
    out.mkdir()
    for f in (committed_results / "stampede-ib").iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    (out / "surrogate.h5").write_bytes(b"not the run's surrogate")
    (out / "pairs.png").unlink()
    assert main(["campaign", "show", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"WARNING: {out / 'surrogate.h5'} has changed since the run wrote it" in captured.err
    assert f"WARNING: {out / 'pairs.png'} is missing (the run wrote it)" in captured.err
    assert "not in this folder: surrogate_local.h5, posterior.nc" in captured.out
