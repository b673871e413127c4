"""Readers of MPI traces (DUMPI, OTF2, SimGrid TI) into one compact representation.

Quick start::

    from mpiuq.simulator.trace import read_trace, OpKind
    trace = read_trace("shared/data/traces/gen_ti_lulesh_8r")
    ops = trace.ops_of(0)
    print(trace.summary().ops_per_kind)
"""

from mpiuq.simulator.trace.cache import save_trace
from mpiuq.simulator.trace.detect import detect_format
from mpiuq.simulator.trace.dumpi import read_dumpi
from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.h5_reader import FORMAT_VERSION, load_trace_h5
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
from mpiuq.simulator.trace.otf2_reader import read_otf2
from mpiuq.simulator.trace.read import read_trace
from mpiuq.simulator.trace.ti import read_ti

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
