"""Processes killed (SIGKILL) at every phase of creating and writing a design store, at random
moments, and in the middle of a campaign resume to bit-identical results."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpiuq.main import main
from mpiuq.surrogate import design_status, load_design_outputs, run_design
from mpiuq.surrogate.design.design_store import CONSOLIDATE_PHASES, CREATE_PHASES, JOURNAL_PHASES
from mpiuq.surrogate.store.store_journal import journal_path

#: The folder of test_design_store (whose design and model the children run).
TESTS = Path(__file__).resolve().parents[1] / "integration"
ROOT = Path(__file__).resolve().parents[2]
STAMPEDE_CSV = ROOT / "experiments" / "data" / "simgrid_stampede_ib_mvapich2" / "data.csv"

#: Child: run the design of test_design_store, SIGKILL itself the n-th time a phase is reached.
KILL_AT_PHASE = textwrap.dedent(
    f"""
    import os, signal, sys
    sys.path.insert(0, {str(TESTS)!r})
    import test_design_store as t
    from mpiuq.surrogate import run_design
    from mpiuq.surrogate.design import design_store
    phase, nth, store = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    seen = [0]
    def hook(reached):
        if reached == phase:
            seen[0] += 1
            if seen[0] == nth:
                os.kill(os.getpid(), signal.SIGKILL)
    design_store.phase_hook = hook
    for _ in run_design(t.model, t.DESIGN, store, chunk_size=8, model_id="m"):
        pass
    sys.exit(3)  # the phase was not reached
    """
)


def kill_at(store: Path, phase: str, nth: int = 1) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT_PHASE, phase, str(nth), str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def reference() -> np.ndarray:
    sys.path.insert(0, str(TESTS))
    import test_design_store as t

    return t.REFERENCE


def finish(store: Path) -> np.ndarray:
    import test_design_store as t

    for _ in run_design(t.model, t.DESIGN, store, chunk_size=8, model_id="m"):
        pass
    return load_design_outputs(store)[1]


PHASES = [
    *[(p, 1) for p in CREATE_PHASES],
    (JOURNAL_PHASES[0], 1),
    (JOURNAL_PHASES[1], 1),
    (JOURNAL_PHASES[1], 4),
    (JOURNAL_PHASES[1], 8),  # the last record, before consolidation
    *[(p, 1) for p in CONSOLIDATE_PHASES],
]


@pytest.mark.parametrize(("phase", "nth"), PHASES)
def test_killed_at_each_phase_resumes_bit_identically(tmp_path: Path, phase: str, nth: int) -> None:
    store = tmp_path / "s.h5"
    kill_at(store, phase, nth)
    if store.exists():
        done, total = design_status(store)  # always readable
        assert total == 60 and done <= 60
    y = finish(store)
    assert np.array_equal(y.view(np.uint64), reference().view(np.uint64))
    assert not journal_path(store).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]


def test_killed_again_while_resuming(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    kill_at(store, JOURNAL_PHASES[1], 3)
    kill_at(store, JOURNAL_PHASES[0], 1)  # the resumed run dies as it reopens the journal
    kill_at(store, CONSOLIDATE_PHASES[1], 1)
    y = finish(store)
    assert np.array_equal(y.view(np.uint64), reference().view(np.uint64))


#: Child: the same design with a slow model, killed from outside at a random moment.
SLOW_RUN = textwrap.dedent(
    f"""
    import sys, time
    sys.path.insert(0, {str(TESTS)!r})
    import test_design_store as t
    from mpiuq.surrogate import run_design
    def slow(x):
        time.sleep(0.01)
        return t.model(x)
    for _ in run_design(slow, t.DESIGN, sys.argv[1], chunk_size=4, model_id="m"):
        pass
    """
)


def test_killed_at_random_moments_resumes_bit_identically(tmp_path: Path) -> None:
    rng = np.random.default_rng(20261123)
    for round_ in range(3):
        store = tmp_path / f"r{round_}.h5"
        for _ in range(2):
            proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(store)])
            time.sleep(float(rng.uniform(0.3, 2.0)))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        y = finish(store)
        assert np.array_equal(y.view(np.uint64), reference().view(np.uint64))


# --- campaigns --------------------------------------------------------------------------------

CAMPAIGN = f"""
name = "kill"
seed = 5
[simulator]
benchmark = "pingpong"
[simulator.fixed]
eager_max_bytes = 17408
small_max_bytes = 150
[parameters]
post_header_delay_us = [0.1, 3.0]
link_bw_GBps = [3.0, 8.0]
memory_bw_GBps = [2.0, 25.0]
[data]
path = "{STAMPEDE_CSV}"
benchmark = "pingpong_half_rtt"
sizes_per_protocol = 2
drop_warmup = true
[surrogate]
level = 4                        # 177 design points: two chunks of the design run
order = 3
[calibration]
walkers = 8
steps = 50
burn = 50
max_steps = 200
ensembles = 2
target_ess = 50
predictive_draws = 100
"""

#: Child: ``mpiuq campaign run`` killed in the design stage or just before its summary.
KILLED_CAMPAIGN = textwrap.dedent(
    """
    import os, signal, sys
    from mpiuq.main import main
    where = sys.argv[1]
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    if where == "design":
        from mpiuq.surrogate.design import design_store
        seen = []
        def hook(phase):
            if phase == "journal:record":
                seen.append(phase)
                if len(seen) == 2:
                    die()
        design_store.phase_hook = hook
    else:
        import mpiuq.calibration.reporting.artefacts as artefacts
        artefacts.write_summary = die
    sys.exit(main(["campaign", "run", *sys.argv[2:], "--quiet", "--no-plots"]))
    """
)


def run_killed_campaign(where: str, toml: Path, out: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_CAMPAIGN, where, str(toml), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


#: Summary keys that hold wall times, or digests of files that record them.
TIMED_KEYS = {"seconds", "seconds_per_batch", "estimated_direct_seconds", "reason", "sha256"}


def _without_wall_times(value: Any) -> Any:
    """``value`` with wall times removed: the keys of :data:`TIMED_KEYS` and the seconds a
    check message quotes (``(59728 simulator runs, 7.5 s)``); the arrays are compared
    apart, bit for bit."""
    if isinstance(value, dict):
        return {k: _without_wall_times(v) for k, v in value.items() if k not in TIMED_KEYS}
    if isinstance(value, list):
        return [_without_wall_times(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"[0-9.]+ s\b", "<t> s", value)
    return value


def comparable(folder: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    import arviz as az

    doc = json.loads((folder / "summary.json").read_text())
    doc.pop("timings_s")
    run = doc.pop("run")
    assert run["complete"] is True and set(run["files"]) == {
        "surrogate.h5",
        "surrogate_local.h5",
        "posterior.nc",
        "posterior_draws.nc",
    }
    doc["fingerprint"] = run["fingerprint"]
    doc = _without_wall_times(doc)
    idata = az.from_netcdf(str(folder / "posterior.nc"))
    arrays = {
        f"{group}/{name}": np.asarray(idata[group][name].values)
        for group in ("posterior", "posterior_predictive", "prior")
        for name in idata[group].data_vars
    }
    return doc, arrays


def assert_same_results(a: Path, b: Path) -> None:
    doc_a, arr_a = comparable(a)
    doc_b, arr_b = comparable(b)
    assert doc_a == doc_b
    assert arr_a.keys() == arr_b.keys()
    for key in arr_a:
        assert np.array_equal(arr_a[key], arr_b[key]), key


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The campaign file and one uninterrupted run of it, shared by the tests (both are read,
    never written: a test that changes a finished folder or the campaign works on copies,
    :func:`copy_of_finished_run`). The run's fingerprint names the campaign file, so a run
    compared with this one uses the same file."""
    d = tmp_path_factory.mktemp("kill-ref")
    toml = d / "kill.toml"
    toml.write_text(CAMPAIGN)
    ref = d / "ref"
    assert main(["campaign", "run", str(toml), "--out", str(ref), "--quiet", "--no-plots"]) in (
        0,
        1,
    )
    return toml, ref


def copy_of_finished_run(finished_run: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the campaign file and of the finished run's folder in ``tmp_path``: what an
    uninterrupted ``mpiuq campaign run kill.toml --out out`` leaves there."""
    toml = tmp_path / "kill.toml"
    toml.write_text(CAMPAIGN)
    out = tmp_path / "out"
    shutil.copytree(finished_run[1], out)
    return toml, out


def test_killed_campaign_resumes_identically_and_never_leaves_stale_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], finished_run: tuple[Path, Path]
) -> None:
    toml, ref = finished_run
    out = tmp_path / "out"

    run_killed_campaign("design", toml, out)
    assert not (out / "summary.json").exists()
    assert main(["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]) in (
        0,
        1,
    )
    assert_same_results(ref, out)

    # a complete folder; the next run dies just before its summary: the old one is set aside
    previous = (out / "summary.json").read_bytes()
    run_killed_campaign("summary", toml, out)
    assert not (out / "summary.json").exists() and (out / "design.h5").exists()
    assert (out / "previous-run" / "summary.json").read_bytes() == previous
    aside = sorted(p.name for p in (out / "previous-run").iterdir())
    assert aside == [
        "posterior.nc",
        "posterior_draws.nc",
        "report.html",
        "summary.json",
        "surrogate.h5",
        "surrogate_local.h5",
    ]
    capsys.readouterr()
    assert main(["campaign", "show", str(out)]) == 2
    err = capsys.readouterr().err
    assert "has no summary.json: its campaign has not finished" in err
    assert "an earlier run's results are in" in err
    argv = ["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]
    assert main(argv) in (0, 1)
    assert_same_results(ref, out)
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        ".mpiuq-run.lock",  # the run lock (empty of meaning once its holder has exited)
        "design.h5",
        "posterior.nc",
        "posterior_draws.nc",
        "posterior_path.json",  # the path the first attempt chose, kept like the design
        "report.html",
        "summary.json",
        "surrogate.h5",
        "surrogate_local.h5",
    ]


def test_show_warns_when_a_result_file_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], finished_run: tuple[Path, Path]
) -> None:
    _, out = copy_of_finished_run(finished_run, tmp_path)
    assert main(["campaign", "show", str(out)]) == 0  # the copy is a sound, finished folder
    assert "has changed" not in capsys.readouterr().err
    with (out / "posterior.nc").open("ab") as f:
        f.write(b"\0")
    (out / "surrogate.h5").unlink()
    (out / "posterior_draws.nc").unlink()
    assert main(["campaign", "show", str(out)]) == 0
    captured = capsys.readouterr()
    assert "posterior.nc has changed since the run wrote it" in captured.err
    assert "posterior_draws.nc is missing" in captured.err
    # a large working file the folder may go without: said, not warned of
    assert "surrogate.h5" not in captured.err
    assert "not in this folder: surrogate.h5 (large working files" in captured.out


def test_campaign_restart_discards_a_mismatched_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], finished_run: tuple[Path, Path]
) -> None:
    toml, out = copy_of_finished_run(finished_run, tmp_path)
    argv = ["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]
    toml.write_text(CAMPAIGN.replace("link_bw_GBps = [3.0, 8.0]", "link_bw_GBps = [3.0, 9.0]"))
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "design.h5 holds a run of another design or model" in err
    assert "column 1 spans [3, 8] stored, [3, 9] requested" in err and "--restart" in err
    assert (out / "summary.json").exists()  # the refused run left the previous results alone
    assert not (out / "previous-run").exists()
    assert main([*argv, "--restart"]) in (0, 1)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["link_bw_GBps"]["prior"] == [3.0, 9.0]
