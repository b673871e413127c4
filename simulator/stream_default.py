"""When ``mpiuq replay`` streams a trace by default (no heavy imports: asked before any
trace is read)."""

from __future__ import annotations

__all__ = ["STREAM_MIN_OPS", "stream_by_default"]

#: Trace operations from which :func:`stream_by_default` streams: below it the whole
#: trace and program (about 150 B per trace operation) fit in a few hundred MB and the
#: in-memory path is faster (it writes no program file).
STREAM_MIN_OPS = 4_000_000


def stream_by_default(n_trace_ops: int) -> bool:
    """Whether a replay of a trace of ``n_trace_ops`` operations streams by default."""
    return n_trace_ops >= STREAM_MIN_OPS
