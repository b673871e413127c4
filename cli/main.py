"""Entry point of the ``mpiuq`` command.

Start-up is kept short: this module imports only the standard library and the exit
codes. A sub-command's module (and NumPy, numba and the compiled loops behind it) is
imported only when that sub-command is named on the command line, so ``mpiuq --help``,
``mpiuq --version`` and usage errors answer without loading the simulator.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from mpiuq import __version__
from mpiuq.runtime.command_words import early_command_words
from mpiuq.runtime.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, describe, exit_code
from mpiuq.runtime.progress import add_quiet_argument
from mpiuq.runtime.usage_errors import selected_parser, unknown_words_message

#: The sub-commands: name -> (module whose ``add_parser(sub)`` registers it, the one-line
#: help shown by ``mpiuq --help``; the module's own ``help=`` must say the same).
COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": (
        "mpiuq.commands.simulate",
        "run ping-pong or streaming benchmarks on the simulator",
    ),
    "campaign": (
        "mpiuq.commands.campaign",
        "Bayesian calibration campaigns (run, validate, show, report)",
    ),
    "trace": ("mpiuq.commands.trace", "inspect MPI traces (DUMPI, OTF2, SimGrid TI)"),
    "surrogate": (
        "mpiuq.commands.surrogate",
        "sparse-grid designs and polynomial-chaos surrogates of any simulator",
    ),
    "replay": (
        "mpiuq.commands.replay",
        "replay an MPI trace and split its time into compute/network/stack/sync",
    ),
    "whatif": (
        "mpiuq.commands.whatif",
        "speed-up of what-if scenarios (faster network, lighter MPI stack, ...) "
        "with posterior intervals",
    ),
    "report": (
        "mpiuq.commands.report",
        "write the self-contained HTML report of a campaign, replay or what-if folder",
    ),
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit 2), like every other failure."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see 'PROG --help')`` and exit with code 2."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def named_command(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv``: its first word that is not an option, if any."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Build the top-level parser with one sub-command per layer.

    Parameters
    ----------
    command
        The sub-command to register in full (its module is imported); the others get a
        placeholder that only lists them in ``--help``. ``None`` registers all in full.
    """
    parser = OneLineParser(
        prog="mpiuq",
        description="Bayesian calibration and uncertainty quantification of an MPI simulator.",
        epilog="exit codes: 0 success, 1 failed run, 2 bad input, 130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"mpiuq {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the Python traceback of a failure instead of a one-line message",
    )
    add_quiet_argument(parser, default=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_text) in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(module).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see :mod:`mpiuq.runtime.exit_codes`).

    Every failure becomes one line on stderr, ``mpiuq COMMAND: error: ...``, and an exit
    code (2 bad input, 1 failed run, 130 interrupted); ``--debug`` re-raises instead.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(named_command(words) or "")
    before = words[: next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))]
    top = {s for a in parser._actions for s in a.option_strings}
    unknown = [w for w in before if w.split("=", 1)[0] not in top]
    if unknown:  # an option typo before any command: blamed on mpiuq, with the closest
        parser.error(unknown_words_message(parser, unknown))
    args, extras = parser.parse_known_args(words)
    if extras:  # blamed on the sub-command, with the closest option
        where = selected_parser(parser, args)
        where.error(unknown_words_message(where, extras))
    command = " ".join(
        str(part)
        for part in (
            args.command,
            getattr(args, "action", None),
            getattr(args, "trace_command", None),
        )
        if part
    )
    _running[0] = command
    try:
        return int(args.handler(args))
    except BrokenPipeError:
        # the reader of our output went away (``mpiuq ... | head``): stop quietly
        _silence_stdout()
        return EXIT_FAILED
    except (Exception, KeyboardInterrupt) as exc:
        if args.debug:
            raise
        kind = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"error: {describe(exc)}"
        print(f"mpiuq {command}: {kind}", file=sys.stderr)
        return exit_code(exc)


#: The command being run (for the message of an interrupt before it ends).
_running = [""]


def command_words(argv: Sequence[str]) -> str:
    """The command (and action) named in ``argv``, before it is parsed: ``campaign run``
    for ``campaign run X.toml``, ``replay`` for ``replay TRACE``, ``""`` for none."""
    words = early_command_words(list(argv))
    return words if words.split(" ", 1)[0] in COMMANDS else ""


#: Commands after which the console script ends the process without running the exit
#: handlers either (see :func:`_end_process`).
QUICK_EXIT_COMMANDS = frozenset({"replay"})


def run() -> NoReturn:
    """The ``mpiuq`` console script: :func:`main` on ``sys.argv``, then exit.

    The command runs in a worker thread, so that Ctrl-C ends it within a second even
    during a numba compilation or a long compiled loop (:mod:`mpiuq.runtime.interrupt`).

    The process then ends without the interpreter's clean-up of every module, once its
    output is flushed (:func:`_end_process`): after a replay, that clean-up is 20-40 ms,
    about a twentieth of replaying a cached trace; after a campaign, about 0.65 s during
    which Python has already put the system's default SIGINT action back, so a Ctrl-C
    there killed the process without its one line. Never for :func:`main` called from
    Python; not when a thread other than mpiuq's idle simulator threads is still running
    (the process then exits as usual).
    """
    from mpiuq.runtime.interrupt import run_interruptibly

    _running[0] = command_words(sys.argv[1:])  # named in a message of an early Ctrl-C
    code = run_interruptibly(main, lambda: _running[0])
    _end_process(code)


def _end_process(code: int) -> NoReturn:
    """End the console script with ``code`` once the command has returned.

    The exit handlers that libraries registered (closing a Dask client, removing
    temporary folders, flushing logs) run here, while the console script's SIGINT handler
    is still in place, and the process then ends at once. After a replay they are skipped
    too (a replay's files are closed and its threads joined when it returns), unless
    Dask's client module is loaded. After a failed HDF5 write (a full disk) the process
    ends at once without them: freeing what HDF5 left open can crash the interpreter
    (:func:`mpiuq.surrogate.store.hdf5_errors.unsafe_to_finalize`).
    """
    batches = sys.modules.get("mpiuq.simulator.benchmarks.run")
    if batches is not None:
        batches.close_thread_pools()  # idle threads: they end at once
    alone = all(t.daemon or t is threading.main_thread() for t in threading.enumerate())
    hdf5 = sys.modules.get("mpiuq.surrogate.store.hdf5_errors")
    if hdf5 is not None and hdf5.unsafe_to_finalize():  # HDF5 cannot clean up
        _exit_now(code)
    if not alone:
        raise SystemExit(code)
    if named_command(sys.argv[1:]) not in QUICK_EXIT_COMMANDS or "distributed" in sys.modules:
        # what the interpreter's exit would run first (the registry has no public runner)
        atexit._run_exitfuncs()
    _exit_now(code)


def _exit_now(code: int) -> NoReturn:
    """Flush the output and end the process with ``code`` (no interpreter clean-up)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        _silence_stdout()
        code = code or EXIT_FAILED
    os._exit(code)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a descriptor
        pass


if __name__ == "__main__":
    run()
