"""Typed errors of the trace readers.

Every error names the file, the rank and the record (0-based index of the record
within that rank's stream, or line number for text traces) when they are known,
and says what was expected instead.
"""

from __future__ import annotations

from mpiuq.simulator.errors import SimulatorError


class TraceFormatError(SimulatorError, ValueError):
    """A trace file is malformed, truncated or inconsistent.

    Attributes
    ----------
    file : str or None
        Path of the offending file.
    rank : int or None
        World rank whose stream holds the bad record.
    record : int or None
        Index of the bad record within that rank's stream (line number, 1-based,
        for text traces; 0-based event index for binary traces).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        rank: int | None = None,
        record: int | None = None,
    ) -> None:
        self.file = file
        self.rank = rank
        self.record = record
        self.reason = message
        where = []
        if file is not None:
            where.append(f"file {file}")
        if rank is not None:
            where.append(f"rank {rank}")
        if record is not None:
            where.append(f"record {record}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnsupportedTraceError(SimulatorError, ValueError):
    """The path is not a trace in a supported format, or uses a feature no reader handles."""
