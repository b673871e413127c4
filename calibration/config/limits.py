"""Sane magnitudes of the simulator values a user writes into a campaign or on a command line.

The bounds are the simulator's own (:mod:`mpiuq.simulator.parameter_limits`), which every
parameter set passes however its values enter; here they are looked up by name, so a
campaign file (``[simulator.fixed]``, ``[parameters]``, ``[calibration.nominal]``), a
``--param`` option or a calibration's summary can name the key and the bad value before
any parameter set is built.
"""

from __future__ import annotations

from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameter_limits import (
    MAX_MESSAGE_BYTES,
    MAX_PROTOCOL_BYTES,
    PARAMETER_MAGNITUDE,
    REGIME_COST_RANGE,
    check_in_range,
)
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS, PROTOCOL_SETTINGS, UNITS
from mpiuq.simulator.regimes import CONTINUOUS_SLOTS, PROTOCOLS, SLOT_UNITS, parse_slot_name

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_PROTOCOL_BYTES",
    "PARAMETER_MAGNITUDE",
    "check_parameter_value",
    "parameter_range",
]


def parameter_range(name: str) -> tuple[float, float]:
    """The allowed ``(low, high)`` of a simulator parameter (any name of ``SimParams``) or
    regime slot ``regime<k>_<field>``: per-regime costs may be 0 (none), a regime's
    ``copy_bw_GBps`` of 0 means the global memory bandwidth."""
    slot = parse_slot_name(name)
    if slot is not None:
        field = slot[1]
        if field in CONTINUOUS_SLOTS:
            return REGIME_COST_RANGE
        if field == "protocol":
            return (0, len(PROTOCOLS) - 1)
        if field == "fragment_bytes":  # 0: not pipelined
            return (0, MAX_PROTOCOL_BYTES)
        return (1, MAX_PROTOCOL_BYTES)
    if name in PROTOCOL_SETTINGS:
        return (1, MAX_PROTOCOL_BYTES)
    return PARAMETER_MAGNITUDE


def check_parameter_value(name: str, value: object) -> float:
    """Return ``value`` as a float if it lies in :func:`parameter_range`, else raise.

    Raises
    ------
    ParameterError
        For an unknown name, a non-number, or a value out of range (names the unit).
    """
    slot = parse_slot_name(name)
    if name not in CONTINUOUS_PARAMETERS and name not in PROTOCOL_SETTINGS and slot is None:
        known = [*CONTINUOUS_PARAMETERS, *PROTOCOL_SETTINGS]
        raise ParameterError(
            name, value, f"a simulator parameter, one of {known}, or regime<k>_<field>"
        )
    low, high = parameter_range(name)
    unit = SLOT_UNITS[slot[1]] if slot is not None else UNITS.get(name, "")
    return check_in_range(name, value, low, high, unit)
