"""Content checksums of stored files: a cache entry is verified whole before it is used.

The parse cache's trace entries and the program cache's entries are read back by later
runs; a byte changed on disk (a failing disk, an interrupted copy, a careless edit) must
not become a silently wrong replay or a false deadlock. Every file of an entry therefore
has a recorded size and a content digest, checked on read:

* :func:`file_digest`: the size and the 64-bit XXH3 digests of a file's bytes, one per
  chunk of :data:`CHUNK_BYTES` (4 KiB), read through a memory map (xxHash, a well-kept
  library: about 5-10 GB/s on one core, against 1 GB/s for ``zlib.crc32`` and 0.4 GB/s
  for BLAKE2b measured on this machine). Every chunk is checked on read; one digest per
  chunk lets a sweep of every single-byte change of a large entry check each by hashing
  its own chunk again (:func:`chunk_matches`) instead of the whole file;
* :func:`seal_text` / :func:`unseal_text`: a small text file (JSON) that carries its own
  digest in a last line ``#xxh3_64 <hex>``, so a changed or cut metadata file is
  recognised too, before it is parsed;
* :func:`write_manifest` / :func:`verify_manifest`: a sealed ``checksums.json`` listing
  the size and chunk digests of every other file of a folder (a program entry), checked
  smallest file first, each file a block of chunks at a time, stopping at the first chunk
  that differs (:func:`first_bad_chunk`): a damaged entry is refused after hashing what
  precedes the damage, an intact one is hashed once. A manifest of an earlier version
  (one digest per file) is refused like a damaged one: the entry is rebuilt, never
  trusted.

A failed check raises :class:`ChecksumError` naming the file and what differs; the caches
treat it as a damaged entry (deleted, then rebuilt).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mpiuq.simulator.errors import SimulatorError

__all__ = [
    "CHUNK_BYTES",
    "HASH_NAME",
    "MANIFEST",
    "ChecksumError",
    "chunk_matches",
    "damaged_bytes",
    "digest_fits",
    "file_digest",
    "first_bad_chunk",
    "parse_sealed_json",
    "seal_text",
    "unseal_text",
    "verify_manifest",
    "write_manifest",
]

#: Name of the digest (stored with every checksum, so another one can follow).
HASH_NAME = "xxh3_64"
#: The manifest file of a folder entry.
MANIFEST = "checksums.json"
_SEAL = "#" + HASH_NAME + " "
_FORMAT = "mpiuq-checksums"
_VERSION = 2
#: Bytes per digest: a file's digest is the concatenated 16-hex-digit XXH3 digests of its
#: chunks of this many bytes (the last one shorter; none for an empty file).
CHUNK_BYTES = 1 << 12
_HEX = 16
_HEX_DIGITS = b"0123456789abcdef"
#: Files at least this large are hashed on the second thread when a manifest is written.
_PARALLEL_BYTES = 1 << 20
#: Chunks hashed and compared at a time by :func:`first_bad_chunk` (1 MiB).
_BLOCK_CHUNKS = 256


class ChecksumError(SimulatorError, ValueError):
    """A stored file does not match its recorded size or digest (damaged or truncated).

    Attributes
    ----------
    path
        The file at fault.
    """

    def __init__(self, path: str | Path, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


def _digest_bytes(data: Any) -> str:
    import xxhash  # imported on first use (a run without a cache never needs it)

    return f"{xxhash.xxh3_64_intdigest(data):016x}"


def _chunk_digests(data: Any) -> str:
    """The digests of ``data``'s chunks of :data:`CHUNK_BYTES`, concatenated (hex)."""
    import numpy as np
    import xxhash

    view = memoryview(data)
    n = len(view)
    ints = np.fromiter(
        map(
            xxhash.xxh3_64_intdigest, (view[i : i + CHUNK_BYTES] for i in range(0, n, CHUNK_BYTES))
        ),
        dtype=">u8",
        count=-(-n // CHUNK_BYTES),
    )
    return ints.tobytes().hex()


@contextlib.contextmanager
def _mapped(path: str | Path) -> Iterator[memoryview | None]:
    """The bytes of the file at ``path`` as a read-only view of its memory map (``None``
    for an empty file, which cannot be mapped).

    Raises
    ------
    OSError
        If the file cannot be opened or mapped.
    """
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            yield None
            return
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(m)
        try:
            yield view
        finally:
            # an exception on its way out (Ctrl-C while hashing) may still hold slices of
            # the map: they and the map are then freed with it, and the exception goes on
            with contextlib.suppress(BufferError):
                view.release()
                m.close()


def file_digest(path: str | Path) -> tuple[int, str]:
    """``(size in bytes, chunk digests)`` of a file's content (read through a memory
    map): the hex digests of its chunks of :data:`CHUNK_BYTES`, concatenated.

    Raises
    ------
    OSError
        If the file cannot be opened or mapped.
    """
    with _mapped(path) as view:
        return (0, "") if view is None else (len(view), _chunk_digests(view))


def first_bad_chunk(path: str | Path, digest: str) -> int | None:
    """The index of the first chunk of the file at ``path`` whose content does not match
    ``digest`` (a :func:`file_digest` string of a file of the same size), or ``None`` when
    every chunk matches. The file is hashed :data:`_BLOCK_CHUNKS` chunks at a time, and
    the hashing stops at the first block that differs.

    Raises
    ------
    OSError
        If the file cannot be opened or mapped.
    """
    with _mapped(path) as view:
        if view is None:
            return None if digest == "" else 0
        size = len(view)
        block = _BLOCK_CHUNKS * CHUNK_BYTES
        for start in range(0, size, block):
            got = _chunk_digests(view[start : start + block])
            first = start // CHUNK_BYTES * _HEX
            expected = digest[first : first + len(got)]
            if got != expected:
                for i in range(0, len(got), _HEX):
                    if got[i : i + _HEX] != expected[i : i + _HEX]:
                        return (first + i) // _HEX
    return None if len(digest) == _HEX * -(-size // CHUNK_BYTES) else size // CHUNK_BYTES


def _is_lower_hex(text: str) -> bool:
    """Whether ``text`` holds lower-case hex digits only (a C-speed byte deletion: a
    digest string of a large file has hundreds of thousands of them)."""
    try:
        return not text.encode("ascii").translate(None, _HEX_DIGITS)
    except UnicodeEncodeError:
        return False


def damaged_bytes(index: int) -> str:
    """``"bytes A..B"``: the byte range of chunk ``index`` (for messages)."""
    return f"bytes {index * CHUNK_BYTES}..{(index + 1) * CHUNK_BYTES - 1}"


def digest_fits(size: Any, digest: Any) -> bool:
    """Whether ``digest`` is a chunk-digest string for a file of ``size`` bytes."""
    return (
        type(size) is int
        and size >= 0
        and isinstance(digest, str)
        and len(digest) == _HEX * -(-size // CHUNK_BYTES)
        and _is_lower_hex(digest)
    )


def chunk_matches(path: str | Path, digest: str, index: int) -> bool:
    """Whether chunk ``index`` of the file at ``path`` (as it is now) matches its digest
    in ``digest`` (a :func:`file_digest` string): the one check a change confined to that
    chunk can fail, for sweeps of single-byte changes."""
    with open(path, "rb") as f:
        f.seek(index * CHUNK_BYTES)
        data = f.read(CHUNK_BYTES)
    return _chunk_digests(data) == digest[index * _HEX : (index + 1) * _HEX]


def seal_text(text: str) -> str:
    """``text`` (no trailing newline needed) followed by a line holding its digest.

    Examples
    --------
    >>> unseal_text(seal_text('{"a": 1}'), "x.json")
    '{"a": 1}\\n'
    """
    body = text if text.endswith("\n") else text + "\n"
    return f"{body}{_SEAL}{_digest_bytes(body.encode('utf-8'))}\n"


def unseal_text(sealed: str, where: str | Path) -> str:
    """The text of a sealed file, checked against its digest line.

    Raises
    ------
    ChecksumError
        If the digest line is missing or does not match (naming ``where``).
    """
    body, sep, last = sealed.removesuffix("\n").rpartition("\n")
    if not sealed.endswith("\n") or not sep or not last.startswith(_SEAL):
        raise ChecksumError(where, f"has no checksum line ('{_SEAL}...'): damaged or cut")
    body += "\n"
    if last[len(_SEAL) :] != _digest_bytes(body.encode("utf-8")):
        raise ChecksumError(where, "does not match its checksum line (damaged)")
    return body


def read_sealed_json(path: Path, missing: str = "is missing") -> Any:
    """The JSON document of a sealed file (see :func:`seal_text`).

    Raises
    ------
    ChecksumError
        If the file is missing (saying ``missing``), cannot be read, is not valid UTF-8,
        fails its seal, or is not JSON.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ChecksumError(path, missing) from None
    except OSError as exc:
        raise ChecksumError(path, f"cannot be read ({exc.strerror})") from None
    return parse_sealed_json(data, path)


def parse_sealed_json(data: bytes, where: str | Path) -> Any:
    """The JSON document of a sealed file's bytes ``data`` (see :func:`read_sealed_json`).

    Raises
    ------
    ChecksumError
        If ``data`` is not valid UTF-8, fails its seal, or is not JSON (naming ``where``).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ChecksumError(where, "is not UTF-8 text (damaged)") from None
    body = unseal_text(text, where)
    try:
        return json.loads(body)
    except (json.JSONDecodeError, RecursionError) as exc:  # pragma: no cover - sealed
        raise ChecksumError(where, f"is not JSON ({exc})") from None


def write_manifest(folder: Path, names: Iterable[str]) -> Path:
    """Write ``folder/checksums.json``: the size and digest of each named file, sealed.

    Raises
    ------
    OSError
        If a file cannot be read or the manifest cannot be written.
    """
    names = sorted(names)
    digests = _digests([folder / n for n in names])
    doc = {
        "format": _FORMAT,
        "version": _VERSION,
        "hash": HASH_NAME,
        "chunk_bytes": CHUNK_BYTES,
        "files": {n: [size, hexd] for n, (size, hexd) in zip(names, digests, strict=True)},
    }
    path = folder / MANIFEST
    path.write_text(seal_text(json.dumps(doc, indent=1, allow_nan=False)), encoding="utf-8")
    return path


def verify_manifest(folder: Path) -> tuple[str, ...]:
    """Check every file of ``folder`` against its sealed ``checksums.json``; returns the
    names checked (every file of the folder but the manifest).

    Raises
    ------
    ChecksumError
        If the manifest is missing, damaged or of another format, a listed file is
        missing, of another size or content, or the folder holds a file it does not list.
    """
    path = folder / MANIFEST
    doc = read_sealed_json(path, "is missing (an entry without checksums)")
    files = doc.get("files") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != _FORMAT
        or doc.get("version") != _VERSION
        or doc.get("hash") != HASH_NAME
        or doc.get("chunk_bytes") != CHUNK_BYTES
        or not isinstance(files, dict)
        or not all(isinstance(v, list) and len(v) == 2 and digest_fits(*v) for v in files.values())
    ):
        raise ChecksumError(
            path,
            f"is not a {_FORMAT} v{_VERSION} manifest of {HASH_NAME} digests of "
            f"{CHUNK_BYTES}-byte chunks (damaged, or of an earlier version)",
        )
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    if present != set(files):
        extra, missing = sorted(present - set(files)), sorted(set(files) - present)
        raise ChecksumError(folder, f"files {missing} are missing, {extra} not listed")
    names = sorted(files)
    for name in names:  # sizes first: a cut file is named without hashing anything
        size = (folder / name).stat().st_size
        if size != files[name][0]:
            raise ChecksumError(
                folder / name,
                f"holds {size} bytes, expected {files[name][0]} (truncated or changed)",
            )
    # smallest first, stopping at the first damaged chunk: damage is named after hashing
    # only what precedes it
    for name in sorted(names, key=lambda n: (files[n][0], n)):
        bad = first_bad_chunk(folder / name, files[name][1])
        if bad is not None:
            raise ChecksumError(
                folder / name, f"does not match its checksum (damaged) in {damaged_bytes(bad)}"
            )
    return tuple(names)


def _digests(paths: list[Path]) -> list[tuple[int, str]]:
    """:func:`file_digest` of each path, the large files split between two threads."""
    big = [i for i, p in enumerate(paths) if p.stat().st_size >= _PARALLEL_BYTES]
    if len(big) < 2:
        return [file_digest(p) for p in paths]
    # alternate the large files by size between this thread and one more
    order = sorted(big, key=lambda i: -paths[i].stat().st_size)
    other = set(order[1::2])
    out: list[tuple[int, str] | None] = [None] * len(paths)
    with ThreadPoolExecutor(1, thread_name_prefix="checksums") as pool:
        futures = {i: pool.submit(file_digest, paths[i]) for i in other}
        for i, p in enumerate(paths):
            if i not in other:
                out[i] = file_digest(p)
        for i, fut in futures.items():
            out[i] = fut.result()
    return [d for d in out if d is not None]
