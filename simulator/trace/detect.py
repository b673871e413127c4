"""Recognising a trace's format from its content (file names are only hints).

* mpiuq HDF5 trace: the HDF5 signature ``\\x89HDF\\r\\n\\x1a\\n`` at byte 0 (or 512,
  1024, ... after a user block);
* DUMPI: a rank file starting with the magic ``ff aa dd 'DUMPI'``, or a ``.meta``
  text file of ``key=value`` lines naming ``numprocs`` and ``fileprefix``;
* OTF2: the anchor file, starting with an OTF2 buffer header (``03``, the byte
  order ``B`` or ``L``, then ``OTF2\\0``);
* SimGrid TI: text whose first line that is neither blank nor a comment is
  ``<rank> <action> ...``, or an index listing such files.

A directory is recognised by the files it holds (a DUMPI ``.meta``, an OTF2
anchor, TI files).
"""

from __future__ import annotations

from pathlib import Path

from mpiuq.simulator.trace.errors import UnsupportedTraceError
from mpiuq.simulator.trace.ti_files import first_content_line, index_lines, looks_like_ti

__all__ = [
    "DUMPI_MAGIC",
    "HDF5_SIGNATURE",
    "detect_format",
    "is_dumpi_meta",
    "is_otf2_anchor",
]

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
DUMPI_MAGIC = b"\xff\xaa\xddDUMPI"
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096)
_EXPECTED = (
    "expected an mpiuq HDF5 trace (HDF5 signature), a DUMPI trace (.meta with numprocs "
    "and fileprefix, or rank files starting with ff aa dd 'DUMPI'), an OTF2 archive "
    "(anchor file starting with the OTF2 header) or a SimGrid TI trace (lines "
    "'<rank> <action> [args]', or an index listing such files)"
)
_SUFFIX_HINTS = {
    ".h5": "an mpiuq HDF5 trace",
    ".hdf5": "an mpiuq HDF5 trace",
    ".meta": "a DUMPI .meta file",
    ".bin": "a DUMPI rank file",
    ".otf2": "an OTF2 anchor file",
}


def _read_at(path: Path, offset: int, size: int) -> bytes:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read(size)
    except OSError:
        return b""


def is_hdf5(path: Path) -> bool:
    """True when the file holds the HDF5 signature at one of its allowed offsets."""
    return any(_read_at(path, off, 8) == HDF5_SIGNATURE for off in _HDF5_OFFSETS)


def is_otf2_anchor(path: Path) -> bool:
    """True when the file starts with the header of an OTF2 anchor file."""
    head = _read_at(path, 0, 7)
    return len(head) == 7 and head[0] == 3 and head[1:2] in (b"B", b"L") and head[2:] == b"OTF2\0"


def is_dumpi_meta(path: Path) -> bool:
    """True for a small text file of ``key=value`` lines naming numprocs and fileprefix."""
    head = _read_at(path, 0, 64 * 1024)
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return False
    keys = {ln.partition("=")[0].strip() for ln in text.splitlines() if "=" in ln}
    return {"numprocs", "fileprefix"} <= keys


def _describe(path: Path) -> str:
    head = _read_at(path, 0, 16)
    line = first_content_line(path)
    hint = _SUFFIX_HINTS.get(path.suffix.lower())
    seen = f"it starts with {line[:60]!r}" if line else f"it starts with bytes {head.hex(' ')}"
    if hint:
        seen += f"; its suffix {path.suffix} suggests {hint}, but the content is not"
    return seen


def _detect_file(p: Path) -> str:
    if is_hdf5(p):
        return "hdf5"
    if _read_at(p, 0, 8) == DUMPI_MAGIC or is_dumpi_meta(p):
        return "dumpi"
    if is_otf2_anchor(p):
        return "otf2"
    if looks_like_ti(p) or _is_ti_index(p):
        return "ti"
    raise UnsupportedTraceError(f"unrecognised format: {p}: {_EXPECTED}; {_describe(p)}")


def detect_format(path: str | Path) -> str:
    """``"dumpi"``, ``"otf2"``, ``"ti"`` or ``"hdf5"`` for a trace path, from its content.

    Raises
    ------
    UnsupportedTraceError
        If the path does not exist or holds no recognisable trace (the message says
        what each format looks like and what the path holds).
    """
    p = Path(path)
    if not p.exists():
        raise UnsupportedTraceError(f"trace path {p} does not exist")
    if p.is_file():
        return _detect_file(p)
    files = sorted(f for f in p.iterdir() if f.is_file())
    if any(f.suffix == ".meta" and is_dumpi_meta(f) for f in files):
        return "dumpi"
    if any(is_otf2_anchor(f) for f in files):
        return "otf2"
    texts = [f for f in files if f.suffix.lower() not in (".md", ".xml", ".h5", ".hdf5")]
    if any(looks_like_ti(f) for f in texts) or any(_is_ti_index(f) for f in texts):
        return "ti"
    names = ", ".join(f.name for f in files[:8]) + (", ..." if len(files) > 8 else "")
    extra = ""
    if any(_read_at(f, 0, 8) == DUMPI_MAGIC for f in files):
        extra = " (it holds DUMPI rank files but no .meta: open one .bin as a partial trace)"
    raise UnsupportedTraceError(
        f"unrecognised format: directory {p} holds no trace{extra} "
        f"({names or 'no files'}); {_EXPECTED}"
    )


def _is_ti_index(path: Path) -> bool:
    """An index of TI files (its later entries, one per rank, are checked by the reader)."""
    return index_lines(path) is not None
