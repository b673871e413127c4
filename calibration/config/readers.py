"""The campaign validator's typed readers of TOML keys, and the recording of what they check.

Every key of a campaign file is read by one of these functions (or listed by
:func:`check_keys`); each raises :class:`~mpiuq.calibration.errors.CampaignError` naming
the dotted key, the bad value and what is allowed. Inside :func:`recording` they also note
every key's kind, range and default: the generated campaign-key reference
(``docs/reference/campaign-keys.rst``) is that record of a probe campaign's validation.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.calibration.config.limits import check_parameter_value
from mpiuq.calibration.errors import CampaignError
from mpiuq.simulator.errors import ParameterError


@dataclass
class KeyRecord:
    """What the validator checked of one key while parsing (inside :func:`recording`).

    Attributes
    ----------
    allowed_in
        Its table (``"data"``, ``"variants[k]"``; ``""`` for the top level).
    kind, bounds, default
        ``"integer"``, ``"number"`` or ``"true or false"``; the range; the default
        (``"required"`` for a required key).
    """

    allowed_in: str
    kind: str = ""
    bounds: str = ""
    default: Any = None


#: The active recordings (table -> key -> record), innermost last.
_RECORDINGS: list[dict[str, dict[str, KeyRecord]]] = []


@contextlib.contextmanager
def recording() -> Iterator[dict[str, dict[str, KeyRecord]]]:
    """Record every key the readers check inside the block: ``table -> key -> record``."""
    tables: dict[str, dict[str, KeyRecord]] = {}
    _RECORDINGS.append(tables)
    try:
        yield tables
    finally:
        _RECORDINGS.remove(tables)


def is_recording() -> bool:
    """Whether a :func:`recording` is active."""
    return bool(_RECORDINGS)


def _record(prefix: str, name: str) -> KeyRecord | None:
    """The record of key ``name`` of table ``prefix`` in the active recording, if any."""
    if not _RECORDINGS:
        return None
    section = re.sub(r"\[\d+\]", "[k]", prefix.rstrip("."))
    table = _RECORDINGS[-1].setdefault(section, {})
    return table.setdefault(name, KeyRecord(allowed_in=section))


def _number(value: int) -> str:
    """An integer bound as written in the validator: ``2**62``, ``2**63 - 1`` or plain."""
    for offset, suffix in ((0, ""), (1, " - 1")):
        v = value + offset
        if v >= 2**20 and v & (v - 1) == 0:
            return f"2**{v.bit_length() - 1}{suffix}"
    return str(value)


def check_magnitude(key: str, name: str, value: float | int) -> None:
    """Refuse an absurd value of simulator parameter ``name`` (:mod:`~mpiuq.calibration.config.limits`)."""
    try:
        check_parameter_value(name, value)
    except ParameterError as exc:
        raise CampaignError(key, value, exc.allowed) from None


def check_keys(prefix: str, t: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    """Refuse a key of table ``t`` (dotted prefix ``prefix``) not in ``allowed``."""
    for name in allowed:
        _record(prefix, name)
    for key in t:
        if key not in allowed:
            raise CampaignError(f"{prefix}{key}", t[key], f"one of the keys {list(allowed)}")


def read_table(
    t: Mapping[str, Any], key: str, prefix: str = "", required: bool = False
) -> Mapping[str, Any]:
    """The sub-table ``key`` of ``t`` (empty when absent and not ``required``)."""
    if required and (k := _record(prefix, key)) is not None:
        k.default = "required"
    if key not in t:
        if required:
            raise CampaignError(f"{prefix}{key}", "(missing)", "a TOML table")
        return {}
    value = t[key]
    if not isinstance(value, dict):
        raise CampaignError(f"{prefix}{key}", value, "a TOML table")
    return value


def require(t: Mapping[str, Any], key: str, prefix: str) -> Any:
    """The value of a required key."""
    if (k := _record(prefix, key)) is not None:
        k.default = "required"
    if key not in t:
        raise CampaignError(f"{prefix}{key}", "(missing)", "a value (the key is required)")
    return t[key]


def record_choice(prefix: str, key: str, default: Any) -> None:
    """Note a choice key's default (its allowed names come from the code's tuples)."""
    if (k := _record(prefix, key)) is not None:
        k.default = default


def is_number(v: object) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def read_int(
    t: Mapping[str, Any],
    key: str,
    prefix: str,
    minimum: int,
    default: int | None = None,
    maximum: int | None = None,
) -> int:
    """An integer key in ``[minimum, maximum]`` (required when ``default`` is None)."""
    if (k := _record(prefix, key)) is not None:
        k.kind = "integer"
        k.bounds = f">= {_number(minimum)}" + ("" if maximum is None else f", <= {_number(maximum)}")
        k.default = "required" if default is None else default
    value = t.get(key, default) if default is not None else require(t, key, prefix)
    upper = "" if maximum is None else f" and <= {maximum}"
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        raise CampaignError(f"{prefix}{key}", value, f"an integer >= {minimum}{upper}")
    return value


def read_float(
    t: Mapping[str, Any], key: str, prefix: str, default: float, lo: float, hi: float
) -> float:
    """A number key in ``[lo, hi]``."""
    if (k := _record(prefix, key)) is not None:
        k.kind, k.bounds, k.default = "number", f"[{lo:g}, {hi:g}]", default
    value = t.get(key, default)
    if not is_number(value) or not lo <= float(value) <= hi:
        raise CampaignError(f"{prefix}{key}", value, f"a number in [{lo}, {hi}]")
    return float(value)


def read_bool(t: Mapping[str, Any], key: str, prefix: str, default: bool) -> bool:
    """A true-or-false key."""
    if (k := _record(prefix, key)) is not None:
        k.kind, k.default = "true or false", default
    value = t.get(key, default)
    if not isinstance(value, bool):
        raise CampaignError(f"{prefix}{key}", value, "true or false")
    return value
