"""The trace formats, by name: how each is recognised, which files it reads, its reader.

:func:`~mpiuq.simulator.trace.detect.detect_format` asks the formats of
:data:`TRACE_FORMATS` in registration order whether a file (or a directory's files)
is theirs; :func:`~mpiuq.simulator.trace.read.read_trace` keys its cache on the
format's files and options and calls its reader. The message listing what each
format looks like is made from the entries' descriptions. A new format is one
:func:`register_trace_format` call beside its reader (``docs/extending-simulator.md``).

Built in, in detection order:

* ``hdf5``: an mpiuq HDF5 trace, the HDF5 signature ``\\x89HDF\\r\\n\\x1a\\n`` at byte 0
  (or 512, 1024, ... after a user block); read as is, never cached again;
* ``dumpi``: a rank file starting with the magic ``ff aa dd 'DUMPI'``, or a ``.meta``
  text file of ``key=value`` lines naming ``numprocs`` and ``fileprefix``;
* ``otf2``: the anchor file, starting with an OTF2 buffer header (``03``, the byte
  order ``B`` or ``L``, then ``OTF2\\0``);
* ``ti``: SimGrid TI text whose first line that is neither blank nor a comment is
  ``<rank> <action> ...``, or an index listing such files.

The readers (compiled parsers, contained C libraries) are imported only to read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mpiuq.simulator.registry import NamesView, Registry
from mpiuq.simulator.trace.sniff import DUMPI_MAGIC, is_dumpi_meta, is_hdf5, is_otf2_anchor, read_at
from mpiuq.simulator.trace.ti.files import find_ti_files, index_lines, looks_like_ti

if TYPE_CHECKING:
    from mpiuq.simulator.trace.ir import Trace

__all__ = ["FORMATS", "TRACE_FORMATS", "ReadOptions", "TraceFormat", "register_trace_format"]


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The reader options of :func:`~mpiuq.simulator.trace.read.read_trace`."""

    flop_rate: float = 1e9  #: TI: host speed turning ``compute`` flops into seconds
    clock: str = "auto"  #: DUMPI: clock of the compute gaps
    located: object | None = None  #: what the format's ``locate`` found (TI: its files)


@dataclass(frozen=True, slots=True)
class TraceFormat:
    """One trace format.

    Parameters
    ----------
    name
        Registry name (``Trace.source_format``, the cache key's ``format``).
    description
        What the format looks like, as ``"a ... trace (...)"`` (the unrecognised-format
        message lists every format's).
    is_file
        Whether one file (any name: content decides) is, or starts, a trace of this format.
    read
        ``read(path, options)``: the :class:`~mpiuq.simulator.trace.ir.Trace`; raises
        ``TraceFormatError`` naming file, rank and record for bad content.
    is_dir
        Whether a directory holding these files (sorted) is a trace of this format
        (``None``: a format of single files).
    files
        ``files(path, located)``: the files the reader consumes (their sizes and times
        key the cache); default the path itself, or every file under a directory.
    options
        Which :class:`ReadOptions` fields change what the reader returns (they key the
        cache).
    locate
        ``locate(path)``: work done once for the cache key and the reader (TI: the rank
        files of an index), passed to both as ``located``.
    cached
        Whether parsed traces are kept in the trace cache (not for the cache's own format).
    hints
        ``(suffix, what it suggests)`` pairs named when a file's content does not match.
    revision
        Raised when the reader comes to return something else for the same files (it keys
        the cache, from 1 on: cached traces read by an older reader are parsed again).
    """

    name: str
    description: str
    is_file: Callable[[Path], bool]
    read: Callable[[str | Path, ReadOptions], Trace]
    is_dir: Callable[[list[Path]], bool] | None = None
    files: Callable[[str | Path, object | None], list[Path]] | None = None
    options: tuple[str, ...] = ()
    locate: Callable[[str | Path], object] | None = None
    cached: bool = True
    hints: tuple[tuple[str, str], ...] = field(default=())
    revision: int = 0

    def trace_files(self, path: str | Path, located: object | None) -> list[Path]:
        """The files the reader consumes (see ``files``)."""
        if self.files is not None:
            return self.files(path, located)
        p = Path(path)
        return [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())


#: Every trace format, in detection order.
TRACE_FORMATS: Registry[TraceFormat] = Registry("trace format")
#: Names of the trace formats (a live view).
FORMATS: NamesView = TRACE_FORMATS.names_view()


def register_trace_format(fmt: TraceFormat) -> TraceFormat:
    """Register ``fmt`` (detected after the formats registered before it); returns it."""
    return TRACE_FORMATS.register(fmt)


def _read_hdf5(path: str | Path, options: ReadOptions) -> Trace:
    from mpiuq.simulator.trace.cache.h5_reader import load_trace_h5

    return load_trace_h5(path)


def _is_dumpi_file(path: Path) -> bool:
    return read_at(path, 0, 8) == DUMPI_MAGIC or is_dumpi_meta(path)


def _dumpi_files(path: str | Path, located: object | None) -> list[Path]:
    from mpiuq.simulator.trace.dumpi.files import find_dumpi_files, find_dumpi_meta

    files, _n = find_dumpi_files(path)
    meta = find_dumpi_meta(path)
    return files + ([meta] if meta is not None else [])


def _read_dumpi(path: str | Path, options: ReadOptions) -> Trace:
    from mpiuq.simulator.trace.dumpi.reader import read_dumpi

    return read_dumpi(path, clock=options.clock)


def _otf2_files(path: str | Path, located: object | None) -> list[Path]:
    from mpiuq.simulator.trace.otf2.reader import find_otf2_anchor

    anchor = find_otf2_anchor(path)
    return [f for f in anchor.parent.rglob("*") if f.is_file()]


def _read_otf2(path: str | Path, options: ReadOptions) -> Trace:
    from mpiuq.simulator.trace.otf2.reader import read_otf2

    return read_otf2(path)


def _is_ti_file(path: Path) -> bool:
    return looks_like_ti(path) or index_lines(path) is not None


def _is_ti_dir(files: list[Path]) -> bool:
    texts = [f for f in files if f.suffix.lower() not in (".md", ".xml", ".h5", ".hdf5")]
    return any(looks_like_ti(f) for f in texts) or any(index_lines(f) is not None for f in texts)


def _ti_files(path: str | Path, located: object | None) -> list[Path]:
    found: tuple[list[Path], list[str]] = (
        find_ti_files(path) if located is None else located  # type: ignore[assignment]
    )
    files = found[0]
    p = Path(path)
    return files + ([p] if p.is_file() and p not in files else [])


def _read_ti(path: str | Path, options: ReadOptions) -> Trace:
    from mpiuq.simulator.trace.ti.reader import read_ti

    return read_ti(path, flop_rate=options.flop_rate, located=options.located)  # type: ignore[arg-type]


for _fmt in (
    TraceFormat(
        "hdf5",
        "an mpiuq HDF5 trace (HDF5 signature)",
        is_hdf5,
        _read_hdf5,
        cached=False,
        hints=((".h5", "an mpiuq HDF5 trace"), (".hdf5", "an mpiuq HDF5 trace")),
    ),
    TraceFormat(
        "dumpi",
        "a DUMPI trace (.meta with numprocs and fileprefix, or rank files starting with "
        "ff aa dd 'DUMPI')",
        _is_dumpi_file,
        _read_dumpi,
        is_dir=lambda files: any(f.suffix == ".meta" and is_dumpi_meta(f) for f in files),
        files=_dumpi_files,
        options=("clock",),
        hints=((".meta", "a DUMPI .meta file"), (".bin", "a DUMPI rank file")),
    ),
    TraceFormat(
        "otf2",
        "an OTF2 archive (anchor file starting with the OTF2 header)",
        is_otf2_anchor,
        _read_otf2,
        is_dir=lambda files: any(is_otf2_anchor(f) for f in files),
        files=_otf2_files,
        hints=((".otf2", "an OTF2 anchor file"),),
    ),
    TraceFormat(
        "ti",
        "a SimGrid TI trace (lines '<rank> <action> [args]', or an index listing such files)",
        _is_ti_file,
        _read_ti,
        is_dir=_is_ti_dir,
        files=_ti_files,
        options=("flop_rate",),
        locate=find_ti_files,
        revision=1,  # 1: waitAny is read (before, it was left out as unsupported)
    ),
):
    register_trace_format(_fmt)
