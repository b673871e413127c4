"""Format detection and the cached entry point :func:`read_trace`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from mpiuq.simulator.checksums import ChecksumError
from mpiuq.simulator.trace.cache.layout import (
    discard_entry,
    load_mapped,
    verify_entry,
    write_layout,
)
from mpiuq.simulator.trace.cache.store import cache_key, default_cache_dir, save_trace
from mpiuq.simulator.trace.detect import detect_format
from mpiuq.simulator.trace.dumpi.files import CLOCKS
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.formats import FORMATS, TRACE_FORMATS, ReadOptions
from mpiuq.simulator.trace.ir import Trace

__all__ = [
    "FORMATS",
    "TraceLocation",
    "detect_format",
    "locate_trace",
    "read_located",
    "read_trace",
    "store_trace",
]  # detect_format: from .detect


def _cache_entry(
    path: str | Path,
    fmt: str,
    flop_rate: float,
    clock: str,
    cache_dir: str | Path | None,
    located: object | None,
) -> Path:
    """The cache entry of ``path`` read as ``fmt`` with these reader options."""
    entry = TRACE_FORMATS.get(fmt)
    values = ReadOptions(flop_rate=float(flop_rate), clock=clock)
    options: dict[str, object] = {"format": fmt}
    options.update({name: getattr(values, name) for name in entry.options})
    if entry.revision:
        options["revision"] = entry.revision
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    files = entry.trace_files(path, located)
    return directory / f"{cache_key(path, options, files)}.h5"


@dataclass(frozen=True)
class TraceLocation:
    """Where a trace is read from: its format, reader options and cache entry.

    Made by :func:`locate_trace` (the cache key is computed once: it stats every file of
    the trace) and read by :func:`read_located`.
    """

    path: str | Path
    fmt: str
    flop_rate: float
    clock: str
    located: object | None  #: what the format's ``locate`` found (TI: ``find_ti_files``)
    entry: Path | None  #: its cache entry (None: no cache); may not exist yet

    @property
    def h5_file(self) -> Path | None:
        """The mpiuq HDF5 file holding the trace: ``path`` itself for a trace file, else
        its cache entry if it exists now and passes its checksum (None before the first
        read, with a read-only cache, or for a damaged entry, which is deleted). Lets a
        caller read the trace in blocks
        (:func:`~mpiuq.simulator.lowering.blocks.lower_trace_blocks`) instead of whole."""
        return self.h5_file_of_size(0)

    def h5_file_of_size(self, min_entry_bytes: int) -> Path | None:
        """:attr:`h5_file`, but a cache entry smaller than ``min_entry_bytes`` is answered
        ``None`` before it is verified (its content is hashed only when it is to be read)."""
        if not TRACE_FORMATS.get(self.fmt).cached:  # the trace file is the HDF5 file
            return Path(self.path)
        entry = self.entry
        if entry is None:
            return None
        try:
            if entry.stat().st_size < min_entry_bytes:
                return None
        except OSError:  # no entry (or no cache folder)
            return None
        try:
            verify_entry(entry)
        except (ChecksumError, OSError):
            discard_entry(entry)  # damaged: parsed again, never read
            return None
        return entry


def locate_trace(
    path: str | Path,
    *,
    flop_rate: float = 1e9,
    clock: str = "auto",
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> TraceLocation:
    """The :class:`TraceLocation` of ``path`` read with these options (see :func:`read_trace`).

    Raises
    ------
    ValueError
        If ``flop_rate`` is not > 0 or ``clock`` is unknown.
    UnsupportedTraceError
        If the format cannot be detected.
    """
    if not flop_rate > 0.0:
        raise ValueError(f"flop_rate={flop_rate!r} is invalid: expected a rate > 0 flop/s")
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    fmt = detect_format(path)
    locate = TRACE_FORMATS.get(fmt).locate
    located = locate(path) if locate is not None else None  # for the key and the reader
    entry = None
    if use_cache and TRACE_FORMATS.get(fmt).cached:
        entry = _cache_entry(path, fmt, flop_rate, clock, cache_dir, located)
    return TraceLocation(path, fmt, flop_rate, clock, located, entry)


def read_trace(
    path: str | Path,
    *,
    flop_rate: float = 1e9,
    clock: str = "auto",
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> Trace:
    """Read a DUMPI, OTF2 or SimGrid TI trace, parsing it once (HDF5 cache).

    The format is recognised from the content (:func:`detect_format`); file names
    are only hints.

    Parameters
    ----------
    path : str or Path
        A DUMPI ``.meta`` (or directory holding one, or a lone ``.bin``), an OTF2
        ``traces.otf2`` (or its directory), a TI index / single file / directory, or
        an HDF5 file written by :func:`save_trace` (any name; loaded as is, not cached
        again).
    flop_rate : float
        TI only: host speed in flop/s turning ``compute`` flops into seconds.
    clock : {"auto", "wall", "cpu"}
        DUMPI only: clock for compute gaps (see :func:`read_dumpi`).
    cache_dir : str or Path, optional
        Cache directory; default ``$MPIUQ_CACHE_DIR`` or ``~/.cache/mpiuq/traces``.
    use_cache : bool
        Read and write the cache (False: always parse).

    Returns
    -------
    Trace
        Validated representation.

    Raises
    ------
    UnsupportedTraceError
        If the format cannot be detected.
    TraceFormatError
        If the trace is malformed or truncated (naming file, rank and record).
    """
    return read_located(
        locate_trace(
            path, flop_rate=flop_rate, clock=clock, cache_dir=cache_dir, use_cache=use_cache
        )
    )


def read_located(where: TraceLocation, *, store: bool = True) -> Trace:
    """:func:`read_trace` of a trace already located (:func:`locate_trace`).

    ``store=False`` parses without writing the trace's cache entry: the caller stores it
    later with :func:`store_trace` (a replay does while its models run).
    """
    path, fmt, entry = where.path, where.fmt, where.entry
    reader = TRACE_FORMATS.get(fmt)
    options = ReadOptions(flop_rate=where.flop_rate, clock=where.clock, located=where.located)
    if not reader.cached:
        return reader.read(path, options)
    if entry is not None and entry.is_file():
        try:
            doc = verify_entry(entry)  # checksums first: nothing damaged is read
            mapped = load_mapped(entry, doc)  # without h5py, when its layout fits
            if mapped is not None:
                return mapped
            from mpiuq.simulator.trace.cache.h5_reader import load_trace_h5

            return load_trace_h5(entry)
        except (TraceFormatError, ChecksumError, OSError):
            discard_entry(entry)  # stale or damaged entry: parse again
    trace = reader.read(path, options)  # the reader modules are imported to parse only
    if store:
        store_trace(trace, where)
    return trace


def store_trace(trace: Trace, where: TraceLocation) -> Path | None:
    """Write ``trace``, read from ``where``, into its cache entry unless it is there.

    Returns the entry's path, or ``None`` without a cache (or with one that cannot be
    written: a read-only or full cache never stops a read).
    """
    entry = where.entry
    if entry is None or not TRACE_FORMATS.get(where.fmt).cached:
        return None
    if not entry.is_file():
        with contextlib.suppress(OSError):
            _sweep_temporaries(entry)
            save_trace(trace, entry, compress=False)
            write_layout(entry, trace)
    return entry if entry.is_file() else None


def _sweep_temporaries(entry: Path) -> None:
    """Delete ``<entry>.tmp<pid>`` files (and their layouts') of processes that are gone
    (runs killed while writing the entry)."""
    import os

    for stem in (entry.name, f"{entry.name}.layout.json"):
        for leftover in entry.parent.glob(f"{stem}.tmp*"):
            pid = leftover.name.rsplit(".tmp", 1)[-1]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass
