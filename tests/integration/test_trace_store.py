"""Storing a parsed trace's cache entry apart from the parse (``read_located(store=False)``,
``store_trace``), and a first replay storing it while it is lowered and its model runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import TRACES, needs_traces

from mpiuq.runtime import replay_progress
from mpiuq.runtime.progress import Progress
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.run import ReplaySetup, replay
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.read import locate_trace, read_located, store_trace

SMALL = TRACES / "ti_hpcg_16r"


@needs_traces
def test_parse_without_store_then_store_gives_the_entry_of_a_read(tmp_path: Path) -> None:
    where = locate_trace(SMALL, cache_dir=tmp_path)
    parsed = read_located(where, store=False)
    assert where.entry is not None and not where.entry.exists()
    assert where.h5_file is None
    assert store_trace(parsed, where) == where.entry
    stamp = where.entry.stat().st_mtime_ns
    # from the entry now (not parsed again), and the same trace
    assert read_located(where).digest() == parsed.digest()
    assert store_trace(parsed, where) == where.entry  # there already: not written again
    assert where.entry.stat().st_mtime_ns == stamp
    # read_trace stores as before
    other = tmp_path / "other"
    read_trace(SMALL, cache_dir=other)
    assert [p.name for p in other.glob("*.h5")] == [where.entry.name]


@needs_traces
def test_store_without_cache_or_with_an_unwritable_one_returns_none(tmp_path: Path) -> None:
    no_cache = locate_trace(SMALL, use_cache=False)
    trace = read_located(no_cache)
    assert store_trace(trace, no_cache) is None
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    unwritable = locate_trace(SMALL, cache_dir=blocker / "cache")
    assert store_trace(trace, unwritable) is None  # no error: the read is not stopped
    assert not (blocker / "cache").exists()


@needs_traces
def test_first_replay_stores_the_trace_while_it_runs_with_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = ReplaySetup(models=("analytic",))
    stores: list[str] = []
    real_store = replay_progress.store_trace

    def spy(trace: object, where: object) -> Path | None:
        import threading

        stores.append(threading.current_thread().name)
        return real_store(trace, where)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_progress, "store_trace", spy)
    first = replay_progress.replay_file_with_progress(
        Progress(quiet=True), SMALL, SimParams(), setup, cache_dir=tmp_path, stream="off"
    )
    assert len(stores) == 1 and stores[0].startswith("program-cache")  # not on the main thread
    where = locate_trace(SMALL, cache_dir=tmp_path)
    assert where.h5_file is not None
    reference = replay(read_trace(SMALL, use_cache=False), setup=setup)
    assert first.models[0].decomposition == reference.models[0].decomposition
    assert read_located(where).digest() == read_trace(SMALL, use_cache=False).digest()
