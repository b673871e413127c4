"""Entry point of the ``mpiuq`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from mpiuq.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, describe, exit_code


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit 2), like every other failure."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see 'PROG --help')`` and exit with code 2."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with one sub-command per layer."""
    parser = OneLineParser(
        prog="mpiuq",
        description="Bayesian calibration and uncertainty quantification of an MPI simulator.",
        epilog="exit codes: 0 success, 1 failed run, 2 bad input, 130 interrupted",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the Python traceback of a failure instead of a one-line message",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from mpiuq import campaign_cmd, replay_cmd, simulate_cmd, surrogate_cmd, trace_cmd, whatif_cmd

    for module in (simulate_cmd, campaign_cmd, trace_cmd, surrogate_cmd, replay_cmd, whatif_cmd):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see :mod:`mpiuq.exit_codes`).

    Every failure becomes one line on stderr, ``mpiuq COMMAND: error: ...``, and an exit
    code (2 bad input, 1 failed run, 130 interrupted); ``--debug`` re-raises instead.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    command = " ".join(
        str(part)
        for part in (
            args.command,
            getattr(args, "action", None),
            getattr(args, "trace_command", None),
        )
        if part
    )
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


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a descriptor
        pass


if __name__ == "__main__":
    raise SystemExit(main())
