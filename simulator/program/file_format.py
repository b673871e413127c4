"""The program file's format: a lowered program on disk, read back a slice of rows at a time.

A lowered trace (:class:`~mpiuq.simulator.lowering.lowered.Lowered`) too large to hold in
memory is written by :mod:`.file_writer` and read back by :mod:`.file` a few rows per
rank at a time. Format version 1 is a directory ``NAME.mpiuqprog/`` with:

``meta.json``
    ``{"version": 1, "n_ranks", "n_ops", "n_requests", "n_marks", "call_names",
    "n_wait", "collectives", "algorithms", "nonblocking_collectives", "source",
    "format", "n_trace_ops", "unsupported", "notes"}`` (the last five: the trace
    facts a replay reports, see :class:`TraceFacts`).
``rank_ptr.npy``
    int64 ``(n_ranks + 1,)``: rows of rank ``r`` are ``[rank_ptr[r], rank_ptr[r + 1])``.
``ops.bin``
    raw int32 rows ``(n_ops, OPS_WIDTH)``, C order, little-endian, ranks in order.
``value.bin``
    raw 8-byte column ``(n_ops,)``: bytes of ``ISEND``/``IRECV`` rows (int64) and
    seconds of ``COMPUTE`` rows (float64), as :class:`~mpiuq.simulator.program.table.Program`.
``wait_list.npy``
    int32 ``(n_wait,)``: the global wait list (4 bytes per listed request).
``row_ptr.bin``
    raw int64 ``(n_trace_ops + 1,)``: program rows of each trace operation.
``reduce_rows.npy``, ``reduce_bytes.npy``
    int64 and float64: the reductions' combine rows and the bytes each combines.

Every problem with a file is a :class:`ProgramFileError` naming the file, key and value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.simulator.codes import OPS_WIDTH
from mpiuq.simulator.errors import SimulatorError
from mpiuq.simulator.trace.ir import Trace

__all__ = [
    "FORMAT_VERSION",
    "INT32_MAX",
    "ROW_BYTES",
    "SUFFIX",
    "ProgramFileError",
    "TraceFacts",
    "little",
]

#: Version of the program file format written and read here.
FORMAT_VERSION = 1
#: Suffix of a program file directory.
SUFFIX = ".mpiuqprog"
ROW_BYTES = OPS_WIDTH * 4
INT32_MAX = int(np.iinfo(np.int32).max)


class ProgramFileError(SimulatorError, ValueError):
    """A program file is missing, malformed, truncated or inconsistent.

    Attributes
    ----------
    path
        The program file (directory) or the member file at fault.
    key
        The meta key or member file whose value is bad.
    """

    def __init__(self, path: str | Path, key: str, message: str) -> None:
        self.path = str(path)
        self.key = key
        super().__init__(f"program file {self.path}: {key}: {message}")


@dataclass(frozen=True, slots=True)
class TraceFacts:
    """What a replay reports of the trace a program file was lowered from.

    Attributes
    ----------
    source, format
        Path the trace was read from and its format (``"dumpi"``, ``"otf2"``...).
    n_trace_ops
        Number of trace operations (``row_ptr`` has one more entry).
    unsupported
        MPI calls seen but not represented (name -> count).
    notes
        What the trace reader assumed.
    """

    source: str
    format: str
    n_trace_ops: int
    unsupported: dict[str, int]
    notes: tuple[str, ...]

    @classmethod
    def of(cls, trace: Trace) -> TraceFacts:
        """The facts of ``trace``."""
        return cls(
            source=trace.source,
            format=trace.format,
            n_trace_ops=trace.n_ops,
            unsupported=dict(trace.unsupported),
            notes=tuple(trace.notes),
        )


def little(dtype: type) -> np.dtype[Any]:
    """``dtype`` little-endian (the files' byte order)."""
    return np.dtype(dtype).newbyteorder("<")
