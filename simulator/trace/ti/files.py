"""Finding and loading the text files of a SimGrid TI trace.

A TI trace is an index file listing one file per rank (SMPI's ``-trace-ti`` output),
a single file holding every rank, or a directory holding either. Files are
recognised by their content, not their names: an *action file* has
``<rank> <action> ...`` as its first line that is neither blank nor a comment; an
*index* lists existing files, one path per line. Per-rank files may be
gzip-compressed (``.gz``, or any name when the content starts with the gzip magic).
Every failure to read or decompress becomes a :class:`TraceFormatError` naming the
file.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError
from mpiuq.simulator.trace.limits import MAX_TEXT_BYTES

__all__ = ["find_ti_files", "looks_like_ti", "read_text_bytes", "sniff_text"]

GZIP_MAGIC = b"\x1f\x8b"
#: Bytes read to recognise a file (the first action line of a TI file is short).
SNIFF_BYTES = 64 * 1024
_SKIP_SUFFIXES = frozenset(
    {".md", ".xml", ".bin", ".meta", ".h5", ".hdf5", ".otf2", ".def", ".evt"}
)


def _gunzip(data: bytes, path: Path, limit: int) -> bytes:
    """Decompress every gzip member of ``data``, refusing more than ``limit`` bytes."""
    out: list[bytes] = []
    total = 0
    while data:
        d = zlib.decompressobj(wbits=31)
        try:
            chunk = d.decompress(data, limit + 1 - total)
        except zlib.error as exc:
            raise TraceFormatError(
                f"damaged gzip data ({exc}); expected a gzip-compressed TI text file",
                file=str(path),
            ) from exc
        total += len(chunk)
        out.append(chunk)
        if total > limit or d.unconsumed_tail:
            raise TraceFormatError(
                f"decompresses to more than {limit} bytes (the limit on one TI file)",
                file=str(path),
            )
        if not d.eof:
            raise TraceFormatError(
                "truncated gzip data: the compressed stream ends early", file=str(path)
            )
        data = d.unused_data
    return b"".join(out)


def read_text_bytes(path: Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The (decompressed) bytes of one TI file.

    Raises
    ------
    TraceFormatError
        If the file cannot be read, is damaged gzip data, or is larger than ``limit``.
    """
    try:
        size = path.stat().st_size
        if size > limit:
            raise TraceFormatError(
                f"{size} bytes, more than the {limit} bytes allowed for one TI file",
                file=str(path),
            )
        data = path.read_bytes()
    except OSError as exc:
        raise TraceFormatError(f"cannot read the file ({exc})", file=str(path)) from exc
    if data[:2] == GZIP_MAGIC:
        return _gunzip(data, path, limit)
    return data


def sniff_text(path: Path, size: int = SNIFF_BYTES) -> list[str] | None:
    """The first lines of a file as text (decompressed), or None if it is not text."""
    try:
        with path.open("rb") as fh:
            head = fh.read(size)
    except OSError:
        return None
    if head[:2] == GZIP_MAGIC:
        d = zlib.decompressobj(wbits=31)
        try:
            head = d.decompress(head, size)
        except zlib.error:
            return None
    if b"\0" in head:
        return None
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(head) >= size and lines:
        lines.pop()  # possibly cut
    return lines


def first_content_line(path: Path) -> str | None:
    """The first line that is neither blank nor a comment ("" if none; None: not text)."""
    size = 4096
    while True:
        lines = sniff_text(path, size)
        if lines is None:
            return None
        for ln in lines:
            s = ln.strip()
            if s and not s.startswith("#"):
                return s
        if size >= SNIFF_BYTES:
            return ""
        size *= 4


def _is_gzip(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(2) == GZIP_MAGIC
    except OSError:
        return False


def _content_lines(lines: list[str]) -> list[str]:
    return [s for s in (ln.strip() for ln in lines) if s and not s.startswith("#")]


def is_action_line(line: str) -> bool:
    """True for ``<rank> <action> ...`` (rank ``7`` or ``p7``, action starting with a letter)."""
    toks = line.split()
    if len(toks) < 2:
        return False
    head = toks[0][1:] if toks[0][:1] == "p" else toks[0]
    return head.isascii() and head.isdigit() and toks[1][:1].isascii() and toks[1][:1].isalpha()


def looks_like_ti(path: Path) -> bool:
    """True when the first line that is neither blank nor a comment is an action line."""
    line = first_content_line(path)
    if line is None:  # not text; a damaged gzip file still claims to be a TI file
        return _is_gzip(path)
    return bool(line) and is_action_line(line)


def _resolve_listed(base: Path, entry: str) -> Path | None:
    """Find a file listed in an index (relative paths, possibly with a stale prefix, or .gz)."""
    rel = Path(entry)
    parts = rel.parts
    root = str(base)
    for k in range(len(parts)):  # path strings: an index lists a file per rank
        cand = str(rel) if rel.is_absolute() and k == 0 else os.path.join(root, *parts[k:])
        for c in (cand, cand + ".gz"):
            if os.path.isfile(c):
                return Path(c)
    return None


def index_lines(index: Path) -> list[str] | None:
    """The entries of ``index`` if it looks like an index of TI files, else None.

    An index's first entry names an existing file (its later entries are checked by
    :func:`index_entries`) and the whole file is UTF-8 text.
    """
    first = first_content_line(index)  # decide from the head before reading the whole file
    if not first or is_action_line(first) or _resolve_listed(index.parent, first) is None:
        return None
    try:
        text = read_text_bytes(index).decode("utf-8")
    except (TraceFormatError, UnicodeDecodeError):
        return None
    return _content_lines(text.splitlines())


def index_entries(index: Path) -> list[Path] | None:
    """Rank files listed by ``index``, or None if it is not an index of existing files.

    Raises
    ------
    TraceFormatError
        If the first entry exists but a later one does not (a damaged index).
    """
    lines = index_lines(index)
    if lines is None:
        return None
    files = []
    for lineno, ln in enumerate(lines, start=1):
        found = _resolve_listed(index.parent, ln)
        if found is None:
            raise TraceFormatError(
                f"index lists {ln!r}, which does not exist (entry {lineno}; expected a path "
                "relative to the index, as SimGrid writes them)",
                file=str(index),
            )
        files.append(found)
    return files


def find_ti_files(path: str | Path) -> tuple[list[Path], list[str]]:
    """Locate the text files of a TI trace.

    ``path`` is an index file, a single trace file (all ranks), or a directory
    holding an index or per-rank files. Where a directory holds both a raw trace and
    its ``*_replayable`` variant, the raw one is chosen (it is what SMPI recorded).

    Returns
    -------
    files, notes
        The trace files to read and notes about the choice.

    Raises
    ------
    UnsupportedTraceError
        If the path holds no TI action file or index.
    """
    p = Path(path)
    notes: list[str] = []
    if p.is_file():
        if looks_like_ti(p):
            return [p], notes
        listed = index_entries(p)
        if listed is None:
            raise UnsupportedTraceError(
                f"{p} is not a SimGrid TI trace: expected lines '<rank> <action> [args]' "
                "or an index listing such files"
            )
        return listed, notes
    if not p.is_dir():
        raise UnsupportedTraceError(f"TI trace path {p} does not exist")
    candidates = sorted(f for f in p.iterdir() if f.is_file() and f.suffix not in _SKIP_SUFFIXES)
    actions = [f for f in candidates if looks_like_ti(f)]
    indexes: list[tuple[Path, list[Path]]] = []
    for f in candidates:
        if f in actions:
            continue
        try:
            listed = index_entries(f)
        except TraceFormatError:
            continue
        if listed:
            indexes.append((f, listed))
    if indexes:
        raw = [ix for ix in indexes if "_replayable" not in ix[0].name]
        chosen = raw[0] if raw else indexes[0]
        if raw and len(raw) < len(indexes):
            notes.append(
                "directory holds raw and *_replayable TI variants; "
                f"read the raw one {chosen[0].name}"
            )
        return chosen[1], notes
    if not actions:
        raise UnsupportedTraceError(f"directory {p} holds no TI index or action file")
    return actions, notes
