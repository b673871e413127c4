"""Damaged cache entries are never used: every single-byte flip and every truncation of
every file of a trace's parse-cache and program-cache entries is refused by the entry's
reader (the caches then delete and rebuild it), and the whole replay on a damaged cache
gives the undamaged results (no silent difference, no false deadlock).

The fast tier sweeps a small TI trace exhaustively (every byte, every length); the slow
tier (``tests/e2e/test_cache_integrity_shared.py``) sweeps every shared TI trace
(``experiments/fuzz/fuzz_cache.py`` prints the counts).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cache_fuzzing import (
    CacheEntries,
    flipped,
    replay_outcome,
    small_entries,
    sweep_file,
)

from mpiuq.simulator.checksums import ChecksumError, seal_text, unseal_text
from mpiuq.simulator.program.cache import find_cached_program
from mpiuq.simulator.trace.read import locate_trace, read_located


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> CacheEntries:
    return small_entries(tmp_path_factory.mktemp("cache-integrity"))


def _names(entries: CacheEntries) -> list[str]:
    return [f.name for f in entries.files()]


def test_the_entries_hold_every_kind_of_file(small: CacheEntries) -> None:
    names = _names(small)
    assert names[0].endswith(".h5") and names[1].endswith(".h5.layout.json")
    for member in ("ops.bin", "value.bin", "wait_list.npy", "meta.json", "cache.json"):
        assert member in names
    assert "checksums.json" in names


@pytest.mark.parametrize(
    "member",
    [
        "trace.h5",
        "trace.h5.layout.json",
        "cache.json",
        "checksums.json",
        "meta.json",
        "ops.bin",
        "rank_ptr.npy",
        "reduce_bytes.npy",
        "reduce_rows.npy",
        "row_ptr.bin",
        "trace_call.npy",
        "trace_rank_ptr.npy",
        "value.bin",
        "wait_list.npy",
    ],
)
def test_every_flip_and_truncation_of_a_small_entry_is_detected(
    small: CacheEntries, member: str
) -> None:
    files = {f.name: f for f in small.files()}
    file = files.get(member) or next(
        f for f in small.files() if f.name.endswith(member.removeprefix("trace"))
    )
    counts = sweep_file(small, file)
    size = file.stat().st_size
    assert counts["flip"] == {"detected": size, "same": 0, "silent": 0}
    assert counts["truncation"] == {"detected": size, "same": 0, "silent": 0}


def test_the_whole_replay_on_a_damaged_cache_rebuilds_and_gives_the_same_results(
    small: CacheEntries,
) -> None:
    """One flip in the middle and one cut of every file: ``mpiuq replay`` discards the entry,
    reads and lowers the trace again (same results), and stores a sound entry."""
    outcomes = []
    for file in small.files():
        data = file.read_bytes()
        for damage in (flipped(data, len(data) // 2), data[: len(data) // 2]):
            outcomes.append((file.name, replay_outcome(small, file, damage)))
    assert all(o == "rebuilt" for _, o in outcomes), outcomes


def test_the_value_bin_flip_of_the_issue_is_not_replayed(small: CacheEntries) -> None:
    """Issue reproducer: one flipped byte of the program cache's ``value.bin`` made replay
    exit 0 with another simulated time, and every later run reused the entry."""
    value = small.program_dir / "value.bin"
    data = value.read_bytes()
    assert replay_outcome(small, value, flipped(data, 3)) == "rebuilt"


def test_the_wait_list_flip_of_the_issue_is_no_false_deadlock(small: CacheEntries) -> None:
    """Issue reproducer: one flipped byte of ``wait_list.npy`` gave "deadlocked ... rank(s)
    blocked forever" on every later replay, blaming the trace."""
    wait = small.program_dir / "wait_list.npy"
    data = wait.read_bytes()
    for pos in (len(data) - 1, len(data) - 4, 130):
        assert replay_outcome(small, wait, flipped(data, pos)) == "rebuilt"


def test_a_damaged_entry_is_deleted_by_the_caches(small: CacheEntries, tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "cache"
    shutil.copytree(small.cache_dir, work)
    program = work / small.program_dir.name
    (program / "ops.bin").write_bytes(flipped((program / "ops.bin").read_bytes(), 0))
    entry = work / small.trace_entry.name
    assert find_cached_program(entry, small.options) is None
    assert not program.exists()  # deleted: written again after the lowering
    entry.write_bytes(flipped(entry.read_bytes(), 100))
    where = locate_trace(small.trace_path, cache_dir=work)
    assert where.h5_file is None and not entry.exists()  # never handed to h5py
    trace = read_located(where)  # parsed again, and stored again
    assert trace.n_ops == small.trace.n_ops and entry.is_file()


def test_sealed_text_refuses_a_changed_or_cut_file() -> None:
    sealed = seal_text('{"a": 1}')
    with pytest.raises(ChecksumError, match="does not match its checksum line"):
        unseal_text(sealed.replace("1", "2", 1), "x.json")
    with pytest.raises(ChecksumError, match="has no checksum line"):
        unseal_text(sealed[:8], "x.json")
