"""Declarative tables of campaign keys: name -> type, range and default, walked by one reader.

A section of the campaign file that is a flat table of typed keys is described by a tuple
of key descriptions (:class:`IntKey`, :class:`FloatKey`, :class:`BoolKey`,
:class:`ChoiceKey`); :func:`read_keys` walks it in order with the typed readers of
:mod:`.readers` (so every message names the dotted key, the bad value and the allowed
range, and the campaign-key reference records the same ranges). A range or default may
depend on keys read before it, or on the campaign (``context``): it is then a function
of the values read so far. The meanings of the keys are the ``Attributes`` of the spec
dataclass that receives them; its field defaults are the keys' defaults unless a key
says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.calibration.config.readers import read_bool, read_float, read_int, record_choice
from mpiuq.calibration.errors import CampaignError

#: Values read so far (and the campaign context), by key name.
Values = Mapping[str, Any]
_IntRule = int | Callable[[Values], int]


def _value(rule: Any, values: Values) -> Any:
    return rule(values) if callable(rule) else rule


@dataclass(frozen=True, slots=True)
class IntKey:
    """An integer key in ``[minimum, maximum]``; ``optional``: None when absent."""

    name: str
    minimum: _IntRule
    maximum: int | None = None
    default: _IntRule | None = None
    optional: bool = False

    def read(self, t: Mapping[str, Any], prefix: str, values: Values, default: Any) -> Any:
        """The key's value in table ``t``."""
        minimum = _value(self.minimum, values)
        if self.optional:  # read as a required key when given
            return None if self.name not in t else read_int(t, self.name, prefix, minimum, None, self.maximum)
        fallback = default if self.default is None else _value(self.default, values)
        return read_int(t, self.name, prefix, minimum, fallback, self.maximum)


@dataclass(frozen=True, slots=True)
class FloatKey:
    """A number key in ``[lo, hi]``."""

    name: str
    lo: float
    hi: float

    def read(self, t: Mapping[str, Any], prefix: str, values: Values, default: Any) -> Any:
        """The key's value in table ``t``."""
        return read_float(t, self.name, prefix, default, lo=self.lo, hi=self.hi)


@dataclass(frozen=True, slots=True)
class BoolKey:
    """A true-or-false key."""

    name: str

    def read(self, t: Mapping[str, Any], prefix: str, values: Values, default: Any) -> Any:
        """The key's value in table ``t``."""
        return read_bool(t, self.name, prefix, default)


@dataclass(frozen=True, slots=True)
class ChoiceKey:
    """One of a tuple of names (or of a registry's names: ``choices`` is then a function)."""

    name: str
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]]

    def read(self, t: Mapping[str, Any], prefix: str, values: Values, default: Any) -> Any:
        """The key's value in table ``t``."""
        allowed = self.choices() if callable(self.choices) else self.choices
        record_choice(prefix, self.name, default)
        value = t.get(self.name, default)
        if not isinstance(value, str) or value not in allowed:
            raise CampaignError(f"{prefix}{self.name}", value, f"one of {list(allowed)}")
        return value


Key = IntKey | FloatKey | BoolKey | ChoiceKey


def key_names(keys: tuple[Key, ...]) -> tuple[str, ...]:
    """The names of a table's keys, in order."""
    return tuple(k.name for k in keys)


def read_keys(
    t: Mapping[str, Any],
    prefix: str,
    keys: tuple[Key, ...],
    defaults: object,
    context: Values | None = None,
) -> dict[str, Any]:
    """Read every key of ``keys`` from table ``t`` in order.

    Parameters
    ----------
    t
        The TOML table.
    prefix
        Its dotted name with a trailing dot (``"posterior."``), for the messages.
    keys
        The table's key descriptions.
    defaults
        An instance of the spec dataclass: ``getattr(defaults, name)`` is a key's default.
    context
        Campaign values the ranges may use (``dim``, ``min_steps``).

    Returns
    -------
    dict
        ``name -> value`` of every key (the spec dataclass's keyword arguments).
    """
    values: dict[str, Any] = dict(context or {})
    out: dict[str, Any] = {}
    for k in keys:
        out[k.name] = values[k.name] = k.read(t, prefix, values, getattr(defaults, k.name))
    return out
