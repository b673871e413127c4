"""The program file's reader: a lowered program on disk, read back a slice of rows at a time.

A lowered trace (:class:`~mpiuq.simulator.lowering.lowered.Lowered`) too large to hold in
memory is written by the block lowering (:mod:`mpiuq.simulator.lowering.blocks`, through
:mod:`.file_writer`) and read back here by the windowed kernel a few rows per rank at a
time. The format (version 1: a directory ``NAME.mpiuqprog/``) is described in
:mod:`.file_format`.

Reads use ``os.pread`` into the caller's buffers (no memory map: the resident size of a
replay counts exactly what it holds; ``to_program(mapped=True)`` maps the rows instead).
Every problem with a file is a :class:`ProgramFileError` naming the file, key and value.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import OPS_WIDTH
from mpiuq.simulator.lowering.lowered import Lowered
from mpiuq.simulator.program.file_format import (
    FORMAT_VERSION,
    INT32_MAX,
    ROW_BYTES,
    SUFFIX,
    ProgramFileError,
    TraceFacts,
)
from mpiuq.simulator.program.file_writer import ProgramFileWriter, write_program_file
from mpiuq.simulator.program.table import Program

#: The reader (:class:`ProgramFile`) is defined here; the format's names and the writers
#: are re-exported from :mod:`.file_format` and :mod:`.file_writer`.
__all__ = [
    "FORMAT_VERSION",
    "SUFFIX",
    "ProgramFile",
    "ProgramFileError",
    "ProgramFileWriter",
    "TraceFacts",
    "write_program_file",
]

IntArray = npt.NDArray[np.int64]
I32Array = npt.NDArray[np.int32]


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
