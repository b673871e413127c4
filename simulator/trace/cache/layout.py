"""The parse cache's entries read without h5py: their columns memory-mapped by a layout.

An entry of the parse cache is a trace file written by :func:`~.cache.save_trace`
without compression, so every column is stored contiguously at a fixed offset.
:func:`write_layout` records, beside the entry (``<entry>.layout.json``), the entry's
size and modification time, its attributes, and every column's offset, dtype and
length; :func:`load_mapped` then maps the columns from the entry with NumPy alone.
A second ``mpiuq replay`` of a trace so neither imports h5py nor opens the file with
it: about 40 ms of CPU time and 10 MiB of resident memory (h5py and libhdf5) less.

The layout also carries the entry's size and content digests (one per 4 KiB chunk) and
is sealed by its own
(:mod:`mpiuq.simulator.checksums`): :func:`verify_entry` checks both before anything of
the entry is read, by NumPy or by h5py (the HDF5 library can hang or crash on a damaged
file), and a cache entry that fails (or has no layout: a run killed between the two
writes) is deleted and the trace parsed again (:func:`~.read.read_located`). A layout
whose columns do not fit the representation (a dtype or length other than the
representation's, a column beyond the end of the file, an attribute of another type)
makes :func:`load_mapped` answer ``None``, and the verified entry is read with h5py and
its checks. A mapped trace is validated like any other (:meth:`~.ir.Trace.validate`).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.simulator.checksums import (
    CHUNK_BYTES,
    HASH_NAME,
    ChecksumError,
    damaged_bytes,
    digest_fits,
    file_digest,
    first_bad_chunk,
    read_sealed_json,
    seal_text,
)
from mpiuq.simulator.trace.cache.h5_format import FORMAT_VERSION
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS, Trace
from mpiuq.simulator.trace.limits import MAX_LINES, MAX_RANKS

__all__ = ["discard_entry", "layout_path", "load_mapped", "verify_entry", "write_layout"]

#: The trace file's attributes a layout repeats, and their JSON types.
_ATTRS: dict[str, type] = {
    "format": str,
    "source": str,
    "n_ranks": int,
    "n_requests": int,
    "call_names": list,
    "unsupported": dict,
    "notes": list,
}


def layout_path(entry: Path) -> Path:
    """The layout file of cache entry ``entry``."""
    return entry.with_name(entry.name + ".layout.json")


def write_layout(entry: Path, trace: Trace) -> None:
    """Write the layout of ``entry``, just written from ``trace`` by ``save_trace``.

    Writes nothing when a column is not stored contiguously as the representation's
    dtype (a compressed file): such an entry is read with h5py.
    """
    import h5py

    columns: dict[str, list[Any]] = {}
    with h5py.File(entry, "r") as f:
        for name, dtype in {**OP_COLUMNS, **AUX_COLUMNS}.items():
            ds = f[name]
            offset = ds.id.get_offset() if ds.chunks is None else None
            if ds.size and (offset is None or ds.dtype != dtype):
                return
            columns[name] = [int(offset or 0), dtype.str, int(ds.shape[0])]
    size, digest = file_digest(entry)
    doc = {
        "format_version": FORMAT_VERSION,
        "size": size,
        "hash": HASH_NAME,
        "chunk_bytes": CHUNK_BYTES,
        "chunks": digest,
        "attrs": {
            "format": trace.format,
            "source": trace.source,
            "n_ranks": trace.n_ranks,
            "n_requests": trace.n_requests,
            "call_names": list(trace.call_names),
            "unsupported": dict(trace.unsupported),
            "notes": list(trace.notes),
        },
        "columns": columns,
    }
    path = layout_path(entry)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        tmp.write_text(seal_text(json.dumps(doc, allow_nan=False)), encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _column(entry: Path, spec: Any, dtype: np.dtype, length: int, size: int) -> np.ndarray:
    """One column mapped (copy on write) from ``entry``; ValueError if ``spec`` does not
    describe ``length`` values of ``dtype`` inside the file's ``size`` bytes."""
    offset, dtype_str, n = spec
    if np.dtype(dtype_str) != dtype or type(offset) is not int or type(n) is not int:
        raise ValueError("column spec")
    if n != length or offset < 0 or offset + n * dtype.itemsize > size:
        raise ValueError("column outside the file")
    if n == 0:
        return np.zeros(0, dtype=dtype)
    mapped = np.asarray(np.memmap(entry, dtype=dtype, mode="c", offset=offset, shape=(n,)))
    if offset % dtype.itemsize:
        # HDF5 packs small datasets at any byte: a column off its type's alignment is
        # copied (compiled loops are specialised on alignment, and aligned is the norm)
        return np.array(mapped)
    return mapped


def verify_entry(entry: Path) -> dict[str, Any]:
    """The layout of cache entry ``entry`` once the layout's seal and the entry's size and
    content digest are checked.

    Raises
    ------
    ChecksumError
        If the layout is missing, damaged or of another version, or the entry does not
        match its recorded size or digest (names the file).
    """
    path = layout_path(entry)
    doc = read_sealed_json(path, "is missing: the entry cannot be verified")
    if (
        not isinstance(doc, dict)
        or doc.get("format_version") != FORMAT_VERSION
        or doc.get("hash") != HASH_NAME
        or doc.get("chunk_bytes") != CHUNK_BYTES
        or not digest_fits(doc.get("size"), doc.get("chunks"))
    ):  # an earlier layout (one digest for the whole entry) is refused too: rebuilt
        raise ChecksumError(
            path,
            f"is not a version {FORMAT_VERSION} layout with {HASH_NAME} digests of "
            f"{CHUNK_BYTES}-byte chunks (damaged, or of an earlier version)",
        )
    try:  # the size first: a cut entry is named without hashing it
        size = entry.stat().st_size
        if size != doc.get("size"):
            raise ChecksumError(
                entry, f"holds {size} bytes, expected {doc.get('size')!r} (truncated)"
            )
        bad = first_bad_chunk(entry, doc["chunks"])  # stops at the first damaged chunk
    except OSError as exc:
        raise ChecksumError(entry, f"cannot be read ({exc.strerror})") from None
    if bad is not None:
        raise ChecksumError(entry, f"does not match its checksum (damaged) in {damaged_bytes(bad)}")
    return doc


def discard_entry(entry: Path) -> None:
    """Delete a cache entry and its layout (a damaged or stale entry: parsed again); a
    cache that cannot be changed keeps them (they are verified, so never used)."""
    for path in (entry, layout_path(entry)):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def load_mapped(entry: Path, doc: dict[str, Any] | None = None) -> Trace | None:
    """The trace of cache entry ``entry`` with its columns mapped by its layout ``doc``
    (read and verified when not given: :func:`verify_entry`); ``None`` when the layout
    does not fit the entry (read the verified entry with :func:`~.cache.h5_reader.load_trace_h5`
    then).

    Raises
    ------
    ChecksumError
        If ``doc`` is not given and the entry fails :func:`verify_entry`.
    TraceFormatError
        If the mapped trace fails validation, naming the entry.
    """
    if doc is None:
        doc = verify_entry(entry)
    try:
        size = int(doc["size"])
        attrs = doc["attrs"]
        if set(attrs) != set(_ATTRS) or not all(type(attrs[k]) is t for k, t in _ATTRS.items()):
            return None
        n_ranks, n_requests = attrs["n_ranks"], attrs["n_requests"]
        if not (1 <= n_ranks <= MAX_RANKS and 0 <= n_requests <= MAX_LINES):
            return None
        if not all(isinstance(x, str) for x in (*attrs["call_names"], *attrs["notes"])):
            return None
        unsupported = attrs["unsupported"]
        if not all(type(v) is int for v in unsupported.values()):
            return None
        columns = doc["columns"]
        n_ops = columns["kind"][2]
        if type(n_ops) is not int or not 0 <= n_ops <= MAX_LINES:
            return None
        lengths = {"rank_ptr": n_ranks + 1}
        arrays = {
            name: _column(entry, columns[name], dtype, n_ops, size)
            for name, dtype in OP_COLUMNS.items()
        }
        for name, dtype in AUX_COLUMNS.items():
            spec = columns[name]
            length = lengths.get(name, spec[2] if isinstance(spec, list) and spec else -1)
            if type(length) is not int or not 0 <= length <= MAX_LINES:
                return None
            arrays[name] = _column(entry, spec, dtype, length, size)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    trace = Trace(
        format=attrs["format"],
        source=attrs["source"],
        n_ranks=n_ranks,
        n_requests=n_requests,
        call_names=tuple(attrs["call_names"]),
        unsupported=dict(unsupported),
        notes=tuple(attrs["notes"]),
        **arrays,
    )
    try:
        trace.validate()
    except TraceFormatError as exc:  # name this file, not the trace it was read from
        raise TraceFormatError(exc.reason, file=str(entry), record=exc.record) from None
    return trace
