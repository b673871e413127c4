"""Per-chunk digests of cache entries: their format, every flip and cut refused, old
manifests and layouts (one digest per file) refused and rebuilt, never trusted.

The format is checked against an independent computation of the chunk digests with
xxhash itself; the refusals exhaustively over a small folder of files around the chunk
boundaries (every byte, every length of every file, the manifest included).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xxhash
from cache_fuzzing import CacheEntries, flipped, replay_outcome, small_entries
from chunk_boundaries import SIZES, boundary_entry, refuse_each

from mpiuq.simulator.checksums import (
    CHUNK_BYTES,
    HASH_NAME,
    MANIFEST,
    ChecksumError,
    chunk_matches,
    file_digest,
    first_bad_chunk,
    parse_sealed_json,
    seal_text,
    verify_manifest,
)
from mpiuq.simulator.program.cache import find_cached_program
from mpiuq.simulator.trace.cache.layout import layout_path, verify_entry
from mpiuq.simulator.trace.read import locate_trace, read_located


def _reference_chunks(data: bytes) -> str:
    """The chunk digests computed independently: xxhash on each slice, 16 hex digits."""
    return "".join(
        f"{xxhash.xxh3_64_intdigest(data[i : i + CHUNK_BYTES]):016x}"
        for i in range(0, len(data), CHUNK_BYTES)
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return boundary_entry(tmp_path)


def test_the_manifest_records_every_chunk_of_every_file(folder: Path) -> None:
    doc = parse_sealed_json((folder / MANIFEST).read_bytes(), folder / MANIFEST)
    assert doc["format"] == "mpiuq-checksums" and doc["version"] == 2
    assert doc["hash"] == HASH_NAME == "xxh3_64" and doc["chunk_bytes"] == CHUNK_BYTES == 4096
    assert sorted(doc["files"]) == sorted(f"f{s}.bin" for s in SIZES)
    for name, (size, chunks) in doc["files"].items():
        data = (folder / name).read_bytes()
        assert size == len(data)
        assert len(chunks) == 16 * -(-size // CHUNK_BYTES)  # ceil: the last chunk shorter
        assert chunks == _reference_chunks(data)
        assert file_digest(folder / name) == (size, chunks)
    assert verify_manifest(folder) == tuple(sorted(doc["files"]))


def boundary_positions(size: int, rng: np.random.Generator, extra: int = 24) -> list[int]:
    """Byte positions of a file of ``size`` bytes where damage is most likely missed: the
    first and last byte, either side of every chunk boundary, plus ``extra`` random ones."""
    edges = {0, size - 1}
    for start in range(0, size, CHUNK_BYTES):
        edges |= {start - 1, start, start + 1, start + CHUNK_BYTES - 1}
    picked = {int(p) for p in rng.integers(0, size, min(extra, size))} if size else set()
    return sorted(p for p in edges | picked if 0 <= p < size)


def test_flips_and_cuts_at_the_chunk_boundaries_are_refused(folder: Path) -> None:
    """Every byte of the manifest flipped and every length cut; in every data file the
    bytes next to each chunk boundary and 24 random ones flipped, the file cut at the same
    places: each refused by the verify step, naming the file (tests/e2e has the exhaustive
    sweep: every byte and every length of every file)."""
    rng = np.random.default_rng(11)
    manifest = folder / MANIFEST
    data = manifest.read_bytes()
    refused = refuse_each(
        folder,
        manifest,
        [flipped(data, p) for p in range(len(data))] + [data[:n] for n in range(len(data))],
    )
    assert refused == 2 * len(data)
    for file in sorted(folder.glob("f*.bin")):
        data = file.read_bytes()
        places = boundary_positions(len(data), rng)
        refuse_each(folder, file, [flipped(data, p) for p in places] + [data[:n] for n in places])
    verify_manifest(folder)  # restored: passes again


def test_a_flip_fails_exactly_its_own_chunk(folder: Path) -> None:
    """What a sweep relies on: a flip changes one chunk's digest and no other."""
    file = folder / f"f{2 * CHUNK_BYTES + 17}.bin"
    _, chunks = file_digest(file)
    data = file.read_bytes()
    for pos in (0, CHUNK_BYTES - 1, CHUNK_BYTES, 2 * CHUNK_BYTES + 16):
        file.write_bytes(flipped(data, pos))
        fails = [k for k in range(len(chunks) // 16) if not chunk_matches(file, chunks, k)]
        assert fails == [pos // CHUNK_BYTES]
        with pytest.raises(ChecksumError, match=f"in bytes {pos // CHUNK_BYTES * CHUNK_BYTES}"):
            verify_manifest(folder)
    file.write_bytes(data)


def test_the_first_damaged_chunk_is_found_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """:func:`first_bad_chunk` on a file of several hashing blocks: ``None`` when intact,
    the chunk of the first of two flips otherwise (against the independent digests), and
    no block after the damaged one is hashed."""
    from mpiuq.simulator import checksums

    block = checksums._BLOCK_CHUNKS * CHUNK_BYTES
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 3 * block + 5, dtype=np.uint8).tobytes()
    file = tmp_path / "big.bin"
    file.write_bytes(data)
    chunks = _reference_chunks(data)
    assert first_bad_chunk(file, chunks) is None
    hashed: list[int] = []
    real = checksums._chunk_digests

    def counting(buf: bytes) -> str:
        hashed.append(len(buf))
        return real(buf)

    monkeypatch.setattr(checksums, "_chunk_digests", counting)
    for first, second in ((0, 5), (block - 1, 3 * block), (block + CHUNK_BYTES, 3 * block + 4)):
        file.write_bytes(flipped(flipped(data, first), second))
        hashed.clear()
        assert first_bad_chunk(file, chunks) == first // CHUNK_BYTES
        assert sum(hashed) == (first // block + 1) * block  # stopped at the damaged block
    file.write_bytes(data)
    # a digest string of another length (a record of another size) never matches
    assert first_bad_chunk(file, chunks[:-16]) == len(chunks) // 16 - 1


def test_ctrl_c_while_hashing_is_not_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt raised while slices of a file's memory map are alive reaches
    the caller as itself (not as the map's ``BufferError`` on closing), and the file
    can be hashed again afterwards."""
    from mpiuq.simulator import checksums

    file = tmp_path / "f.bin"
    file.write_bytes(np.random.default_rng(1).integers(0, 256, 3 * CHUNK_BYTES, np.uint8).tobytes())
    _, chunks = file_digest(file)

    def interrupted(data: memoryview) -> str:
        held = memoryview(data)[:10]  # a live slice when the interrupt arrives
        raise KeyboardInterrupt(len(held))

    monkeypatch.setattr(checksums, "_chunk_digests", interrupted)
    for call in (lambda: file_digest(file), lambda: first_bad_chunk(file, chunks)):
        with pytest.raises(KeyboardInterrupt):
            call()
    monkeypatch.undo()
    assert first_bad_chunk(file, chunks) is None


def _old_manifest(folder: Path) -> None:
    """The manifest as version 1 wrote it: one digest per whole file."""
    files = {
        p.name: [p.stat().st_size, f"{xxhash.xxh3_64_intdigest(p.read_bytes()):016x}"]
        for p in sorted(folder.iterdir())
        if p.name != MANIFEST
    }
    doc = {"format": "mpiuq-checksums", "version": 1, "hash": HASH_NAME, "files": files}
    (folder / MANIFEST).write_text(seal_text(json.dumps(doc, indent=1)))


def test_a_manifest_without_chunks_is_refused(folder: Path) -> None:
    _old_manifest(folder)
    with pytest.raises(ChecksumError, match="earlier version"):
        verify_manifest(folder)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> CacheEntries:
    return small_entries(tmp_path_factory.mktemp("chunk-digests"))


def test_an_old_program_entry_is_discarded_and_rebuilt(small: CacheEntries, tmp_path: Path) -> None:
    work = tmp_path / "cache"
    shutil.copytree(small.cache_dir, work)
    program = work / small.program_dir.name
    _old_manifest(program)
    assert find_cached_program(work / small.trace_entry.name, small.options) is None
    assert not program.exists()  # deleted, not trusted
    # and the whole replay on it rebuilds the entry with the same results
    manifest = small.program_dir / MANIFEST
    original = manifest.read_bytes()
    try:
        _old_manifest(small.program_dir)
        old = manifest.read_bytes()
    finally:
        manifest.write_bytes(original)
    assert replay_outcome(small, manifest, old) == "rebuilt"


def test_an_old_trace_layout_is_discarded_and_parsed_again(
    small: CacheEntries, tmp_path: Path
) -> None:
    work = tmp_path / "cache"
    shutil.copytree(small.cache_dir, work)
    entry = work / small.trace_entry.name
    layout = layout_path(entry)
    doc = parse_sealed_json(layout.read_bytes(), layout)
    del doc["chunks"], doc["chunk_bytes"]
    doc["digest"] = f"{xxhash.xxh3_64_intdigest(entry.read_bytes()):016x}"  # version 1
    layout.write_text(seal_text(json.dumps(doc)))
    with pytest.raises(ChecksumError, match="earlier version"):
        verify_entry(entry)
    where = locate_trace(small.trace_path, cache_dir=work)
    assert where.h5_file is None and not entry.exists()  # never handed to h5py
    trace = read_located(where)  # parsed again and stored with chunk digests
    assert trace.n_ops == small.trace.n_ops
    assert verify_entry(entry)["chunks"] == _reference_chunks(entry.read_bytes())
