"""SimGrid's units of bandwidth, time and speed (``src/xbt/xbt_parse_units.cpp``, 3.32).

Bandwidths: ``Bps`` (bytes) or ``bps`` (bits) with a decimal (``k M G T P E Z Y``) or
binary (``Ki Mi Gi ...``) prefix, e.g. ``12.5GBps``, ``10Gbps``, ``1GiBps``; times:
``w d h m s ms us ns ps``; speeds: ``f`` with a decimal prefix (``1Gf``) or ``flops``
with a spelled-out one (``gigaflops``). A number without a unit is in the base unit
(bytes/s, seconds, flop/s), as in SimGrid.
"""

from __future__ import annotations

import math
import re

_DECIMAL = ("k", "M", "G", "T", "P", "E", "Z", "Y")
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")
_SPELLED = ("kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta")


def _scaled(unit: str, value: float, prefixes: tuple[str, ...], mult: float) -> dict[str, float]:
    out = {unit: value}
    for prefix in prefixes:
        value *= mult
        out[prefix + unit] = value
    return out


BANDWIDTH_UNITS: dict[str, float] = {
    **_scaled("bps", 0.125, _BINARY, 1024.0),
    **_scaled("bps", 0.125, _DECIMAL, 1000.0),
    **_scaled("Bps", 1.0, _BINARY, 1024.0),
    **_scaled("Bps", 1.0, _DECIMAL, 1000.0),
}
TIME_UNITS: dict[str, float] = {
    "w": 7 * 24 * 3600.0,
    "d": 24 * 3600.0,
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}
SPEED_UNITS: dict[str, float] = {
    **_scaled("f", 1.0, _DECIMAL, 1000.0),
    **_scaled("flops", 1.0, _SPELLED, 1000.0),
}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


def parse_quantity(text: str, units: dict[str, float], base: str) -> float:
    """``text`` (a number and an optional unit of ``units``) in base units.

    Raises
    ------
    ValueError
        Naming the text and the units allowed, for a malformed number, an unknown unit,
        or a value that is not finite.
    """
    m = _NUMBER.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a number with a unit (e.g. 1{base})")
    unit = m.group(2) or base
    if unit not in units:
        raise ValueError(f"{text!r} has an unknown unit {unit!r}: expected e.g. {_examples(units)}")
    value = float(m.group(1)) * units[unit]
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is out of range")
    return value


def _examples(units: dict[str, float]) -> str:
    keys = list(units)
    picks = [k for k in ("Bps", "GBps", "Gbps", "s", "us", "ns", "f", "Gf") if k in units]
    return ", ".join(picks or keys[:4])
