"""Ctrl-C ends a command within a second at any moment: one line, exit 130, nothing lost.

The console script runs the command in a worker thread and waits for it in the main
thread (:mod:`mpiuq.interrupt`), so SIGINT is handled even while the worker is inside
a numba compilation or a compiled loop, neither of which checks signals.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpiuq.interrupt import remove_in_flight_files
from mpiuq.surrogate.atomic_write import IN_FLIGHT, replace_atomically

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "experiments" / "stampede-ib.toml"


def _interrupt(cmd: list[str], delay_s: float, **kw: object) -> tuple[int | None, float, str]:
    """Start ``cmd``, send SIGINT after ``delay_s``: (exit code, seconds from the signal to
    the exit, stderr); exit code ``None`` if it ended before the signal."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )
    try:
        proc.wait(delay_s)
    except subprocess.TimeoutExpired:
        pass
    else:
        return None, 0.0, proc.stderr.read() if proc.stderr else ""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"{cmd} ignored SIGINT for 30 s")
    took = time.monotonic() - t0
    return code, took, proc.stderr.read() if proc.stderr else ""


def test_a_worker_inside_a_long_call_is_interrupted_at_once() -> None:
    # the worker holds no signal check for 60 s (as in a compilation or a compiled loop)
    script = (
        "import time\n"
        "from mpiuq.interrupt import run_interruptibly\n"
        "run_interruptibly(lambda: time.sleep(60) or 0, lambda: 'replay')\n"
    )
    code, took, err = _interrupt([sys.executable, "-c", script], 1.0)
    assert code == 130
    assert err == "mpiuq replay: interrupted\n"
    assert took < 1.0


def test_the_command_is_named_before_it_is_parsed() -> None:
    from mpiuq.main import command_words

    assert command_words(["campaign", "run", "x.toml", "--quiet"]) == "campaign run"
    assert command_words(["-q", "replay", "trace.txt"]) == "replay"
    assert command_words(["trace", "info", "t"]) == "trace info"
    assert command_words(["--help"]) == "" and command_words(["nope"]) == ""


def test_the_worker_s_result_and_errors_reach_the_caller() -> None:
    from mpiuq.interrupt import run_interruptibly

    assert run_interruptibly(lambda: 3, lambda: "x") == 3
    with pytest.raises(SystemExit):
        run_interruptibly(lambda: sys.exit(2), lambda: "x")


def test_files_being_written_are_removed_on_an_interrupt(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    with replace_atomically(target) as tmp:
        tmp.write_text("half")
        assert tmp in IN_FLIGHT
        remove_in_flight_files()  # what the interrupt does before it exits
        assert not tmp.exists()
        tmp.write_text("done")  # (the writer goes on in this test only)
    assert target.read_text() == "done" and not IN_FLIGHT


def _mpiuq() -> str:
    found = shutil.which("mpiuq", path=os.path.dirname(sys.executable)) or shutil.which("mpiuq")
    if found is None:
        pytest.skip("the mpiuq console script is not installed")
    return found


@pytest.mark.slow
def test_sigint_at_random_moments_of_the_main_job(tmp_path: Path) -> None:
    """20 SIGINTs at random moments of ``mpiuq campaign run`` (3 with an empty numba cache,
    so they land in compilations): each exits 130 within 1 s with one line on stderr, no
    traceback and no partial file; the run then resumes from what was kept and finishes."""
    mpiuq = _mpiuq()
    out = tmp_path / "out"
    cmd = [mpiuq, "campaign", "run", str(CAMPAIGN), "--out", str(out), "--no-plots", "--quiet"]
    rng = random.Random(31)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    interrupted = 0
    for k in range(20):
        run_env = dict(env)
        if k < 3:  # an empty numba cache: the loops compile (interrupted while compiling)
            run_env["NUMBA_CACHE_DIR"] = str(tmp_path / f"numba-cache-{k}")
            delay = rng.uniform(1.0, 6.0)
        else:
            delay = rng.uniform(0.2, 30.0)
        code, took, err = _interrupt(cmd, delay, env=run_env, cwd=tmp_path)
        partial = sorted(p.name for p in out.rglob("*.partial-*")) if out.exists() else []
        assert partial == [], (k, partial)
        if code is None:  # finished before the signal: a later try starts it again
            continue
        interrupted += 1
        assert code == 130, (k, delay, err)
        assert err.endswith("mpiuq campaign run: interrupted\n") and "Traceback" not in err, err
        assert err.count("\n") == 1, err
        assert took < 1.0, (k, delay, took)
    assert interrupted >= 15
    # nothing lost: the run resumes from its checkpoint and finishes
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert (out / "summary.json").is_file()
