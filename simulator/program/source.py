"""Where a lowered program's rows come from: memory, or a program file read in windows.

A :class:`ProgramSource` is what :func:`mpiuq.simulator.replay.windowed.simulate_windowed`
reads: the program's sizes, its rank pointer and wait list (held whole: 8 B per rank,
4 or 8 B per listed request) and :meth:`~ProgramSource.read_rows`, which copies any
range of global rows into caller buffers. :class:`ProgramSlices` serves a
:class:`~mpiuq.simulator.program.table.Program` in memory (tests, small traces); a program
file (``simulator.program.file.ProgramFile``) serves a program on disk.

Rows are the program's table rows (``int32`` of ``OPS_WIDTH``) and one 8-byte value per
row: the message size (``int64``) of ``ISEND``/``IRECV`` rows, the bits of the compute
seconds (``float64``) of ``COMPUTE`` rows, as :class:`~mpiuq.simulator.program.table.Program`
may hold them in one column.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import COL_COUNT, COL_KIND, OP_COMPUTE, OP_WAITALL, OP_WAITANY, OPS_WIDTH
from mpiuq.simulator.program.table import Program

__all__ = ["ProgramSlices", "ProgramSource", "row_blocks", "wait_rooms"]

I32Array = npt.NDArray[np.int32]
I64Array = npt.NDArray[np.int64]

#: Rows :func:`row_blocks` reads at once from a source that is not in memory (40 B each).
BLOCK_ROWS = 1 << 18


@runtime_checkable
class ProgramSource(Protocol):
    """A lowered program whose rows are read on demand (global row numbering)."""

    n_ranks: int
    n_ops: int
    n_requests: int
    n_marks: int
    call_names: tuple[str, ...]
    #: ``(n_ranks + 1,)``: rank ``r``'s rows are ``[rank_ptr[r], rank_ptr[r + 1])``
    rank_ptr: I64Array

    @property
    def wait_list(self) -> npt.NDArray[np.integer[Any]]:
        """Request ids of the ``WAITALL`` rows (int32 or int64)."""

    def read_rows(self, start: int, stop: int, ops_out: I32Array, value_out: I64Array) -> None:
        """Copy global rows ``[start, stop)`` into ``ops_out[: stop - start]`` and
        ``value_out[: stop - start]``."""


class ProgramSlices:
    """A :class:`~mpiuq.simulator.program.table.Program` in memory as a :class:`ProgramSource`."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.n_ranks = program.n_ranks
        self.n_ops = program.n_ops
        self.n_requests = int(program.n_requests)
        self.n_marks = int(program.n_marks)
        self.call_names = program.call_names
        self.rank_ptr = program.rank_ptr
        # int32, as a program file holds it (request ids fit: Program.validate), so that
        # the windowed kernel is compiled once for both
        self.wait_list = program.wait_list.astype(np.int32)
        # one 8-byte column (the lowering's programs), or two (ProgramBuilder's)
        self._one_column = np.shares_memory(program.nbytes, program.seconds)

    def read_rows(self, start: int, stop: int, ops_out: I32Array, value_out: I64Array) -> None:
        """Copy rows ``[start, stop)``: the table rows, and each row's value (its bytes,
        or its compute seconds' bits on ``COMPUTE`` rows)."""
        n = stop - start
        p = self.program
        ops_out[:n] = p.ops[start:stop]
        value_out[:n] = p.nbytes[start:stop]
        if not self._one_column:
            compute = np.flatnonzero(p.ops[start:stop, COL_KIND] == OP_COMPUTE)
            value_out[compute] = p.seconds[start:stop][compute].view(np.int64)


def row_blocks(
    source: Program | ProgramSource, lo: int, hi: int, block: int = BLOCK_ROWS
) -> Iterator[tuple[int, I32Array, I64Array]]:
    """Rows ``[lo, hi)`` of ``source`` in blocks of at most ``block`` rows:
    ``(first row, table rows, values)``. Views of a :class:`Program`'s arrays (its
    ``nbytes`` column as the values); copies, into one reused buffer of at most
    :data:`BLOCK_ROWS` rows, from any other source."""
    if isinstance(source, Program):
        for a in range(lo, hi, block):
            b = min(a + block, hi)
            yield a, source.ops[a:b], source.nbytes[a:b]
        return
    block = min(block, BLOCK_ROWS)
    n = max(min(block, hi - lo), 0)
    ops = np.empty((n, OPS_WIDTH), np.int32)
    value = np.empty(n, np.int64)
    for a in range(lo, hi, block):
        b = min(a + block, hi)
        source.read_rows(a, b, ops, value)
        yield a, ops[: b - a], value[: b - a]


def wait_rooms(source: Program | ProgramSource) -> I64Array:
    """Per rank, the offset of its room for one wait's requests (``n_ranks + 1``), as
    :func:`mpiuq.simulator.kernel.wait_offsets` computes it, read in blocks."""
    rank_ptr = source.rank_ptr
    n_ranks = int(rank_ptr.shape[0]) - 1
    room = np.ones(n_ranks, np.int64)
    for a, ops, _value in row_blocks(source, 0, int(rank_ptr[-1])):
        rows = np.flatnonzero((ops[:, COL_KIND] == OP_WAITALL) | (ops[:, COL_KIND] == OP_WAITANY))
        if rows.size:
            ranks = np.searchsorted(rank_ptr, rows + a, side="right") - 1
            np.maximum.at(room, ranks, ops[rows, COL_COUNT].astype(np.int64))
    ptr = np.zeros(n_ranks + 1, np.int64)
    np.cumsum(room, out=ptr[1:])
    return ptr
