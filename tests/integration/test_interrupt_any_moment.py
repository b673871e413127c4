"""Ctrl-C at any moment of ``mpiuq replay``: one line and exit 130, or the finished run.

SIGINT is sent at delays from 0.05 to 1.5 s into ``python -m mpiuq replay`` and into the
``mpiuq`` console script: through the interpreter's start-up, the imports of mpiuq,
NumPy and numba (where the worker thread may be half-way through importing a module),
the replay and the exit. Each run must end interrupted by mpiuq (exit 130, one line),
finished, or interrupted by Python's own start-up before any code of mpiuq ran
(:mod:`interrupt_sweep`). No time is asserted: which of these a delay gives depends on
the machine's load.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest
from interrupt_sweep import GOOD, ROOT, interrupt_replay, outcome

DELAYS_S = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.5)


def _check(command: list[str], work: Path) -> None:
    outcomes = {d: interrupt_replay(command, work, d) for d in DELAYS_S}
    bad = {d: o for d, o in outcomes.items() if o not in GOOD}
    assert not bad, bad
    # the sweep reached mpiuq: not every signal came before it started or after it ended
    assert "interrupted" in outcomes.values(), outcomes


def test_python_m_mpiuq_replay_interrupted_at_any_moment(tmp_path: Path) -> None:
    _check([sys.executable, "-m", "mpiuq"], tmp_path)


def test_console_script_replay_interrupted_at_any_moment(tmp_path: Path) -> None:
    found = shutil.which("mpiuq", path=os.path.dirname(sys.executable))
    if found is None:
        pytest.skip("the mpiuq console script is not installed beside this Python")
    _check([found], tmp_path)


@pytest.mark.parametrize(
    ("code", "err", "expected"),
    [
        (130, "mpiuq replay: interrupted\n", "interrupted"),
        (130, "mpiuq: interrupted\n", "interrupted"),
        (130, "reading t: ti (0.2 s)\nmpiuq replay: interrupted\n", "interrupted"),
        (0, "", "finished"),
        (-signal.SIGINT, "", "python"),
        (
            1,
            "Could not import runpy module\nTraceback (most recent call last):\nKeyboardInterrupt\n",
            "python",
        ),
        (
            -signal.SIGINT,
            'Traceback (most recent call last):\n  File "<frozen site>", line 1\nKeyboardInterrupt\n',
            "python",
        ),
    ],
)
def test_the_outcomes_are_told_apart(code: int, err: str, expected: str) -> None:
    assert outcome(code, err) == expected


def test_a_traceback_through_mpiuq_or_a_second_line_is_a_failure() -> None:
    ours = f'Traceback (most recent call last):\n  File "{ROOT}/cli/console.py", line 9\nKeyboardInterrupt\n'
    assert outcome(-signal.SIGINT, ours) not in GOOD
    assert outcome(130, "mpiuq replay: interrupted\nmpiuq replay: interrupted\n") not in GOOD
    assert outcome(130, "mpiuq replay: interrupted\nreading t\n") not in GOOD
    assert (
        outcome(130, "Traceback (most recent call last):\nmpiuq replay: interrupted\n") not in GOOD
    )
    assert outcome(1, "AttributeError: partially initialized module\n") not in GOOD
    assert outcome(0, "Traceback (most recent call last):\nKeyboardInterrupt\n") not in GOOD
