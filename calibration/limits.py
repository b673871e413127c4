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

#: Range of every continuous parameter in its own unit (GB/s, us or ns): 1 kB/s to
#: 1 PB/s for bandwidths, 1 fs to 1 s for delays.
PARAMETER_MAGNITUDE: tuple[float, float] = (1e-6, 1e6)
#: Largest message size, bytes (equals ``mpiuq.simulator.benchmarks.MAX_SIZE_BYTES``).
MAX_MESSAGE_BYTES = 2**40
#: Largest value of a protocol threshold (``small_max_bytes``, ``eager_max_bytes``) and
#: of ``page_bytes``, bytes.
MAX_PROTOCOL_BYTES = 2**40


def parameter_range(name: str) -> tuple[float, float]:
    """The allowed ``(low, high)`` of a simulator parameter (any name of ``SimParams``)."""
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
    if name not in CONTINUOUS_PARAMETERS and name not in PROTOCOL_SETTINGS:
        known = [*CONTINUOUS_PARAMETERS, *PROTOCOL_SETTINGS]
        raise ParameterError(name, value, f"a simulator parameter, one of {known}")
    low, high = parameter_range(name)
    unit = UNITS.get(name, "")
    allowed = f"a number in [{low:g}, {high:g}] {unit}".rstrip()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(name, value, allowed)
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise ParameterError(name, value, allowed)
    return number
