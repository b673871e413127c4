"""The program file's writers: block after block (:class:`ProgramFileWriter`), or a
lowered program held whole (:func:`write_program_file`); format in :mod:`.file_format`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import OP_COMPUTE, OPS_WIDTH
from mpiuq.simulator.lowering.lowered import Lowered
from mpiuq.simulator.program.file_format import (
    FORMAT_VERSION,
    INT32_MAX,
    TraceFacts,
    little,
)

__all__ = ["ProgramFileWriter", "write_program_file"]

_COPY_CHUNK = 1 << 24  # bytes per copy step when a raw column is turned into a .npy file

IntArray = npt.NDArray[np.int64]
I32Array = npt.NDArray[np.int32]


class ProgramFileWriter:
    """Incremental writer of a program file (rows in rank order, block after block).

    The directory is written under a temporary name and renamed to ``path`` by
    :meth:`finish`; :meth:`abort` (or leaving a ``with`` block by an exception)
    deletes it. Memory: what the caller hands over, nothing kept.

    Parameters
    ----------
    path
        Destination directory (``NAME.mpiuqprog``); replaced if it exists.
    n_ranks
        Number of ranks of the program.
    call_names
        MPI call names indexed by the rows' ``call`` column.
    facts
        The trace facts stored with the program.
    """

    def __init__(
        self, path: str | Path, *, n_ranks: int, call_names: tuple[str, ...], facts: TraceFacts
    ) -> None:
        self.path = Path(path)
        self.n_ranks = int(n_ranks)
        self.call_names = tuple(call_names)
        self.facts = facts
        self.tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir(parents=True)
        self.n_ops = 0
        self.n_row_ptr = 0
        self._ops = open(self.tmp / "ops.bin", "wb")  # noqa: SIM115 - closed by finish/abort
        self._value = open(self.tmp / "value.bin", "wb")  # noqa: SIM115
        self._row_ptr = open(self.tmp / "row_ptr.bin", "wb")  # noqa: SIM115
        self._wait_fd = os.open(self.tmp / "wait_list.raw", os.O_RDWR | os.O_CREAT, 0o644)
        self.n_wait_written = 0

    def __enter__(self) -> ProgramFileWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is not None:
            self.abort()

    def append_rows(self, ops: I32Array, value: npt.NDArray[Any]) -> None:
        """Append program rows: ``ops`` int32 ``(k, OPS_WIDTH)``, ``value`` 8-byte ``(k,)``."""
        k = ops.shape[0]
        if ops.dtype != np.int32 or ops.shape != (k, OPS_WIDTH):
            raise ValueError(f"ops must be int32 of shape (k, {OPS_WIDTH}), got {ops.shape}")
        if value.dtype.itemsize != 8 or value.shape != (k,):
            raise ValueError(f"value must be an 8-byte column of shape ({k},), got {value.shape}")
        if k == 0:
            return  # (a memoryview of an empty table cannot be cast to bytes)
        self._ops.write(np.ascontiguousarray(ops, dtype=little(np.int32)).data.cast("B"))
        raw = np.ascontiguousarray(value).view(np.int64)
        self._value.write(np.ascontiguousarray(raw, dtype=little(np.int64)).data.cast("B"))
        self.n_ops += k

    def append_row_ptr(self, row_ptr: IntArray) -> None:
        """Append entries of the trace-operation -> program-row map (global rows)."""
        arr = np.ascontiguousarray(row_ptr, dtype=little(np.int64))
        if arr.shape[0] == 0:
            return
        self._row_ptr.write(arr.data.cast("B"))
        self.n_row_ptr += arr.shape[0]

    def write_wait_list(self, start: int, entries: npt.NDArray[np.integer[Any]]) -> None:
        """Write wait-list entries ``[start, start + len(entries))`` (any order of calls)."""
        if entries.shape[0] == 0:
            return
        if int(entries.min()) < 0 or int(entries.max()) > INT32_MAX:
            raise ValueError("wait-list entries must be request ids in the int32 range")
        data = np.ascontiguousarray(entries, dtype=little(np.int32))
        _pwrite_all(self._wait_fd, data.data.cast("B"), 4 * int(start))
        self.n_wait_written += data.shape[0]

    def finish(
        self,
        *,
        rank_ptr: IntArray,
        n_requests: int,
        n_wait: int,
        collectives: dict[str, int],
        algorithms: dict[str, list[str]],
        nonblocking_collectives: int,
        reduce_rows: IntArray,
        reduce_bytes: npt.NDArray[np.float64],
        n_marks: int = 0,
    ) -> Path:
        """Write the remaining members, close the files and rename the directory to ``path``."""
        try:
            for f in (self._ops, self._value, self._row_ptr):
                f.close()
            _raw_to_npy(self._wait_fd, self.tmp / "wait_list.npy", np.int32, int(n_wait))
            os.close(self._wait_fd)
            self._wait_fd = -1
            (self.tmp / "wait_list.raw").unlink()
            np.save(self.tmp / "rank_ptr.npy", np.asarray(rank_ptr, dtype=little(np.int64)))
            np.save(self.tmp / "reduce_rows.npy", np.asarray(reduce_rows, dtype=little(np.int64)))
            np.save(
                self.tmp / "reduce_bytes.npy", np.asarray(reduce_bytes, dtype=little(np.float64))
            )
            meta = {
                "version": FORMAT_VERSION,
                "n_ranks": self.n_ranks,
                "n_ops": self.n_ops,
                "n_requests": int(n_requests),
                "n_marks": int(n_marks),
                "call_names": list(self.call_names),
                "n_wait": int(n_wait),
                "collectives": {str(k): int(v) for k, v in collectives.items()},
                "algorithms": {str(k): [str(a) for a in v] for k, v in algorithms.items()},
                "nonblocking_collectives": int(nonblocking_collectives),
                "source": self.facts.source,
                "format": self.facts.format,
                "n_trace_ops": int(self.facts.n_trace_ops),
                "unsupported": {str(k): int(v) for k, v in self.facts.unsupported.items()},
                "notes": list(self.facts.notes),
            }
            (self.tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
            if self.path.exists():
                shutil.rmtree(self.path)
            self.tmp.replace(self.path)
        except BaseException:
            self.abort()
            raise
        return self.path

    def abort(self) -> None:
        """Close and delete the temporary directory (nothing is left behind)."""
        for f in (self._ops, self._value, self._row_ptr):
            f.close()
        if self._wait_fd >= 0:
            os.close(self._wait_fd)
            self._wait_fd = -1
        shutil.rmtree(self.tmp, ignore_errors=True)


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)


def _raw_to_npy(fd: int, dest: Path, dtype: type, n: int) -> None:
    """Copy ``n`` raw entries of ``fd`` (from offset 0) into the ``.npy`` file ``dest``."""
    itemsize = np.dtype(dtype).itemsize
    size = os.fstat(fd).st_size
    if size < n * itemsize:  # entries never written (e.g. an empty tail): zeros
        os.ftruncate(fd, n * itemsize)
    with open(dest, "wb") as out:
        header = {"descr": little(dtype).str, "fortran_order": False, "shape": (n,)}
        np.lib.format.write_array_header_1_0(out, header)
        pos = 0
        while pos < n * itemsize:
            chunk = os.pread(fd, min(_COPY_CHUNK, n * itemsize - pos), pos)
            if not chunk:
                raise OSError(f"short read copying {dest.name}")
            out.write(chunk)
            pos += len(chunk)


def write_program_file(lowered: Lowered, facts: TraceFacts, path: str | Path) -> Path:
    """Write an in-memory lowered trace as a program file (the program cache, tests);
    returns the path written.

    Parameters
    ----------
    lowered
        The lowering of the trace described by ``facts``.
    facts
        Trace facts stored with it (:meth:`TraceFacts.of`).
    path
        Destination directory (``NAME.mpiuqprog``).
    """
    prog = lowered.program
    with ProgramFileWriter(
        path, n_ranks=prog.n_ranks, call_names=prog.call_names, facts=facts
    ) as writer:
        value = prog.nbytes  # the lowering's programs: seconds is a view of the same column
        if value.ctypes.data != prog.seconds.ctypes.data or value.strides != (8,):
            value = prog.nbytes.copy()
            compute = prog.kind == OP_COMPUTE
            value[compute] = prog.seconds[compute].view(np.int64)
        writer.append_rows(prog.ops, value)
        writer.append_row_ptr(lowered.row_ptr)
        writer.write_wait_list(0, prog.wait_list)
        return writer.finish(
            rank_ptr=prog.rank_ptr,
            n_requests=prog.n_requests,
            n_wait=prog.wait_list.shape[0],
            collectives=lowered.collectives,
            algorithms=lowered.algorithms,
            nonblocking_collectives=lowered.nonblocking_collectives,
            reduce_rows=lowered.reduce_rows,
            reduce_bytes=lowered.reduce_bytes,
            n_marks=prog.n_marks,
        )
