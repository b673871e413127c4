"""Append-only journal of a design run's finished chunks, safe against a kill at any byte.

A design store's HDF5 file is only ever written whole (created, then consolidated, each
time through a rename), because an HDF5 file killed in the middle of a metadata flush
can be unreadable.  Results arriving in between are appended to ``<store>.journal``:

* a header: :data:`MAGIC`, then ``<u4`` length + UTF-8 JSON ``{"fingerprint",
  "n_points", "n_outputs", "output_names"}``, then ``<u4`` CRC-32 of the JSON;
* records: ``b"REC1"``, ``<u8`` point count ``k``, ``k`` int64 point indices, ``k *
  n_outputs`` float64 outputs (row-major), ``<u4`` CRC-32 of everything before it in
  the record.

Each record is written with one ``write`` call.  A reader accepts the longest prefix of
whole records with good checksums; a record cut by a kill (or damaged) ends the journal
there and its points are computed again.  Float outputs are stored bit for bit, so a
resumed run's results are identical to an uninterrupted one's.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"MPIUQ-DESIGN-JOURNAL-1\n"
_RECORD_MAGIC = b"REC1"
_U4 = struct.Struct("<I")
_RECORD_HEAD = struct.Struct("<4sQ")
#: Largest journal header JSON accepted, bytes.
_MAX_HEADER_BYTES = 1 << 24


def journal_path(store: Path) -> Path:
    """``runs.h5`` -> ``runs.h5.journal``."""
    return store.with_name(store.name + ".journal")


@dataclass(frozen=True, slots=True)
class JournalHeader:
    """What a journal belongs to: the store's fingerprint, its size and its outputs."""

    fingerprint: str
    n_points: int
    n_outputs: int
    output_names: tuple[str, ...]

    def encode(self) -> bytes:
        """Header bytes (see the module docstring)."""
        doc = {
            "fingerprint": self.fingerprint,
            "n_points": self.n_points,
            "n_outputs": self.n_outputs,
            "output_names": list(self.output_names),
        }
        text = json.dumps(doc).encode("utf-8")
        return MAGIC + _U4.pack(len(text)) + text + _U4.pack(zlib.crc32(text))


@dataclass(frozen=True, slots=True)
class JournalContent:
    """The valid part of a journal.

    Attributes
    ----------
    header
        The header, or None if the file has no valid header.
    indices, outputs
        Point indices (int64, shape (k,)) and their outputs (float64, shape (k, m)) of
        every valid record, in file order.
    valid_bytes
        Length of the valid prefix (header and whole records); the rest is a cut or
        damaged tail.
    total_bytes
        Length of the file.
    """

    header: JournalHeader | None
    indices: np.ndarray
    outputs: np.ndarray
    valid_bytes: int
    total_bytes: int


def encode_record(indices: np.ndarray, outputs: np.ndarray) -> bytes:
    """Record bytes for ``outputs[i]`` of the points ``indices[i]`` (see the module docstring)."""
    idx = np.ascontiguousarray(indices, dtype="<i8")
    y = np.ascontiguousarray(outputs, dtype="<f8")
    body = _RECORD_HEAD.pack(_RECORD_MAGIC, idx.size) + idx.tobytes() + y.tobytes()
    return body + _U4.pack(zlib.crc32(body))


def read_journal(path: Path) -> JournalContent:
    """Read the valid prefix of a journal (a missing file reads as empty).

    Never raises for damaged content: a bad header gives ``header=None``; a bad record ends
    the valid prefix.
    """
    data = path.read_bytes() if path.exists() else b""
    empty = JournalContent(None, np.empty(0, np.int64), np.empty((0, 0)), 0, len(data))
    header, pos = _decode_header(data)
    if header is None:
        return empty
    m, n_points = header.n_outputs, header.n_points
    idx_parts: list[np.ndarray] = []
    y_parts: list[np.ndarray] = []
    while pos + _RECORD_HEAD.size <= len(data):
        magic, k = _RECORD_HEAD.unpack_from(data, pos)
        if magic != _RECORD_MAGIC or not 0 < k <= n_points:
            break
        end = pos + _RECORD_HEAD.size + 8 * k * (1 + m)
        if end + _U4.size > len(data):
            break
        (crc,) = _U4.unpack_from(data, end)
        if zlib.crc32(data[pos:end]) != crc:
            break
        start = pos + _RECORD_HEAD.size
        idx = np.frombuffer(data, dtype="<i8", count=k, offset=start).astype(np.int64)
        if idx.min() < 0 or idx.max() >= n_points:
            break
        y = np.frombuffer(data, dtype="<f8", count=k * m, offset=start + 8 * k)
        idx_parts.append(idx)
        y_parts.append(y.reshape(k, m).astype(np.float64))
        pos = end + _U4.size
    indices = np.concatenate(idx_parts) if idx_parts else np.empty(0, np.int64)
    outputs = np.concatenate(y_parts) if y_parts else np.empty((0, m))
    return JournalContent(header, indices, outputs, pos, len(data))


def _decode_header(data: bytes) -> tuple[JournalHeader | None, int]:
    start = len(MAGIC) + _U4.size
    if len(data) < start or not data.startswith(MAGIC):
        return None, 0
    (length,) = _U4.unpack_from(data, len(MAGIC))
    end = start + length
    if length > _MAX_HEADER_BYTES or end + _U4.size > len(data):
        return None, 0
    text = data[start:end]
    if zlib.crc32(text) != _U4.unpack_from(data, end)[0]:
        return None, 0
    try:
        doc = json.loads(text.decode("utf-8"))
        header = JournalHeader(
            str(doc["fingerprint"]),
            int(doc["n_points"]),
            int(doc["n_outputs"]),
            tuple(str(n) for n in doc["output_names"]),
        )
    except (ValueError, KeyError, TypeError):
        return None, 0
    if header.n_points < 1 or header.n_outputs < 1 or len(header.output_names) != header.n_outputs:
        return None, 0
    return header, end + _U4.size


class JournalWriter:
    """Appends records to a journal; every record goes to the file in one ``write``.

    Opening truncates the file to ``valid_bytes`` (dropping a cut tail) or, with
    ``valid_bytes=0``, starts a new journal with ``header``.
    """

    def __init__(self, path: Path, header: JournalHeader, valid_bytes: int) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
        try:
            if valid_bytes > 0:
                os.ftruncate(self._fd, valid_bytes)
                os.lseek(self._fd, valid_bytes, os.SEEK_SET)
            else:
                os.ftruncate(self._fd, 0)
                self._write_all(header.encode())
        except BaseException:
            os.close(self._fd)
            raise

    def append(self, indices: Sequence[int] | np.ndarray, outputs: np.ndarray) -> None:
        """Append one record (raises :class:`OSError` if the write fails)."""
        self._write_all(encode_record(np.asarray(indices), outputs))

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
