"""The program file: a lowered program on disk, read back a slice of rows at a time.

A lowered trace (:class:`~mpiuq.simulator.lowering.lower.Lowered`) too large to hold in
memory is written here by the block lowering
(:mod:`mpiuq.simulator.lowering.blocks`) and read back by the windowed kernel a few
rows per rank at a time. Format version 1 is a directory ``NAME.mpiuqprog/`` with:

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

Reads use ``os.pread`` into the caller's buffers (no memory map: the resident size of a
replay counts exactly what it holds; ``to_program(mapped=True)`` maps the rows instead).
Every problem with a file is a :class:`ProgramFileError` naming the file, key and value.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import OP_COMPUTE, OPS_WIDTH
from mpiuq.simulator.errors import SimulatorError
from mpiuq.simulator.lowering.lower import Lowered
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.trace.ir import Trace

__all__ = [
    "FORMAT_VERSION",
    "SUFFIX",
    "ProgramFile",
    "ProgramFileError",
    "ProgramFileWriter",
    "TraceFacts",
    "write_program_file",
]

#: Version of the program file format written and read here.
FORMAT_VERSION = 1
#: Suffix of a program file directory.
SUFFIX = ".mpiuqprog"
ROW_BYTES = OPS_WIDTH * 4
INT32_MAX = int(np.iinfo(np.int32).max)
_COPY_CHUNK = 1 << 24  # bytes per copy step when a raw column is turned into a .npy file

IntArray = npt.NDArray[np.int64]
I32Array = npt.NDArray[np.int32]


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


def _little(dtype: type) -> np.dtype[Any]:
    return np.dtype(dtype).newbyteorder("<")


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
        self._ops.write(np.ascontiguousarray(ops, dtype=_little(np.int32)).data.cast("B"))
        raw = np.ascontiguousarray(value).view(np.int64)
        self._value.write(np.ascontiguousarray(raw, dtype=_little(np.int64)).data.cast("B"))
        self.n_ops += k

    def append_row_ptr(self, row_ptr: IntArray) -> None:
        """Append entries of the trace-operation -> program-row map (global rows)."""
        arr = np.ascontiguousarray(row_ptr, dtype=_little(np.int64))
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
        data = np.ascontiguousarray(entries, dtype=_little(np.int32))
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
            np.save(self.tmp / "rank_ptr.npy", np.asarray(rank_ptr, dtype=_little(np.int64)))
            np.save(self.tmp / "reduce_rows.npy", np.asarray(reduce_rows, dtype=_little(np.int64)))
            np.save(
                self.tmp / "reduce_bytes.npy", np.asarray(reduce_bytes, dtype=_little(np.float64))
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
        header = {"descr": _little(dtype).str, "fortran_order": False, "shape": (n,)}
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


_META_INT = ("n_ranks", "n_ops", "n_requests", "n_marks", "n_wait", "n_trace_ops")
_META_KEYS: tuple[str, ...] = ("version", *_META_INT, "call_names", "collectives", "algorithms")
_META_KEYS += ("nonblocking_collectives", "source", "format", "unsupported", "notes")


def _meta(path: Path) -> dict[str, Any]:
    """``meta.json`` of ``path``, checked key by key."""
    file = path / "meta.json"
    try:
        meta = json.loads(file.read_text())
    except FileNotFoundError:
        raise ProgramFileError(path, "meta.json", "is missing (not a program file)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProgramFileError(file, "meta.json", f"is not readable JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ProgramFileError(file, "meta.json", f"holds {type(meta).__name__}, expected object")
    for key in _META_KEYS:
        if key not in meta:
            raise ProgramFileError(file, key, "is missing")
    if meta["version"] != FORMAT_VERSION:
        raise ProgramFileError(
            file, "version", f"is {meta['version']!r}, expected {FORMAT_VERSION}"
        )
    for key in (*_META_INT, "nonblocking_collectives"):
        value = meta[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ProgramFileError(file, key, f"is {value!r}, expected an integer >= 0")
    if meta["n_ranks"] < 1:
        raise ProgramFileError(file, "n_ranks", f"is {meta['n_ranks']}, expected >= 1")
    for key in ("n_requests", "n_wait", "n_marks"):
        if meta[key] > INT32_MAX:
            raise ProgramFileError(
                file, key, f"is {meta[key]}, beyond the engine's limit {INT32_MAX}"
            )
    for key in ("call_names", "notes"):
        value = meta[key]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ProgramFileError(file, key, f"is {value!r}, expected a list of strings")
    for key in ("source", "format"):
        if not isinstance(meta[key], str):
            raise ProgramFileError(file, key, f"is {meta[key]!r}, expected a string")
    for key in ("collectives", "unsupported"):
        value = meta[key]
        if not isinstance(value, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values()
        ):
            raise ProgramFileError(file, key, f"is {value!r}, expected {{name: count}}")
    algs = meta["algorithms"]
    if not isinstance(algs, dict) or not all(
        isinstance(v, list) and all(isinstance(a, str) for a in v) for v in algs.values()
    ):
        raise ProgramFileError(file, "algorithms", f"is {algs!r}, expected {{name: [names]}}")
    return meta


def read_member(path: Path, name: str, dtype: type, length: int | None) -> npt.NDArray[Any]:
    """A checked ``.npy`` member: 1-D, of ``dtype``, ``length`` entries (None: any)."""
    file = path / name
    try:
        arr = np.load(file, allow_pickle=False)
    except FileNotFoundError:
        raise ProgramFileError(path, name, "is missing") from None
    except (OSError, ValueError, EOFError) as exc:
        raise ProgramFileError(file, name, f"is not a readable .npy array ({exc})") from None
    if arr.ndim != 1 or arr.dtype != np.dtype(dtype):
        raise ProgramFileError(
            file, name, f"is {arr.dtype} of shape {arr.shape}, expected 1-D {np.dtype(dtype)}"
        )
    if length is not None and arr.shape[0] != length:
        raise ProgramFileError(file, name, f"has {arr.shape[0]} entries, expected {length}")
    return np.ascontiguousarray(arr, dtype=np.dtype(dtype))


class ProgramFile:
    """A program file opened read-only (see the module docstring for the format).

    Holds ``rank_ptr`` and the wait list; rows are read on demand (:meth:`read_rows`).

    Attributes
    ----------
    path
        The program file directory.
    n_ranks, n_ops, n_requests, n_marks, n_wait, n_trace_ops
        Sizes of the program and of its trace.
    call_names
        MPI call names indexed by the rows' ``call`` column.
    rank_ptr, wait_list
        int64 ``(n_ranks + 1,)`` and int32 ``(n_wait,)``.
    collectives, algorithms, nonblocking_collectives
        As :class:`~mpiuq.simulator.lowering.lower.Lowered`.
    facts
        The trace facts (:class:`TraceFacts`).
    """

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        self.path = path
        self.n_ranks: int = meta["n_ranks"]
        self.n_ops: int = meta["n_ops"]
        self.n_requests: int = meta["n_requests"]
        self.n_marks: int = meta["n_marks"]
        self.n_wait: int = meta["n_wait"]
        self.n_trace_ops: int = meta["n_trace_ops"]
        self.call_names: tuple[str, ...] = tuple(meta["call_names"])
        self.collectives: dict[str, int] = dict(meta["collectives"])
        self.algorithms: dict[str, list[str]] = {k: list(v) for k, v in meta["algorithms"].items()}
        self.nonblocking_collectives: int = meta["nonblocking_collectives"]
        self.facts = TraceFacts(
            source=meta["source"],
            format=meta["format"],
            n_trace_ops=meta["n_trace_ops"],
            unsupported=dict(meta["unsupported"]),
            notes=tuple(meta["notes"]),
        )
        self.rank_ptr: IntArray = read_member(path, "rank_ptr.npy", np.int64, self.n_ranks + 1)
        rp = self.rank_ptr
        if rp[0] != 0 or rp[-1] != self.n_ops or np.any(np.diff(rp) < 0):
            raise ProgramFileError(
                path / "rank_ptr.npy",
                "rank_ptr.npy",
                f"runs {int(rp[0])}..{int(rp[-1])} (non-decreasing: "
                f"{bool(np.all(np.diff(rp) >= 0))}), expected non-decreasing 0..{self.n_ops}",
            )
        self.wait_list: I32Array = read_member(path, "wait_list.npy", np.int32, self.n_wait)
        self._fds: dict[str, int] = {}
        try:
            for name, size in (
                ("ops.bin", self.n_ops * ROW_BYTES),
                ("value.bin", self.n_ops * 8),
                ("row_ptr.bin", (self.n_trace_ops + 1) * 8),
            ):
                try:
                    fd = os.open(path / name, os.O_RDONLY)
                except FileNotFoundError:
                    raise ProgramFileError(path, name, "is missing") from None
                self._fds[name] = fd
                actual = os.fstat(fd).st_size
                if actual != size:
                    raise ProgramFileError(
                        path / name,
                        name,
                        f"holds {actual} bytes, expected {size} "
                        f"({'truncated' if actual < size else 'too long'})",
                    )
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(cls, path: str | Path) -> ProgramFile:
        """Open and check the program file ``path``.

        Raises
        ------
        ProgramFileError
            If a member is missing, malformed, of the wrong size, or inconsistent
            with ``meta.json``; the message names the file, key and bad value.
        """
        p = Path(path)
        if not p.is_dir():
            raise ProgramFileError(p, "path", "is not a program file directory")
        return cls(p, _meta(p))

    def close(self) -> None:
        """Close the member files (idempotent)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> ProgramFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _pread_into(self, name: str, out: npt.NDArray[Any], offset: int) -> None:
        view = out.data.cast("B")
        fd = self._fds.get(name)
        if fd is None:
            raise ProgramFileError(self.path, name, "is closed")
        done = 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], offset + done)
            if got <= 0:
                raise ProgramFileError(
                    self.path / name, name, f"ends at byte {offset + done}: truncated"
                )
            done += got
        if sys.byteorder != "little":  # pragma: no cover - the files are little-endian
            out.byteswap(inplace=True)

    def read_rows(self, start: int, stop: int, ops_out: I32Array, value_out: IntArray) -> None:
        """Fill ``ops_out[:stop - start]`` and ``value_out[:stop - start]`` with rows ``[start, stop)``.

        ``value_out`` may be any 8-byte C-contiguous array (int64 bytes, float64 seconds:
        the raw 8 bytes of each row are copied).
        """
        if not 0 <= start <= stop <= self.n_ops:
            raise ProgramFileError(self.path, "rows", f"[{start}, {stop}) outside 0..{self.n_ops}")
        k = stop - start
        if (
            ops_out.dtype != np.int32
            or ops_out.ndim != 2
            or ops_out.shape[1] != OPS_WIDTH
            or ops_out.shape[0] < k
            or not ops_out.flags.c_contiguous
        ):
            raise ValueError(
                f"ops_out must be C-contiguous int32 (>= {k}, {OPS_WIDTH}), got "
                f"{ops_out.dtype} {ops_out.shape}"
            )
        if (
            value_out.dtype.itemsize != 8
            or value_out.ndim != 1
            or value_out.shape[0] < k
            or not value_out.flags.c_contiguous
        ):
            raise ValueError(
                f"value_out must be a C-contiguous 8-byte column of >= {k} entries, got "
                f"{value_out.dtype} {value_out.shape}"
            )
        if k == 0:
            return
        self._pread_into("ops.bin", ops_out[:k], start * ROW_BYTES)
        self._pread_into("value.bin", value_out[:k], start * 8)

    def read_row_ptr(self, start: int, stop: int) -> IntArray:
        """Entries ``[start, stop)`` of the trace-operation -> program-row map."""
        if not 0 <= start <= stop <= self.n_trace_ops + 1:
            raise ProgramFileError(
                self.path, "row_ptr", f"[{start}, {stop}) outside 0..{self.n_trace_ops + 1}"
            )
        out = np.empty(stop - start, dtype=np.int64)
        if stop > start:
            self._pread_into("row_ptr.bin", out, start * 8)
        return out

    def to_program(self, *, mapped: bool = False) -> Program:
        """The whole program in memory (tests, small traces); not validated again.
        ``mapped``: the rows memory-mapped copy-on-write instead of read (no copy; writes
        stay in this process; the file must not be truncated meanwhile)."""
        n, path = self.n_ops, self.path
        if mapped and n and sys.byteorder == "little":
            ops = np.asarray(np.memmap(path / "ops.bin", np.int32, "c", 0, (n, OPS_WIDTH)))
            value = np.asarray(np.memmap(path / "value.bin", np.int64, "c", 0, n))
        else:
            ops = np.empty((self.n_ops, OPS_WIDTH), dtype=np.int32)
            value = np.empty(self.n_ops, dtype=np.int64)
            self.read_rows(0, self.n_ops, ops, value)
        return Program(
            n_ranks=self.n_ranks,
            rank_ptr=self.rank_ptr.copy(),
            ops=ops,
            nbytes=value,
            seconds=value.view(np.float64),
            wait_list=self.wait_list.astype(np.int64),
            n_requests=self.n_requests,
            n_marks=self.n_marks,
            call_names=self.call_names,
        )

    def to_lowered(self, *, mapped: bool = False) -> Lowered:
        """The whole lowered trace in memory (the program, the row map; see to_program)."""
        return Lowered(
            program=self.to_program(mapped=mapped),
            row_ptr=self.read_row_ptr(0, self.n_trace_ops + 1),
            collectives=dict(self.collectives),
            algorithms={k: list(v) for k, v in self.algorithms.items()},
            nonblocking_collectives=self.nonblocking_collectives,
            reduce_rows=read_member(self.path, "reduce_rows.npy", np.int64, None),
            reduce_bytes=read_member(self.path, "reduce_bytes.npy", np.float64, None),
        )
