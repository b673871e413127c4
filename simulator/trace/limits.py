"""Bounds on the magnitudes a trace may hold, checked by every reader before use.

A corrupted or hostile trace must not make a reader allocate per-rank tables for
billions of ranks, overflow a 64-bit byte count, or replay a compute burst of 1e291
seconds. Every reader (TI, DUMPI, OTF2, mpiuq HDF5) checks each value against these
bounds when it reads it, and :meth:`Trace.validate` checks the columns again, so the
replay engine only ever sees values inside them. Each bound is generous for real
traces and far below what would exhaust memory or lose precision; the reasoning is
next to each value. Error messages quote the bad value and the allowed range.
"""

from __future__ import annotations

__all__ = [
    "MAX_ACTION_SECONDS",
    "MAX_COUNT",
    "MAX_LINES",
    "MAX_MESSAGE_BYTES",
    "MAX_OP_SECONDS",
    "MAX_RANKS",
    "MAX_TAG",
    "MAX_TEXT_BYTES",
]

#: Ranks of one trace (MPI_COMM_WORLD size). The largest MPI jobs run so far have a
#: few million processes and trace-driven simulators replay up to about a million
#: ranks; 2^22 = 4,194,304 leaves room above both while the per-rank tables of a trace
#: (rank pointers, communicator members, reader state: about 40 bytes per rank) stay
#: under 200 MB even for a one-line file that names the largest allowed rank.
MAX_RANKS = 1 << 22

#: Largest message tag. MPI tags are C ``int`` values and MPI_TAG_UB, the largest tag an
#: implementation accepts, is at most INT_MAX = 2^31 - 1 (it must be at least 32767).
#: Negative tags are only MPI_ANY_TAG (-1), on receives.
MAX_TAG = (1 << 31) - 1

#: Largest element count of one MPI call argument: MPI counts are C ``int`` values
#: (MPI-4 large-count variants are not written by any supported trace format).
MAX_COUNT = (1 << 31) - 1

#: Largest number of bytes one rank sends or receives in one operation (one message,
#: or one collective's whole buffer): 2^40 B = 1 TiB, more than the memory of any
#: compute node, so a larger buffer cannot exist; sums of up to MAX_RANKS such
#: values still fit in a signed 64-bit integer (2^62).
MAX_MESSAGE_BYTES = 1 << 40

#: Longest single compute burst (or sleep) between two MPI calls, in seconds:
#: 10^6 s = 11.6 days, longer than the wall-time limit of batch queues on production
#: machines (typically 1-7 days). A TI ``compute 1e300`` or a flipped OTF2 timestamp
#: (4.37e9 s) is rejected instead of replayed.
MAX_ACTION_SECONDS = 1e6

#: Largest duration of one operation of a Trace, in seconds: 10^9 s (32 years). A
#: reader may merge consecutive compute bursts (each at most MAX_ACTION_SECONDS) into
#: one operation; beyond this the float64 clock of a replay would lose sub-10 ns
#: resolution, and no trace runs that long.
MAX_OP_SECONDS = 1e9

#: Largest text of one TI rank file after decompression: 2^31 - 1 B = 2 GiB, over
#: 100 million trace lines, far more than a replay holds in memory; a small ``.gz``
#: that inflates beyond it (a decompression bomb) is refused instead of filling memory.
MAX_TEXT_BYTES = (1 << 31) - 1

#: Largest number of action lines (operations) in one trace: 2^31 - 1, so that row
#: and request indices fit the parser's 32-bit tables. At about 70 bytes per
#: operation such a trace would need 150 GB in memory.
MAX_LINES = (1 << 31) - 1
