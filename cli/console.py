"""The ``mpiuq`` console script (and ``python -m mpiuq``): Ctrl-C from the first moment.

:func:`run` installs a SIGINT handler before it imports anything else: the imports of
:mod:`mpiuq.main` take a moment (longer on a loaded machine), and a Ctrl-C in them used
to end in a ``KeyboardInterrupt`` traceback. The handler writes the same one line as an
interrupted command (``mpiuq replay: interrupted``) and exits 130;
:func:`mpiuq.runtime.interrupt.run_interruptibly` puts Python's own handler back once it can
catch the interrupt. Importing this module has no side effects.
"""

import _signal  # the C module: ``signal`` imports enum, functools ... (a moment under load)
import os
import sys

TYPE_CHECKING = False  # typing itself is not imported before the handler is in place
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

#: Exit code of an interrupted command (:data:`mpiuq.runtime.exit_codes.EXIT_INTERRUPTED`).
_EXIT_INTERRUPTED = 130


def _interrupted_early(signum: int, frame: "FrameType | None") -> None:
    command = ""
    try:  # the signal may come while this thread imports it: then unnamed
        from mpiuq.runtime.command_words import early_command_words

        command = early_command_words(sys.argv[1:])
    except BaseException:  # a partially initialised module (ImportError): "mpiuq" alone
        pass
    try:
        name = f"mpiuq {command}" if command else "mpiuq"
        os.write(2, f"{name}: interrupted\n".encode())
    finally:
        os._exit(_EXIT_INTERRUPTED)


def run() -> "NoReturn":
    """Install the early Ctrl-C handler, then run :func:`mpiuq.main.run`.

    The handler is this function's first statement and this module imports nothing but
    built-in modules before it: what runs of mpiuq before it is the package's
    ``__init__`` (its version string) and loading this module.
    """
    _signal.signal(_signal.SIGINT, _interrupted_early)
    import mpiuq.runtime.command_words  # noqa: F401  (names the command in the message)
    from mpiuq.main import run as run_main

    run_main()
