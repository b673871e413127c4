"""Units of parameter names, for tables, plots and messages.

The project names parameters with their unit as a suffix (``link_bw_GBps``,
``regime1_latency_us``); :data:`~mpiuq.simulator.parameters.UNITS` lists the global
ones. :func:`unit_of` reads either, so per-regime parameters and parameters added later
get their unit without a table entry.
"""

from __future__ import annotations

from mpiuq.simulator.parameters import UNITS

#: Units of parameter names by their suffix.
SUFFIX_UNITS: tuple[tuple[str, str], ...] = (
    ("_GBps", "GB/s"),
    ("_MBps", "MB/s"),
    ("_us", "us"),
    ("_ns", "ns"),
    ("_bytes", "B"),
)


def unit_of(name: str) -> str:
    """Unit of a simulator parameter: its ``UNITS`` entry, else its name's suffix; "" if
    neither says.

    Examples
    --------
    >>> unit_of("link_bw_GBps"), unit_of("regime2_copy_bw_GBps"), unit_of("regime0_segment_bytes")
    ('GB/s', 'GB/s', 'B')
    >>> unit_of("regime1_latency_us"), unit_of("sd_rel_eager")
    ('us', '')
    """
    if name in UNITS:
        return UNITS[name]
    return next((unit for suffix, unit in SUFFIX_UNITS if name.endswith(suffix)), "")
