"""When ``mpiuq replay`` streams a trace by default (no heavy imports: asked before any
trace is read)."""

from __future__ import annotations

__all__ = ["STREAM_MIN_OPS", "stream_by_default"]

#: Trace operations (plus v-collective count-list entries) from which
#: :func:`stream_by_default` streams: below it the whole trace and program (about 150 B
#: per trace operation) fit in a few hundred MB and the in-memory path is faster (it
#: writes no program file).
STREAM_MIN_OPS = 4_000_000


def stream_by_default(n_trace_ops: int, n_vcounts: int = 0) -> bool:
    """Whether a replay of a trace of ``n_trace_ops`` operations streams by default.

    ``n_vcounts``: entries of the trace's v-collective count lists. Each may become a
    program row (a 2,048-rank all-to-all-v with distinct counts: 4 k rows per rank from
    one trace operation, 8.4 M rows and 1.6 GB lowered in memory, 0.27 GB in blocks), so
    they count as operations.
    """
    return n_trace_ops + n_vcounts >= STREAM_MIN_OPS
