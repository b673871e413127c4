"""Format detection and the cached entry point :func:`read_trace`."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mpiuq.simulator.trace.cache import cache_key, default_cache_dir, load_trace_h5, save_trace
from mpiuq.simulator.trace.dumpi import CLOCKS, find_dumpi_files, read_dumpi
from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.ir import Trace
from mpiuq.simulator.trace.otf2_reader import find_otf2_anchor, read_otf2
from mpiuq.simulator.trace.ti import find_ti_files, read_ti

__all__ = ["FORMATS", "detect_format", "read_trace"]

FORMATS = ("dumpi", "otf2", "ti", "hdf5")

#: Suffixes of traces already in mpiuq's own HDF5 representation (``save_trace``,
#: ``mpiuq trace synth``).
HDF5_SUFFIXES = (".h5", ".hdf5")


def detect_format(path: str | Path) -> str:
    """``"dumpi"``, ``"otf2"``, ``"ti"`` or ``"hdf5"`` for a trace path (file or directory).

    Raises
    ------
    UnsupportedTraceError
        If the path does not exist or holds no recognisable trace.
    """
    p = Path(path)
    if not p.exists():
        raise UnsupportedTraceError(f"trace path {p} does not exist")
    if p.is_file():
        if p.suffix in HDF5_SUFFIXES:
            return "hdf5"
        if p.suffix in (".meta", ".bin"):
            return "dumpi"
        if p.suffix == ".otf2":
            return "otf2"
        return "ti"
    if any(p.glob("*.meta")):
        return "dumpi"
    if any(p.glob("*.otf2")):
        return "otf2"
    if any(f.is_file() and f.suffix not in (".md", ".xml") for f in p.iterdir()):
        return "ti"
    raise UnsupportedTraceError(f"directory {p} holds no DUMPI, OTF2 or TI trace")


def _trace_files(path: str | Path, fmt: str) -> list[Path]:
    """The files a reader consumes (their sizes and mtimes go into the cache key)."""
    if fmt == "dumpi":
        files, _n = find_dumpi_files(path)
        p = Path(path)
        metas = [p] if p.suffix == ".meta" else list(p.glob("*.meta")) if p.is_dir() else []
        return files + metas
    if fmt == "otf2":
        anchor = find_otf2_anchor(path)
        return [f for f in anchor.parent.rglob("*") if f.is_file()]
    files, _notes = find_ti_files(path)
    p = Path(path)
    return files + ([p] if p.is_file() and p not in files else [])


def read_trace(
    path: str | Path,
    *,
    flop_rate: float = 1e9,
    clock: str = "auto",
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> Trace:
    """Read a DUMPI, OTF2 or SimGrid TI trace, parsing it once (HDF5 cache).

    Parameters
    ----------
    path : str or Path
        A DUMPI ``.meta`` (or directory holding one, or a lone ``.bin``), an OTF2
        ``traces.otf2`` (or its directory), a TI index / single file / directory, or
        an ``.h5`` file written by :func:`save_trace` (loaded as is, not cached again).
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
    if not flop_rate > 0.0:
        raise ValueError(f"flop_rate={flop_rate!r} is invalid: expected a rate > 0 flop/s")
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    fmt = detect_format(path)
    if fmt == "hdf5":
        return load_trace_h5(path)
    options: dict[str, object] = {"format": fmt}
    if fmt == "ti":
        options["flop_rate"] = float(flop_rate)
    elif fmt == "dumpi":
        options["clock"] = clock
    entry: Path | None = None
    if use_cache:
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        entry = directory / f"{cache_key(path, options, _trace_files(path, fmt))}.h5"
        if entry.is_file():
            try:
                return load_trace_h5(entry)
            except TraceFormatError:
                entry.unlink(missing_ok=True)  # stale or damaged entry: parse again
    if fmt == "dumpi":
        trace = read_dumpi(path, clock=clock)
    elif fmt == "otf2":
        trace = read_otf2(path)
    else:
        trace = read_ti(path, flop_rate=flop_rate)
    if entry is not None:
        with contextlib.suppress(OSError):  # a read-only cache must not prevent reading
            save_trace(trace, entry, compress=False)
    return trace
