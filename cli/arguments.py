"""Command-line arguments shared by several ``mpiuq`` commands."""

from __future__ import annotations

import argparse

from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.parameters import parameter_names


def add_param_argument(parser: argparse.ArgumentParser) -> None:
    """The repeatable ``--param NAME=VALUE`` override (read with :func:`parse_assignments`)."""
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"override a parameter; names: {', '.join(parameter_names())}",
    )


def parse_assignments(items: list[str]) -> dict[str, float]:
    """Parse ``NAME=VALUE`` strings into a dict of floats."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ParameterError(item, item, "NAME=VALUE")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ParameterError(name.strip(), value, "a number") from None
    return out


def parse_sizes(text: str) -> list[int]:
    """Parse plain comma-separated byte counts, e.g. ``"1,256,4096"``."""
    sizes = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            sizes.append(int(item))
        except ValueError:
            raise SettingError(
                f"message size {item!r} is invalid: expected a whole number of bytes"
            ) from None
    return sizes
