"""A cache entry whose files sit around the chunk boundaries of the manifest's digests,
and the check that damaged versions of one of its files are refused.

Shared by ``tests/integration/test_cache_chunk_digests.py`` (the boundaries and a random
sample) and ``tests/e2e/test_cache_chunk_digests_exhaustive.py`` (every byte).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.checksums import CHUNK_BYTES, ChecksumError, verify_manifest, write_manifest

#: Sizes around the chunk boundaries: empty, one byte, a chunk less one, one chunk, ...
SIZES = (0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES + 17)


def boundary_entry(tmp_path: Path) -> Path:
    """A folder with a file of every size of :data:`SIZES` (random bytes) and its manifest."""
    rng = np.random.default_rng(7)
    entry = tmp_path / "entry"
    entry.mkdir()
    for size in SIZES:
        (entry / f"f{size}.bin").write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
    write_manifest(entry, [p.name for p in entry.iterdir()])
    return entry


def refuse_each(folder: Path, file: Path, damaged: list[bytes]) -> int:
    """Write every damaged version of ``file`` in turn: each must be refused by the verify
    step, naming the file (or the folder, for the manifest); ``file`` is restored after.
    Returns how many were refused."""
    data = file.read_bytes()
    for version in damaged:
        file.write_bytes(version)
        with pytest.raises(ChecksumError, match=f"{file.name}|{folder.name}"):
            verify_manifest(folder)
    file.write_bytes(data)
    return len(damaged)
