"""Entry point of the ``mpiuq`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with one sub-command per layer."""
    parser = argparse.ArgumentParser(
        prog="mpiuq",
        description="Bayesian calibration and uncertainty quantification of an MPI simulator.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from mpiuq import campaign_cmd, replay_cmd, simulate_cmd, surrogate_cmd, trace_cmd

    for module in (simulate_cmd, campaign_cmd, trace_cmd, surrogate_cmd, replay_cmd):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = args.handler
    from mpiuq.simulator.errors import SimulatorError

    try:
        return int(handler(args))
    except (SimulatorError, ValueError, RuntimeError, OSError) as exc:
        print(f"mpiuq {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
