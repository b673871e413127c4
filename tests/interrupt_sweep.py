"""SIGINT sent into ``mpiuq replay`` at a chosen moment, and what the process made of it.

Shared by ``tests/integration/test_interrupt_any_moment.py`` and
``experiments/fuzz/sigint_window.py``. :func:`interrupt_replay` starts the command on a
small TI trace, sends SIGINT after a delay and classifies the end with :func:`outcome`:

* ``interrupted``: exit 130, no traceback, and the last line and only line from mpiuq
  itself ``mpiuq replay: interrupted`` (``mpiuq: interrupted`` if the signal came while
  the command's name was being read); progress lines may come before it;
* ``finished``: exit 0 (the run ended before the signal), no traceback;
* ``python``: the interpreter's own start-up, before any code of mpiuq ran: killed by
  the signal, or exit 1 after "Could not import runpy module" (``python -m``), with at
  most a ``KeyboardInterrupt`` traceback none of whose frames is a file of this
  repository;
* anything else: a description of the failure.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

from cache_fuzzing import SMALL_TI

ROOT = Path(__file__).resolve().parents[1]
#: The outcomes that are not failures.
GOOD = frozenset({"interrupted", "finished", "python"})
_FRAME = re.compile(r'^\s*File "([^"]+)"', re.MULTILINE)


def outcome(code: int, err: str) -> str:
    """How a process ended (see the module's docstring) from its exit code and stderr."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith("mpiuq")]  # (before: progress lines)
    if (
        code == 130
        and said in (["mpiuq replay: interrupted"], ["mpiuq: interrupted"])
        and lines[-1] == said[0]
        and "Traceback" not in err
    ):
        return "interrupted"
    if code == 0 and "Traceback" not in err:
        return "finished"
    frames = [Path(f) for f in _FRAME.findall(err)]
    ours = [
        f
        for f in frames
        if f.is_absolute() and f.is_relative_to(ROOT) and not f.is_relative_to(ROOT / ".venv")
    ]
    python_s = code in (-signal.SIGINT, 1) and (not lines or lines[-1] == "KeyboardInterrupt")
    if python_s and not ours and not any(ln.startswith("mpiuq") for ln in lines):
        return "python"
    return f"exit {code}: {err[-600:]!r}"


def interrupt_replay(command: list[str], work: Path, delay_s: float) -> str:
    """Run ``COMMAND replay`` on a small trace (cache in ``work``), SIGINT after
    ``delay_s`` (if still running): its :func:`outcome`.

    Raises
    ------
    TimeoutError
        If the process has not ended 120 s after the signal.
    """
    trace = work / "small_ti.txt"
    if not trace.exists():
        trace.write_text(SMALL_TI)
    env = dict(
        os.environ,
        MPIUQ_CACHE_DIR=str(work / "cache"),
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
    )
    proc = subprocess.Popen(
        [*command, "replay", str(trace), "--model", "analytic"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # SIGINT as an interactive shell leaves it (a background job inherits it ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        proc.wait(delay_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise TimeoutError(f"{command} ignored SIGINT sent after {delay_s} s") from None
    return outcome(proc.returncode, err)
