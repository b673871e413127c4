"""The ``mpiuq`` console script (and ``python -m mpiuq``): Ctrl-C from the first moment.

:func:`run` installs a SIGINT handler before it imports anything else: the imports of
:mod:`mpiuq.main` take a moment (longer on a loaded machine), and a Ctrl-C in them used
to end in a ``KeyboardInterrupt`` traceback. The handler writes the same one line as an
interrupted command (``mpiuq replay: interrupted``) and exits 130;
:func:`mpiuq.interrupt.run_interruptibly` puts Python's own handler back once it can
catch the interrupt. Importing this module has no side effects.
"""

from __future__ import annotations

import _signal  # the C module: ``signal`` imports enum, functools ... (a moment under load)
import os
import sys

TYPE_CHECKING = False  # typing itself is not imported before the handler is in place
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

#: Commands whose second word is an action (``campaign run``, ``trace info``, ...).
WITH_ACTIONS = frozenset({"campaign", "trace", "surrogate"})
#: Exit code of an interrupted command (:data:`mpiuq.exit_codes.EXIT_INTERRUPTED`).
_EXIT_INTERRUPTED = 130


def early_command_words(argv: list[str]) -> str:
    """The command (and action) words of ``argv`` before the command line is parsed."""
    words = [w for w in argv if not w.startswith("-")]
    if not words:
        return ""
    if words[0] in WITH_ACTIONS and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]


def _interrupted_early(signum: int, frame: FrameType | None) -> None:
    command = early_command_words(sys.argv[1:])
    name = f"mpiuq {command}" if command else "mpiuq"
    try:
        os.write(2, f"{name}: interrupted\n".encode())
    finally:
        os._exit(_EXIT_INTERRUPTED)


def run() -> NoReturn:
    """Install the early Ctrl-C handler, then run :func:`mpiuq.main.run`."""
    _signal.signal(_signal.SIGINT, _interrupted_early)
    from mpiuq.main import run as run_main

    run_main()
