"""Exhaustive: every flip and every cut of every file of a cache entry refused.

The entry of tests/integration/test_cache_chunk_digests.py (files around the chunk
boundaries and the manifest): every byte of every file flipped, every file cut to every
shorter length (about 43,000 verify steps; the integration tier checks the places next to
the chunk boundaries and a random sample).
"""

from __future__ import annotations

from pathlib import Path

from cache_fuzzing import flipped
from chunk_boundaries import boundary_entry, refuse_each

from mpiuq.simulator.checksums import verify_manifest


def test_every_flip_and_every_cut_of_every_file_is_refused(tmp_path: Path) -> None:
    folder = boundary_entry(tmp_path)
    refused = 0
    for file in sorted(folder.iterdir()):
        data = file.read_bytes()
        refused += refuse_each(
            folder,
            file,
            [flipped(data, p) for p in range(len(data))] + [data[:n] for n in range(len(data))],
        )
    assert refused == 2 * sum(p.stat().st_size for p in folder.iterdir())
    verify_manifest(folder)  # restored: passes again
