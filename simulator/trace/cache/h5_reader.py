"""Reading mpiuq's own HDF5 trace files (written by :func:`~.cache.save_trace`).

The file is checked before anything large is read: the format version and the
types of the attributes, then every dataset's kind (a dataset, not a group), rank
(1-D), dtype (integer or float as expected) and length (the per-operation columns
all as long as ``kind``, ``rank_ptr`` one longer than ``n_ranks``, sizes within
:mod:`.limits`). A dataset may also not declare far more data than the file
stores (a damaged header declaring 10^12 elements would otherwise be read as
terabytes of fill values). The columns are then validated by
:meth:`Trace.validate`. Any problem is a :class:`TraceFormatError` naming the file
and the dataset or attribute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from mpiuq.simulator.trace.cache.h5_format import FORMAT_VERSION
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS, Trace
from mpiuq.simulator.trace.limits import MAX_LINES, MAX_RANKS

__all__ = ["FORMAT_VERSION", "TraceHeader", "load_trace_h5", "open_trace_h5", "read_column"]

#: gzip never compresses better than about 1032:1; a dataset declaring more bytes
#: than this many times what it stores (plus a small allowance) is damaged.
MAX_COMPRESSION_RATIO = 1100
_SMALL = 1 << 20


class _Bad(Exception):
    """Internal: turned into a TraceFormatError naming the file."""


def _attr_int(f: h5py.File, key: str, low: int, high: int) -> int:
    if key not in f.attrs:
        raise _Bad(f"attribute {key!r} is missing")
    value = f.attrs[key]
    if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
        raise _Bad(f"attribute {key!r} is {value!r}, expected an integer")
    if not low <= int(value) <= high:
        raise _Bad(f"attribute {key}={int(value)} outside {low}..{high}")
    return int(value)


def _attr_str(f: h5py.File, key: str) -> str:
    if key not in f.attrs:
        raise _Bad(f"attribute {key!r} is missing")
    value = f.attrs[key]
    if isinstance(value, bytes | np.bytes_):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise _Bad(f"attribute {key!r} is {type(value).__name__}, expected a string")
    return value


def _attr_json(f: h5py.File, key: str, kind: type) -> Any:
    try:
        value = json.loads(_attr_str(f, key))
    except json.JSONDecodeError as exc:
        raise _Bad(f"attribute {key!r} is not JSON ({exc})") from None
    if not isinstance(value, kind):
        raise _Bad(f"attribute {key!r} holds {type(value).__name__}, expected {kind.__name__}")
    return value


def _dataset(f: h5py.File, name: str, dtype: np.dtype, length: int | None) -> h5py.Dataset:
    obj = f.get(name)
    if not isinstance(obj, h5py.Dataset):
        raise _Bad(f"dataset {name!r} is missing" if obj is None else f"{name!r} is not a dataset")
    if obj.ndim != 1:
        raise _Bad(f"dataset {name!r} has shape {obj.shape}, expected 1-D")
    if obj.dtype.kind not in ("f" if dtype.kind == "f" else "iub"):
        raise _Bad(f"dataset {name!r} has dtype {obj.dtype}, expected {dtype}")
    n = int(obj.shape[0])
    if length is not None and n != length:
        raise _Bad(f"dataset {name!r} has {n} entries, expected {length}")
    if n > MAX_LINES:
        raise _Bad(f"dataset {name!r} has {n} entries, more than the {MAX_LINES} allowed")
    stored = obj.id.get_storage_size()
    declared = n * obj.dtype.itemsize
    if declared > stored * MAX_COMPRESSION_RATIO + _SMALL:
        raise _Bad(
            f"dataset {name!r} declares {declared} bytes but the file stores {stored}: "
            "damaged or truncated"
        )
    return obj


def _column(dataset: h5py.Dataset, path: Path, dtype: np.dtype) -> np.ndarray:
    """A dataset's values: memory-mapped (copy on write) when stored contiguously as ``dtype``.

    Mapping the cache file's pages costs about a third of reading them into fresh
    memory (0.016 s instead of 0.04-0.1 s for a million operations); compressed,
    chunked or differently typed datasets are read.
    """
    offset = dataset.id.get_offset() if dataset.chunks is None else None
    if offset is None or dataset.dtype != dtype or dataset.size == 0:
        return _as_dtype(np.asarray(dataset[...]), dtype, dataset.name)
    return np.asarray(np.memmap(path, dtype=dtype, mode="c", offset=offset, shape=dataset.shape))


def _as_dtype(data: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """``data`` as ``dtype`` (a same-kind cast that keeps every integer's value)."""
    if data.dtype == dtype:
        return data
    if not np.can_cast(data.dtype, dtype, casting="same_kind"):
        raise _Bad(f"dataset {name!r} has dtype {data.dtype}, expected {dtype}")
    converted = data.astype(dtype)
    if data.dtype.kind in "iu" and not np.array_equal(converted, data):
        raise _Bad(f"dataset {name!r} holds values beyond {dtype}")
    return converted


@dataclass(frozen=True)
class TraceHeader:
    """The attributes and the checked (unread) datasets of an mpiuq trace file.

    ``datasets`` maps every column of :data:`OP_COLUMNS` and :data:`AUX_COLUMNS` to
    its dataset (checked for kind, rank, dtype kind, length and stored size; the
    values are not read). Read blocks of them with :func:`read_column`.
    """

    path: Path
    format: str
    source: str
    n_ranks: int
    n_requests: int
    call_names: tuple[str, ...]
    unsupported: dict[str, int]
    notes: tuple[str, ...]
    n_ops: int
    datasets: dict[str, h5py.Dataset]


def _header(f: h5py.File, p: Path) -> TraceHeader:
    version = _attr_int(f, "format_version", 0, 1 << 30)
    if version != FORMAT_VERSION:
        raise TraceFormatError(
            f"trace file format version {version}, expected {FORMAT_VERSION}", file=str(p)
        )
    n_ranks = _attr_int(f, "n_ranks", 1, MAX_RANKS)
    n_requests = _attr_int(f, "n_requests", 0, MAX_LINES)
    call_names = _attr_json(f, "call_names", list)
    unsupported = _attr_json(f, "unsupported", dict)
    notes = _attr_json(f, "notes", list)
    if not all(isinstance(x, str) for x in (*call_names, *notes)):
        raise _Bad("attributes 'call_names' and 'notes' must hold strings")
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in unsupported.items()):
        raise _Bad("attribute 'unsupported' must map names to integer counts")
    n_ops = _dataset(f, "kind", OP_COLUMNS["kind"], None).shape[0]
    sets = {name: _dataset(f, name, dt, n_ops) for name, dt in OP_COLUMNS.items()}
    sets["rank_ptr"] = _dataset(f, "rank_ptr", AUX_COLUMNS["rank_ptr"], n_ranks + 1)
    for name in ("wait_reqs", "vcounts", "comm_ptr", "comm_members"):
        sets[name] = _dataset(f, name, AUX_COLUMNS[name], None)
    return TraceHeader(
        path=p,
        format=_attr_str(f, "format"),
        source=_attr_str(f, "source"),
        n_ranks=n_ranks,
        n_requests=n_requests,
        call_names=tuple(call_names),
        unsupported={str(k): int(v) for k, v in unsupported.items()},
        notes=tuple(notes),
        n_ops=int(n_ops),
        datasets=sets,
    )


def _load(f: h5py.File, p: Path) -> Trace:
    head = _header(f, p)
    columns = {**OP_COLUMNS, **AUX_COLUMNS}
    arrays = {name: _column(ds, p, columns[name]) for name, ds in head.datasets.items()}
    return Trace(
        format=head.format,
        source=head.source,
        n_ranks=head.n_ranks,
        n_requests=head.n_requests,
        call_names=head.call_names,
        unsupported=head.unsupported,
        notes=head.notes,
        **arrays,
    )


@contextmanager
def _named(p: Path) -> Iterator[None]:
    """Turn any problem reading ``p`` into a :class:`TraceFormatError` naming it."""
    try:
        yield
    except TraceFormatError:
        raise
    except _Bad as exc:
        raise TraceFormatError(f"not a valid mpiuq trace file: {exc}", file=str(p)) from None
    except (OSError, KeyError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
        raise TraceFormatError(
            f"not a readable mpiuq trace HDF5 file ({type(exc).__name__}: {exc})", file=str(p)
        ) from exc


@contextmanager
def open_trace_h5(path: str | Path) -> Iterator[TraceHeader]:
    """Open a trace file for reading column blocks (:func:`read_column`); nothing large is read.

    Raises
    ------
    TraceFormatError
        If the file is not a readable trace file of this :data:`FORMAT_VERSION`,
        naming the file and the bad attribute or dataset.
    """
    p = Path(path)
    with _named(p):
        f = h5py.File(p, "r")
    try:
        with _named(p):
            head = _header(f, p)
        yield head
    finally:
        f.close()


def read_column(head: TraceHeader, name: str, start: int, stop: int) -> np.ndarray:
    """Entries ``[start, stop)`` of column ``name`` as its :class:`Trace` dtype (read, not mapped).

    Raises
    ------
    TraceFormatError
        If the data cannot be read (damaged file) or does not fit the column's dtype.
    """
    dataset = head.datasets[name]
    with _named(head.path):
        return _as_dtype(np.asarray(dataset[start:stop]), {**OP_COLUMNS, **AUX_COLUMNS}[name], name)


def load_trace_h5(path: str | Path) -> Trace:
    """Read a trace written by :func:`~.cache.save_trace` (checked, then validated).

    Raises
    ------
    TraceFormatError
        If the file is not a readable trace file of this :data:`FORMAT_VERSION`,
        naming the file and the bad attribute or dataset.
    """
    p = Path(path)
    with _named(p), h5py.File(p, "r") as f:
        trace = _load(f, p)
    try:
        trace.validate()
    except TraceFormatError as exc:  # name this file, not the trace it was read from
        raise TraceFormatError(exc.reason, file=str(p), record=exc.record) from None
    return trace
