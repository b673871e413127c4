"""Command-line arguments shared by several ``mpiuq`` commands."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from mpiuq.calibration.config.limits import check_parameter_value
from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.parameter_limits import parse_decimal
from mpiuq.simulator.parameters import parameter_names
from mpiuq.simulator.regimes import SLOTS as REGIME_SLOTS


def add_param_argument(parser: argparse.ArgumentParser) -> None:
    """The repeatable ``--param NAME=VALUE`` override (read with :func:`parse_assignments`)."""
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"override a parameter; names: {', '.join(parameter_names())}, or a regime "
        f"slot regime<k>_<field> ({', '.join(REGIME_SLOTS)})",
    )


def parse_assignments(items: list[str]) -> dict[str, float]:
    """Parse ``NAME=VALUE`` strings into a dict of floats (names and ranges checked)."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ParameterError(item, item, "NAME=VALUE")
        number = parse_decimal(value)  # "1_0" is no number (float() would read 10)
        if number is None:
            if name.strip().endswith("_protocol"):  # regime<k>_protocol=stream
                out[name.strip()] = value.strip()  # type: ignore[assignment]
                continue
            raise ParameterError(name.strip(), value, "a number written as a plain decimal")
        out[name.strip()] = check_parameter_value(name.strip(), number)
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


def seed_argument(text: str) -> int:
    """``--seed``: a whole number >= 0 (argparse ``type``; a bad value is a usage error)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative: expected a whole number >= 0")
    return seed


def bounded_number(low: float, high: float, integer: bool = False) -> Callable[[str], float]:
    """argparse ``type``: a number in ``[low, high]`` (a whole number if ``integer``)."""

    def parse(text: str) -> float:
        number = parse_decimal(text)
        if number is None or (integer and not number.is_integer()):
            kind = "a whole number" if integer else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        value: float = int(number) if integer else number
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: expected {low:g}..{high:g}")
        return value

    return parse


def output_folder(text: str) -> Path:
    """argparse type of an ``--out`` folder: refused at once if it names an existing file
    (not a folder), before anything is read or compiled."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text!r} is an existing file: expected a folder (new or existing) for the results"
        )
    return path
