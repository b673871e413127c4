"""Ctrl-C during the main job (the stock campaign): while its loops compile, and at
random moments of the run; each time the command stops within the limit, says so, and
leaves no half-written file (helpers in ``tests/integration/test_interrupt.py``)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from test_interrupt import _campaign, _check_interrupted, _env, _interrupt, _mpiuq


def test_sigint_while_the_main_job_compiles(tmp_path: Path) -> None:
    """3 SIGINTs while the main job compiles its loops (an empty numba cache; the signal
    sent 0.5-5 s after a loop starts compiling): exit 130 within 1 s, the last line
    ``mpiuq campaign run: interrupted``, no traceback, no partial file; every loop
    compiled before the signal stays cached (the next try compiles other loops)."""
    mpiuq = _mpiuq()
    rng = random.Random(131)
    cache = tmp_path / "numba-cache"
    out = tmp_path / "out"
    compiled_before: list[str] = []
    for k in range(3):
        proc = subprocess.Popen(
            _campaign(mpiuq, out, quiet=False),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(NUMBA_CACHE_DIR=str(cache)),
            cwd=tmp_path,
        )
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # until a loop starts compiling
            seen.append(line)
            if "compiling " in line:
                break
        assert any("compiling " in line for line in seen), seen
        started = [
            ln.split("compiling ", 1)[1].split(" ", 1)[0] for ln in seen if "compiling " in ln
        ]
        assert started[-1] not in compiled_before  # a loop cached by a killed try is not redone
        time.sleep(rng.uniform(0.5, 5.0))
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
        took = time.monotonic() - t0
        err = "".join(seen) + proc.stderr.read()
        _check_interrupted(code, took, err, out, k)
        compiled_before += [
            ln.split("compiled ", 1)[1].split(" ", 1)[0]
            for ln in err.splitlines()
            if "compiled " in ln and " in " in ln
        ]


def _interrupt_in_stage(
    cmd: list[str], stage: str, after_s: float, **kw: object
) -> tuple[int | None, float, str]:
    """Start ``cmd`` (with its progress bars on stderr), send SIGINT ``after_s`` after the
    bar of ``stage`` first appears: (exit code, seconds from the signal to the exit,
    stderr); exit code ``None`` if it ended before the signal."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kw,  # type: ignore[call-overload]
    )
    assert proc.stderr is not None
    seen = b""
    while f"{stage}:".encode() not in seen:
        chunk = os.read(proc.stderr.fileno(), 1 << 16)  # the bars end in \r, not \n
        if not chunk:  # the run ended without reaching the stage
            proc.wait()
            return None, 0.0, seen.decode()
        seen += chunk
    time.sleep(after_s)
    if proc.poll() is not None:  # ended before the signal
        return None, 0.0, (seen + proc.stderr.read()).decode()
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(30)
    took = time.monotonic() - t0
    return code, took, (seen + proc.stderr.read()).decode()


def test_sigint_at_random_moments_of_the_main_job(tmp_path: Path) -> None:
    """8 SIGINTs during ``mpiuq campaign run`` (loops cached): each exits 130 within 1 s,
    with no traceback and no partial file (with ``--quiet``, one line on stderr); the run
    then resumes from what was kept and finishes.

    A try resumes from the design checkpoint and the remaining run takes about 55 s:
    start-up, data, design, surrogate and the grouped sampling in its first 10 s, the
    direct sampler on the posterior with discrepancy to about 38 s, then the one without
    discrepancy (about 12 s), the estimates and the result files (under a second). Six tries
    fall at random in the first 16 s; two wait for the progress bar of a late stage
    (``posterior (no discrepancy)``, ``estimates``) and signal at a random moment of it,
    which reaches the last three stages every time, where random moments in 38-56 s
    mostly fell in the sampler."""
    mpiuq = _mpiuq()
    out = tmp_path / "out"
    cmd = _campaign(mpiuq, out)
    rng = random.Random(31)
    interrupted = 0
    for k, delay in enumerate(rng.uniform(0.2, 16.0) for _ in range(6)):
        code, took, err = _interrupt(cmd, delay, env=_env(), cwd=tmp_path)
        if code is None:  # finished before the signal: a later try starts it again
            continue
        interrupted += 1
        _check_interrupted(code, took, err, out, (k, delay))
        assert err.count("\n") == 1, err
    assert interrupted >= 5
    for stage, after_s in (
        ("posterior (no discrepancy)", rng.uniform(0.0, 8.0)),
        ("estimates", rng.uniform(0.0, 0.2)),
    ):
        code, took, err = _interrupt_in_stage(
            _campaign(mpiuq, out, quiet=False), stage, after_s, env=_env(), cwd=tmp_path
        )
        assert code is not None, (stage, after_s, err[-2000:])
        _check_interrupted(code, took, err, out, (stage, after_s))
    # nothing lost: the run resumes from its checkpoint and finishes
    done = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert (out / "summary.json").is_file()
