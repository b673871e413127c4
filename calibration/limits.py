"""Sane magnitudes of the simulator values a user writes into a campaign or on a command line.

:class:`~mpiuq.simulator.parameters.SimParams` accepts any positive finite number; a
campaign prior of ``[1e-300, 1e300]`` GB/s or ``--param post_header_delay_us=1e300``
is a typo or a unit error, and would run the simulator into times of 1e300 us.  The
bounds below are wide (nine to twelve orders of magnitude around today's hardware) and
are checked where users give values: campaign files (``[simulator.fixed]``,
``[parameters]``, ``[calibration.nominal]``) and the ``--param`` options.
"""

from __future__ import annotations

import math

from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS, PROTOCOL_SETTINGS, UNITS
from mpiuq.simulator.regimes import CONTINUOUS_SLOTS, PROTOCOLS, SLOT_UNITS, parse_slot_name

#: Range of every continuous parameter in its own unit (GB/s, us or ns): 1 kB/s to
#: 1 PB/s for bandwidths, 1 fs to 1 s for delays.
PARAMETER_MAGNITUDE: tuple[float, float] = (1e-6, 1e6)
#: Largest message size, bytes (equals ``mpiuq.simulator.benchmarks.MAX_SIZE_BYTES``).
MAX_MESSAGE_BYTES = 2**40
#: Largest value of a protocol threshold (``small_max_bytes``, ``eager_max_bytes``) and
#: of ``page_bytes``, bytes.
MAX_PROTOCOL_BYTES = 2**40


def parameter_range(name: str) -> tuple[float, float]:
    """The allowed ``(low, high)`` of a simulator parameter (any name of ``SimParams``) or
    regime slot ``regime<k>_<field>``: per-regime costs may be 0 (none), a regime's
    ``copy_bw_GBps`` of 0 means the global memory bandwidth."""
    slot = parse_slot_name(name)
    if slot is not None:
        field = slot[1]
        if field in CONTINUOUS_SLOTS:
            return (0.0, PARAMETER_MAGNITUDE[1])
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
    allowed = f"a number in [{low:g}, {high:g}] {unit}".rstrip()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(name, value, allowed)
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise ParameterError(name, value, allowed)
    return number
