"""Recognising a trace's format from its content (file names are only hints).

The formats of :data:`~mpiuq.simulator.trace.formats.TRACE_FORMATS` are asked in
registration order (mpiuq HDF5, DUMPI, OTF2, SimGrid TI; see
:mod:`mpiuq.simulator.trace.formats` for what each looks like). A directory is
recognised by the files it holds (a DUMPI ``.meta``, an OTF2 anchor, TI files).
"""

from __future__ import annotations

from pathlib import Path

from mpiuq.simulator.trace.errors import UnsupportedTraceError
from mpiuq.simulator.trace.formats import TRACE_FORMATS
from mpiuq.simulator.trace.sniff import DUMPI_MAGIC as DUMPI_MAGIC
from mpiuq.simulator.trace.sniff import HDF5_SIGNATURE as HDF5_SIGNATURE
from mpiuq.simulator.trace.sniff import is_dumpi_meta as is_dumpi_meta
from mpiuq.simulator.trace.sniff import is_hdf5 as is_hdf5
from mpiuq.simulator.trace.sniff import is_otf2_anchor as is_otf2_anchor
from mpiuq.simulator.trace.sniff import read_at
from mpiuq.simulator.trace.ti.files import first_content_line

__all__ = [
    "DUMPI_MAGIC",
    "HDF5_SIGNATURE",
    "detect_format",
    "is_dumpi_meta",
    "is_otf2_anchor",
]


def _expected() -> str:
    """What each registered format looks like, for the unrecognised-format message."""
    looks = [fmt.description for fmt in TRACE_FORMATS]
    listed = ", ".join(looks[:-1]) + f" or {looks[-1]}" if len(looks) > 1 else "".join(looks)
    return f"expected {listed}"


def _describe(path: Path) -> str:
    head = read_at(path, 0, 16)
    line = first_content_line(path)
    hints = {suffix: what for fmt in TRACE_FORMATS for suffix, what in fmt.hints}
    hint = hints.get(path.suffix.lower())
    seen = f"it starts with {line[:60]!r}" if line else f"it starts with bytes {head.hex(' ')}"
    if hint:
        seen += f"; its suffix {path.suffix} suggests {hint}, but the content is not"
    return seen


def _detect_file(p: Path) -> str:
    for fmt in TRACE_FORMATS:
        if fmt.is_file(p):
            return fmt.name
    raise UnsupportedTraceError(f"unrecognised format: {p}: {_expected()}; {_describe(p)}")


def detect_format(path: str | Path) -> str:
    """The registered name (``"dumpi"``, ``"otf2"``, ``"ti"``, ``"hdf5"``, ...) of the
    format of a trace path, from its content.

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
    for fmt in TRACE_FORMATS:
        if fmt.is_dir is not None and fmt.is_dir(files):
            return fmt.name
    names = ", ".join(f.name for f in files[:8]) + (", ..." if len(files) > 8 else "")
    extra = ""
    if any(read_at(f, 0, 8) == DUMPI_MAGIC for f in files):
        extra = " (it holds DUMPI rank files but no .meta: open one .bin as a partial trace)"
    raise UnsupportedTraceError(
        f"unrecognised format: directory {p} holds no trace{extra} "
        f"({names or 'no files'}); {_expected()}"
    )
