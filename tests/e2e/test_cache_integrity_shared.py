"""Damaged cache entries of every shared TI trace are refused (the sweep of
``tests/integration/test_cache_integrity.py`` over the shared traces' entries)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cache_fuzzing import make_entries, sweep_file
from shared_data import SHARED_TI_TRACES, TRACES, needs_traces

#: Cases per file of a shared trace in the suite (every byte of files up to this size, then
#: both ends and evenly spaced bytes); the exhaustive sweep is
#: ``experiments/fuzz/sweep_cache_chunks.py`` (every byte and length, checked by chunk) and
#: ``experiments/fuzz/fuzz_cache.py`` (through the whole reader and replay).
SHARED_LIMIT = 128


@needs_traces
@pytest.mark.parametrize("name", SHARED_TI_TRACES)
def test_flips_and_truncations_of_the_shared_ti_traces_entries(name: str, tmp_path: Path) -> None:
    """Every file of both entries of a shared TI trace: every byte of files up to
    SHARED_LIMIT bytes, the first and last 4 KiB and evenly spaced bytes of larger ones
    (flips and cuts); all detected."""
    entries = make_entries(TRACES / name, tmp_path / "cache")
    for file in entries.files():
        counts = sweep_file(entries, file, SHARED_LIMIT)
        for kind in ("flip", "truncation"):
            assert counts[kind]["silent"] == 0 and counts[kind]["same"] == 0, (file, counts)
