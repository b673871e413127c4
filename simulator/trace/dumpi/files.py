"""The files of a DUMPI trace: the ``.meta`` description and one binary file per rank.

A ``.meta`` is recognised by its content (``key=value`` lines naming ``numprocs``
and ``fileprefix``), a rank file by its magic; names are only hints. ``numprocs``
is checked against :data:`~.limits.MAX_RANKS` and against the rank files actually
present before any path is built, so a damaged ``numprocs=2147483647`` costs one
directory listing, not two billion paths.
"""

from __future__ import annotations

import re
from pathlib import Path

from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.limits import MAX_RANKS
from mpiuq.simulator.trace.sniff import DUMPI_MAGIC, is_dumpi_meta

__all__ = ["CLOCKS", "find_dumpi_files", "find_dumpi_meta", "read_meta"]

#: Clocks a DUMPI trace's compute gaps can be taken from (``auto``: see ``read_dumpi``).
CLOCKS = ("wall", "cpu", "auto")

#: Largest .meta file read (real ones are a few hundred bytes).
MAX_META_BYTES = 1 << 20


def find_dumpi_meta(path: str | Path) -> Path | None:
    """The ``.meta`` file of a DUMPI trace path (None for a lone rank file).

    ``path`` is a ``.meta`` file, a directory holding exactly one, or a rank file.

    Raises
    ------
    UnsupportedTraceError
        If the path is none of these.
    """
    p = Path(path)
    if p.is_dir():
        metas = sorted(f for f in p.iterdir() if f.is_file() and is_dumpi_meta(f))
        if len(metas) != 1:
            raise UnsupportedTraceError(
                f"directory {p} holds {len(metas)} DUMPI .meta files, expected exactly one "
                "(open a .meta or a single .bin file instead)"
            )
        return metas[0]
    if _is_rank_file(p):
        return None
    if p.is_file() and is_dumpi_meta(p):
        return p
    raise UnsupportedTraceError(
        f"{p} is neither a DUMPI .meta (key=value lines with numprocs and fileprefix) nor a "
        "DUMPI rank file (starting with ff aa dd 'DUMPI')"
    )


def _is_rank_file(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            return fh.read(len(DUMPI_MAGIC)) == DUMPI_MAGIC
    except OSError:
        return False


def read_meta(meta: Path) -> dict[str, str]:
    """The ``key=value`` pairs of a ``.meta`` file.

    Raises
    ------
    TraceFormatError
        If the file cannot be read, is not ASCII text or has a line without ``=``.
    """
    try:
        if meta.stat().st_size > MAX_META_BYTES:
            raise TraceFormatError(
                f"{meta.stat().st_size} bytes: not a DUMPI .meta (at most {MAX_META_BYTES})",
                file=str(meta),
            )
        text = meta.read_bytes().decode("ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"cannot read DUMPI meta file ({exc})", file=str(meta)) from exc
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise TraceFormatError(
                f"expected key=value, got {line[:80]!r}", file=str(meta), record=lineno
            )
        out[key.strip()] = value.strip()
    return out


def _numprocs(meta: Path, values: dict[str, str]) -> tuple[int, str]:
    try:
        n = int(values["numprocs"])
        prefix = values["fileprefix"]
    except (KeyError, ValueError) as exc:
        raise TraceFormatError(
            f"meta file needs integer numprocs and fileprefix ({exc!r})", file=str(meta)
        ) from exc
    if not 1 <= n <= MAX_RANKS:
        raise TraceFormatError(
            f"numprocs={n} outside 1..{MAX_RANKS} (the limit on ranks per trace)", file=str(meta)
        )
    name = Path(prefix).name
    if not name or name in (".", ".."):
        raise TraceFormatError(f"fileprefix={prefix!r} names no file prefix", file=str(meta))
    return n, name


def find_dumpi_files(path: str | Path) -> tuple[list[Path], int | None]:
    """Rank files of a DUMPI trace and the world size from its ``.meta`` (None if partial).

    ``path`` is a ``.meta`` file, a directory holding exactly one ``.meta``, or a
    single rank file (partial trace).

    Raises
    ------
    TraceFormatError
        If the ``.meta`` is malformed, ``numprocs`` is out of range, or a rank file
        it implies (``<fileprefix>-NNNN.bin``) is missing.
    """
    meta = find_dumpi_meta(path)
    if meta is None:
        return [Path(path)], None
    n, prefix = _numprocs(meta, read_meta(meta))
    pattern = re.compile(re.escape(prefix) + r"-(\d{4,})\.bin")
    present: set[int] = set()
    for f in meta.parent.iterdir():
        m = pattern.fullmatch(f.name)
        if m and m.group(1) == f"{int(m.group(1)):04d}" and f.is_file():
            present.add(int(m.group(1)))
    # stops at the first gap, so it costs at most (files present + 1) steps
    missing = next((r for r in range(n) if r not in present), None)
    if missing is not None:
        name = f"{prefix}-{missing:04d}.bin"
        raise TraceFormatError(
            f"rank file {name} listed by numprocs={n} is missing ({len(present)} rank files found)",
            file=str(meta.parent / name),
        )
    return [meta.parent / f"{prefix}-{r:04d}.bin" for r in range(n)], n
