"""Readers of MPI traces (DUMPI, OTF2, SimGrid TI) into one compact representation.

Quick start::

    from mpiuq.simulator.trace import read_trace, OpKind
    trace = read_trace("shared/data/traces/gen_ti_lulesh_8r")
    ops = trace.ops_of(0)
    print(trace.summary().ops_per_kind)

The representation (:mod:`.ir`) and the errors are imported with the package; the
readers, whose compiled loops need numba and h5py, are imported on first use, so
that importing :mod:`mpiuq.simulator.trace.ir` (the integer codes do) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.ir import (
    ANY_SOURCE,
    ANY_TAG,
    NO_PEER,
    UNKNOWN_PEER,
    OpKind,
    RankOps,
    Trace,
    TraceSummary,
)

if TYPE_CHECKING:
    from mpiuq.simulator.trace.cache.h5_reader import FORMAT_VERSION, load_trace_h5
    from mpiuq.simulator.trace.cache.store import save_trace
    from mpiuq.simulator.trace.detect import detect_format
    from mpiuq.simulator.trace.dumpi.reader import read_dumpi
    from mpiuq.simulator.trace.otf2.reader import read_otf2
    from mpiuq.simulator.trace.read import read_trace
    from mpiuq.simulator.trace.ti.reader import read_ti

#: Public names imported on first use, and the module of each.
_LAZY = {
    "save_trace": "cache.store",
    "detect_format": "detect",
    "read_dumpi": "dumpi.reader",
    "FORMAT_VERSION": "cache.h5_reader",
    "load_trace_h5": "cache.h5_reader",
    "read_otf2": "otf2.reader",
    "read_trace": "read",
    "read_ti": "ti.reader",
}

__all__ = [
    "ANY_SOURCE",
    "ANY_TAG",
    "FORMAT_VERSION",
    "NO_PEER",
    "UNKNOWN_PEER",
    "OpKind",
    "RankOps",
    "Trace",
    "TraceFormatError",
    "TraceSummary",
    "UnsupportedTraceError",
    "detect_format",
    "load_trace_h5",
    "read_dumpi",
    "read_otf2",
    "read_ti",
    "read_trace",
    "save_trace",
]


def __getattr__(name: str) -> Any:
    """Import a reader on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
