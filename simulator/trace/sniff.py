"""Byte-level signatures of the built-in trace formats (no reader is imported)."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "DUMPI_MAGIC",
    "HDF5_SIGNATURE",
    "is_dumpi_meta",
    "is_hdf5",
    "is_otf2_anchor",
    "read_at",
]

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
DUMPI_MAGIC = b"\xff\xaa\xddDUMPI"
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096)


def read_at(path: Path, offset: int, size: int) -> bytes:
    """Up to ``size`` bytes of ``path`` from ``offset`` (empty if it cannot be read)."""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read(size)
    except OSError:
        return b""


def is_hdf5(path: Path) -> bool:
    """True when the file holds the HDF5 signature at one of its allowed offsets."""
    return any(read_at(path, off, 8) == HDF5_SIGNATURE for off in _HDF5_OFFSETS)


def is_otf2_anchor(path: Path) -> bool:
    """True when the file starts with the header of an OTF2 anchor file."""
    head = read_at(path, 0, 7)
    return len(head) == 7 and head[0] == 3 and head[1:2] in (b"B", b"L") and head[2:] == b"OTF2\0"


def is_dumpi_meta(path: Path) -> bool:
    """True for a small text file of ``key=value`` lines naming numprocs and fileprefix."""
    head = read_at(path, 0, 64 * 1024)
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return False
    keys = {ln.partition("=")[0].strip() for ln in text.splitlines() if "=" in ln}
    return {"numprocs", "fileprefix"} <= keys
