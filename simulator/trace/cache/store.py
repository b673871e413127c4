"""HDF5 storage of :class:`~mpiuq.simulator.trace.ir.Trace` and the parse-once cache.

Traces are written here and read back by :func:`~.cache.h5_reader.load_trace_h5`; the
cache's entries also by :func:`~.cache.layout.load_mapped`, without h5py.

The cache key hashes the absolute trace path, the size and modification time of
every file under it, the reader options and :data:`FORMAT_VERSION`; a changed
trace or reader therefore never returns a stale entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.simulator.trace.cache.h5_format import FORMAT_VERSION
from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS, Trace

if TYPE_CHECKING:  # imported on first use (see __getattr__)
    from mpiuq.simulator.trace.cache.h5_reader import load_trace_h5

__all__ = ["FORMAT_VERSION", "cache_key", "default_cache_dir", "load_trace_h5", "save_trace"]


def __getattr__(name: str) -> Any:
    """``load_trace_h5``, imported on first use (it needs h5py, which a cached trace's
    read through its layout does not)."""
    if name == "load_trace_h5":
        from mpiuq.simulator.trace.cache.h5_reader import load_trace_h5

        return load_trace_h5
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_cache_dir() -> Path:
    """``$MPIUQ_CACHE_DIR`` or ``~/.cache/mpiuq/traces``."""
    env = os.environ.get("MPIUQ_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mpiuq" / "traces"


def _fingerprint(files: list[Path]) -> list[tuple[str, int, int]]:
    # absolute paths without resolving symbolic links: resolving stats every path
    # component of every file (0.02 s for 256 files); a link only costs a cache miss
    out = []
    for f in sorted(files):
        st = os.stat(f)
        out.append((os.path.abspath(f), st.st_size, st.st_mtime_ns))
    return out


def cache_key(path: str | Path, options: dict[str, object], files: list[Path] | None = None) -> str:
    """Hex digest of a trace path, its files' sizes and mtimes, and the reader options.

    ``files`` are the files the reader consumes (default: ``path`` itself if it is a
    file, else every file below the directory).
    """
    p = Path(path).resolve()
    if files is None:
        files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]
    payload = json.dumps(
        {
            "path": str(p),
            "files": _fingerprint(files),
            "options": options,
            "version": FORMAT_VERSION,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def save_trace(trace: Trace, path: str | Path, *, compress: bool = True) -> None:
    """Write ``trace`` to an HDF5 file (written to a temporary name, then renamed).

    Parameters
    ----------
    trace
        The trace to store.
    path
        Destination file.
    compress
        Gzip the larger columns (about 14 times smaller files). The parse cache
        stores them uncompressed: loading a million operations then takes about
        0.02 s instead of 0.17 s of decompression.
    """
    import h5py  # here: a cached trace is read without it (see .layout)

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    try:
        # every dataset at an 8-byte boundary, so mapped columns are aligned (a column
        # off its alignment is copied when mapped; see .layout)
        with h5py.File(tmp, "w", alignment_threshold=1, alignment_interval=8) as f:
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["format"] = trace.format
            f.attrs["source"] = trace.source
            f.attrs["n_ranks"] = trace.n_ranks
            f.attrs["n_requests"] = trace.n_requests
            f.attrs["call_names"] = json.dumps(list(trace.call_names))
            f.attrs["unsupported"] = json.dumps(trace.unsupported)
            f.attrs["notes"] = json.dumps(list(trace.notes))
            for name in (*OP_COLUMNS, *AUX_COLUMNS):
                arr = getattr(trace, name)
                gzip = compress and arr.size > 4096
                f.create_dataset(name, data=arr, compression="gzip" if gzip else None)
        tmp.replace(p)
    except BaseException:
        tmp.unlink(missing_ok=True)  # never leave a half-written file behind
        raise
