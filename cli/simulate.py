"""``mpiuq simulate``: run the benchmark programs on the simulator."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``simulate`` sub-command."""
    p = sub.add_parser("simulate", help="run ping-pong or streaming benchmarks on the simulator")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``mpiuq simulate``."""
    raise NotImplementedError
