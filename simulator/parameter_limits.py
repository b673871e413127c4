"""Sane magnitudes of the simulator's parameter values: the one range check they all pass.

:class:`~mpiuq.simulator.parameters.SimParams`, the regime table
(:func:`~mpiuq.simulator.regimes.validate_regimes`) and the engine's parameter matrix
(:func:`~mpiuq.simulator.parameters.params_matrix`) check every value against these
bounds, so a value is held to them however it enters: a campaign file, ``--param``, a
what-if edit (``injection_bw_GBps*=1e-300``), a posterior draw, a per-regime value. A
bandwidth of 1e-300 GB/s or a delay of 1e300 us is a typo or a unit error, and would run
the simulator into times of 1e293 s. The bounds are wide: nine to twelve orders of
magnitude around today's hardware.
"""

from __future__ import annotations

import math
import re

from mpiuq.simulator.errors import ParameterError

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_PROTOCOL_BYTES",
    "PARAMETER_MAGNITUDE",
    "REGIME_COST_RANGE",
    "check_in_range",
    "parse_decimal",
]

#: Range of every continuous parameter in its own unit (GB/s, us or ns): 1 kB/s to
#: 1 PB/s for bandwidths, 1 fs to 1 s for delays.
PARAMETER_MAGNITUDE: tuple[float, float] = (1e-6, 1e6)
#: Range of a per-regime cost (``send_overhead_us``, ``copy_bw_GBps``, ``segment_us``): 0 means
#: none (for ``copy_bw_GBps``: the global memory bandwidth).
REGIME_COST_RANGE: tuple[float, float] = (0.0, PARAMETER_MAGNITUDE[1])
#: Largest message size, bytes (equals ``mpiuq.simulator.benchmarks.run.MAX_SIZE_BYTES``).
MAX_MESSAGE_BYTES = 2**40
#: Largest protocol threshold (``small_max_bytes``, ``eager_max_bytes``,
#: ``regime<k>_max_bytes``) and ``page_bytes``, bytes.
MAX_PROTOCOL_BYTES = 2**40


def check_in_range(name: str, value: object, low: float, high: float, unit: str = "") -> float:
    """``value`` as a float if it is a finite number in ``[low, high]``, else raise.

    Raises
    ------
    ParameterError
        Naming ``name``, the value and the range with its unit.

    Examples
    --------
    >>> check_in_range("link_bw_GBps", 12, 1e-6, 1e6, "GB/s")
    12.0
    """
    try:
        number = math.nan if isinstance(value, bool | str | bytes) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not (math.isfinite(number) and low <= number <= high):
        raise ParameterError(name, value, f"a number in [{low:g}, {high:g}] {unit}".rstrip())
    return number


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_decimal(text: str) -> float | None:
    """The number a user wrote as plain decimal text, or None.

    Stricter than :func:`float`: no digit separators (``"1_0"`` is not 10), no
    ``inf``/``nan``, no hexadecimal; surrounding blanks are ignored.

    Examples
    --------
    >>> parse_decimal(" 2.5e3 "), parse_decimal("1_0"), parse_decimal("nan")
    (2500.0, None, None)
    """
    stripped = text.strip()
    if not _DECIMAL.fullmatch(stripped):
        return None
    return float(stripped)
