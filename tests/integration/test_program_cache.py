"""The lowered-program cache (:mod:`mpiuq.simulator.program.cache`).

A second ``mpiuq replay`` of a trace loads its lowered program from the cache instead
of reading and lowering the trace; checked here: the loaded program and every replay
figure (end times, decomposition per rank and per call, events, unmatched messages,
deadlock reports) are bit-identical to the lowering path on TI, DUMPI and OTF2 traces
under the analytic, packet and compute-only models; the key follows the options that
shape the program (compute scale, algorithms, lowering sources, the trace) and not the
others (bandwidths, reduction rate: the combine steps are rewritten); an unusable
entry (truncated column, bad ``meta.json``, missing ``cache.json``, another key) is
ignored, deleted and written again; an edited trace gets a new entry; a failed write
leaves nothing behind; streamed replays neither read nor write the cache.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.main import main
from mpiuq.runtime import replay_progress
from mpiuq.runtime.progress import Progress
from mpiuq.simulator.checksums import MANIFEST, write_manifest
from mpiuq.simulator.collectives import algorithm_set
from mpiuq.simulator.lowering.lower import Lowered, LoweringOptions, lower_trace
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program import cache as program_cache
from mpiuq.simulator.program.cache import (
    find_cached_program,
    load_cached_program,
    program_entry,
    save_cached_program,
)
from mpiuq.simulator.program.file import ProgramFileError
from mpiuq.simulator.replay.run import (
    ReplayDeadlockError,
    ReplayResult,
    ReplaySetup,
    TraceOrigin,
    replay_lowered,
)
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.ir import OpKind, Trace

MODELS = ("packet", "analytic", "compute-only")
PINGPONG = "0 init\n1 init\n0 send 1 0 8\n1 recv 0 0 8\n0 compute 1e6\n0 finalize\n1 finalize\n"


def reducing_trace() -> Trace:
    """Two ranks: compute, an allreduce, a point-to-point message, a barrier."""
    b = TraceBuilder("test", "<reduce>", 2)
    ar, send, recv = b.call_id("MPI_Allreduce"), b.call_id("MPI_Send"), b.call_id("MPI_Recv")
    for r in (0, 1):
        b.add(r, OpKind.COMPUTE, b.call_id("compute"), seconds=1e-4 * (r + 1))
        b.add(r, OpKind.ALLREDUCE, ar, bytes_send=1 << 20, bytes_recv=1 << 20)
    b.add(0, OpKind.SEND, send, peer=1, bytes_send=4096)
    b.add(1, OpKind.RECV, recv, peer=0, bytes_recv=4096)
    for r in (0, 1):
        b.add(r, OpKind.BARRIER, b.call_id("MPI_Barrier"))
    return b.build()


def assert_same_lowered(a: Lowered, b: Lowered) -> None:
    pa, pb = a.program, b.program
    assert (pa.n_ranks, pa.n_requests, pa.n_marks, pa.call_names) == (
        pb.n_ranks,
        pb.n_requests,
        pb.n_marks,
        pb.call_names,
    )
    for name in ("rank_ptr", "ops", "wait_list"):
        assert np.array_equal(getattr(pa, name), getattr(pb, name)), name
    assert pa.wait_list.dtype == pb.wait_list.dtype
    for name in ("nbytes", "seconds"):  # bit for bit (the column's other view included)
        assert getattr(pa, name).tobytes() == getattr(pb, name).tobytes(), name
    assert np.array_equal(a.row_ptr, b.row_ptr)
    assert np.array_equal(a.reduce_rows, b.reduce_rows)
    assert a.reduce_bytes.tobytes() == b.reduce_bytes.tobytes()
    assert list(a.collectives.items()) == list(b.collectives.items())
    assert list(a.algorithms.items()) == list(b.algorithms.items())
    assert a.nonblocking_collectives == b.nonblocking_collectives


def assert_same_origin(a: TraceOrigin, b: TraceOrigin) -> None:
    assert (a.source, a.format, a.n_ranks, a.n_ops, a.call_names, a.notes) == (
        b.source,
        b.format,
        b.n_ranks,
        b.n_ops,
        b.call_names,
        b.notes,
    )
    assert a.unsupported == b.unsupported
    assert np.array_equal(a.rank_ptr, b.rank_ptr) and np.array_equal(a.call, b.call)
    assert a.call.dtype == b.call.dtype


def assert_same_result(a: ReplayResult, b: ReplayResult) -> None:
    """Every figure of two replays, bit for bit, but the wall-clock seconds."""
    da, db = a.as_dict(), b.as_dict()
    for d in (da, db):
        d.pop("lowering_s")
        for m in d["models"].values():
            m.pop("wall_s")
    assert json.dumps(da) == json.dumps(db)  # same keys in the same order, same values
    for ma, mb in zip(a.models, b.models, strict=True):
        assert ma.end_s.tobytes() == mb.end_s.tobytes()
        assert ma.per_rank_s.tobytes() == mb.per_rank_s.tobytes()
        assert ma.per_call == mb.per_call
        assert (ma.events, ma.n_unmatched, ma.unmatched) == (
            mb.events,
            mb.n_unmatched,
            mb.unmatched,
        )
        assert ma.simulated_time_s == mb.simulated_time_s


def replay_path(path: Path, cache: Path, setup: ReplaySetup, **kw: Any) -> ReplayResult:
    return replay_progress.replay_file_with_progress(
        Progress(quiet=True), path, kw.pop("params", SimParams()), setup, cache_dir=cache, **kw
    )


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.mpiuqprog"))


def forbid_reading_and_lowering(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the trace was read or lowered")

    monkeypatch.setattr(replay_progress, "read_with_progress", refuse)
    monkeypatch.setattr("mpiuq.simulator.replay.run.lower_trace", refuse)


@needs_traces
@pytest.mark.parametrize(
    "name",
    [
        "ti_minife_16r/minife_16r.txt",  # any-source receives, partial wait-alls
        "otf2_sstmac_mpi_coverage_10r",  # 7 collective kinds, sub-communicators, I-collectives
        "dumpi_sstmac_testbgp_7r",  # comm_create, alltoall
        "gen_dumpi_lulesh_8r",
    ],
)
def test_second_replay_loads_the_program_with_identical_results(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = ReplaySetup(models=MODELS, algorithms=tuple(algorithm_set("mpich").items()))
    first = replay_path(TRACES / name, tmp_path, setup)
    assert len(entries(tmp_path)) == 1
    with monkeypatch.context() as m:
        forbid_reading_and_lowering(m)
        second = replay_path(TRACES / name, tmp_path, setup, threads=2)
    assert_same_result(first, second)
    # other bandwidths: the same entry, results as lowering under them
    params = SimParams(memory_bw_GBps=3.0, link_bw_GBps=10.5)
    with monkeypatch.context() as m:
        forbid_reading_and_lowering(m)
        other = replay_path(TRACES / name, tmp_path, setup, params=params)
    shutil.rmtree(entries(tmp_path)[0])
    lowered = replay_path(TRACES / name, tmp_path, setup, params=params)
    assert_same_result(other, lowered)
    assert len(entries(tmp_path)) == 1


@needs_traces
def test_cached_program_is_the_lowering_of_a_ti_trace(tmp_path: Path) -> None:
    from mpiuq.simulator.trace.read import locate_trace, read_located

    where = locate_trace(TRACES / "ti_nas_mg_A_64r", cache_dir=tmp_path)
    trace = read_located(where)
    options = LoweringOptions(compute_scale=0.1, algorithms=(("allreduce", "ring"),))
    low = lower_trace(trace, options)
    assert save_cached_program(where.entry, options, low, TraceOrigin.of(trace)) is not None
    found = find_cached_program(where.entry, options)
    assert found is not None
    assert_same_lowered(found.lowered, low)
    assert_same_origin(found.origin, TraceOrigin.of(trace))


def test_other_reduction_rate_rewrites_the_combine_steps(tmp_path: Path) -> None:
    trace = reducing_trace()
    entry = tmp_path / "k.h5"
    slow, fast = LoweringOptions(reduce_rate_Bps=3e9), LoweringOptions(reduce_rate_Bps=7.7e9)
    low_slow = lower_trace(trace, slow)
    assert low_slow.reduce_rows.size > 0
    save_cached_program(entry, slow, low_slow, TraceOrigin.of(trace))
    assert program_entry(entry, slow) == program_entry(entry, fast)
    found = find_cached_program(entry, fast)
    assert found is not None
    assert_same_lowered(found.lowered, lower_trace(trace, fast))
    found = find_cached_program(entry, slow)
    assert found is not None
    assert_same_lowered(found.lowered, low_slow)


def test_free_reductions_are_stored_as_null_and_reused_at_any_rate(tmp_path: Path) -> None:
    """An infinite rate (free reductions, ``--like simgrid``) has no JSON number: it is
    written as null, read back as infinite, and rewritten to and from finite rates."""
    trace = reducing_trace()
    entry = tmp_path / "k.h5"
    free, slow = LoweringOptions(reduce_rate_Bps=math.inf), LoweringOptions(reduce_rate_Bps=3e9)
    low_free = lower_trace(trace, free)
    assert np.all(low_free.program.seconds[low_free.reduce_rows] == 0.0)
    path = save_cached_program(entry, free, low_free, TraceOrigin.of(trace))
    assert path is not None
    assert json.loads((path / "cache.json").read_text())["reduce_rate_Bps"] is None
    found = find_cached_program(entry, free)
    assert found is not None
    assert_same_lowered(found.lowered, low_free)
    found = find_cached_program(entry, slow)
    assert found is not None
    assert_same_lowered(found.lowered, lower_trace(trace, slow))


def test_combine_steps_rewritten_to_infinite_seconds_are_refused(tmp_path: Path) -> None:
    """Bytes that pass the entry's check (finite, > 0) but overflow at another rate."""
    trace = reducing_trace()
    entry = tmp_path / "k.h5"
    written, tiny = LoweringOptions(reduce_rate_Bps=3e9), LoweringOptions(reduce_rate_Bps=1e-10)
    path = save_cached_program(entry, written, lower_trace(trace, written), TraceOrigin.of(trace))
    assert path is not None
    nbytes = np.load(path / "reduce_bytes.npy")
    np.save(path / "reduce_bytes.npy", np.full_like(nbytes, 1e300))
    reseal(path)
    assert find_cached_program(entry, written) is not None  # at the written rate: usable
    with pytest.raises(ProgramFileError, match="combine steps of infinite seconds"):
        load_cached_program(path, "k", tiny)


def test_key_follows_the_options_that_shape_the_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = tmp_path / "k.h5"
    base = program_entry(entry, LoweringOptions())
    assert base.parent == tmp_path and base.name.startswith("k-") and base.suffix == ".mpiuqprog"
    same = [
        LoweringOptions(reduce_rate_Bps=1e9),
        LoweringOptions(algorithms=()),
        LoweringOptions(compute_scale=1),
    ]
    assert {program_entry(entry, o) for o in same} == {base}
    other = [
        LoweringOptions(compute_scale=0.1),
        LoweringOptions(compute_scale=np.nextafter(1.0, 2.0)),
        LoweringOptions(algorithms=(("allreduce", "ring"),)),
        LoweringOptions(algorithms=(("allreduce", "ring"), ("bcast", "binomial"))),
    ]
    names = {program_entry(entry, o) for o in other}
    assert len(names) == len(other) and base not in names
    assert program_entry(tmp_path / "j.h5", LoweringOptions()) != base
    monkeypatch.setattr(program_cache, "_sources_digest", lambda: "0" * 64)  # edited lowering
    assert program_entry(entry, LoweringOptions()) != base
    # setups differing in bandwidths (and so in the reduction rate) share the key
    setup = ReplaySetup()
    a = setup.lowering_options(SimParams())
    b = setup.lowering_options(SimParams(memory_bw_GBps=1.0, link_bw_GBps=10.5))
    assert program_entry(entry, a) == program_entry(entry, b)
    c = ReplaySetup(compute_scale=0.5).lowering_options(SimParams())
    assert program_entry(entry, c) != program_entry(entry, a)


def reseal(path: Path) -> None:
    """Record the present members' checksums, as a program editing the entry and its
    ``checksums.json`` would: the entry's own checks below the checksums are reached."""
    write_manifest(path, [f.name for f in path.iterdir() if f.name != MANIFEST])


def _flip(path: Path) -> None:
    value = path / "value.bin"
    data = bytearray(value.read_bytes())
    data[3] ^= 0xFF  # the reproducer: replayed with another simulated time
    value.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    ops = path / "ops.bin"
    os.truncate(ops, ops.stat().st_size - 32)


def _bad_meta(path: Path) -> None:
    (path / "meta.json").write_text('{"version": 1, "n_ranks": ')


def _no_cache_json(path: Path) -> None:
    (path / "cache.json").unlink()


def _other_key(path: Path) -> None:
    doc = json.loads((path / "cache.json").read_text())
    doc["compute_scale"] = (0.5).hex()
    (path / "cache.json").write_text(json.dumps(doc))


def _bad_trace_calls(path: Path) -> None:
    np.save(path / "trace_call.npy", np.full(3, 99, dtype=np.int16))


def _bad_reduce_rows(path: Path) -> None:
    rows = np.load(path / "reduce_rows.npy")
    np.save(path / "reduce_rows.npy", rows + 1)  # rows that are not combine steps


def _bad_rank_ptr(path: Path) -> None:
    ptr = np.load(path / "trace_rank_ptr.npy")
    ptr[1] += 1
    np.save(path / "trace_rank_ptr.npy", ptr)


def _bad_op_kind(path: Path) -> None:
    ops = np.fromfile(path / "ops.bin", dtype="<i4")
    ops[0] = 99  # the first row's operation code
    ops.tofile(path / "ops.bin")


def _infinite_reduce_bytes(path: Path) -> None:
    nbytes = np.load(path / "reduce_bytes.npy")
    nbytes[0] = np.inf
    np.save(path / "reduce_bytes.npy", nbytes)


def _bad_rank_ptr_and_op_kind(path: Path) -> None:
    _bad_rank_ptr(path)
    _bad_op_kind(path)


DAMAGES = {
    "flipped byte": (_flip, r"value\.bin: checksums: does not match its checksum"),
    "cut ops.bin": (_truncate, r"ops\.bin: checksums: holds \d+ bytes, expected \d+"),
    "truncated ops.bin": (_truncate, r"ops\.bin: holds \d+ bytes, expected \d+ \(truncated\)"),
    "bad meta.json": (_bad_meta, r"meta\.json: is not readable JSON"),
    "no cache.json": (_no_cache_json, r"cache\.json: is missing"),
    "other key": (_other_key, r"cache\.json: compute_scale: is '0x1\.0+p-1', expected .*stale"),
    "bad trace calls": (_bad_trace_calls, r"trace_call\.npy: has 3 entries, expected \d+"),
    "bad reduce rows": (_bad_reduce_rows, r"not the program's combine steps"),
    "bad rank offsets": (_bad_rank_ptr, r"row_ptr: does not map the trace's ranks"),
    "bad operation code": (_bad_op_kind, r"program: is invalid \(unknown operation code 99"),
    "infinite combine bytes": (_infinite_reduce_bytes, r"not the program's combine steps"),
    # checked at once on two threads: the row map's error is the one raised
    "both": (_bad_rank_ptr_and_op_kind, r"row_ptr: does not map the trace's ranks"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_entry_is_ignored_and_written_again(tmp_path: Path, damage: str) -> None:
    trace = reducing_trace()
    entry, options = tmp_path / "k.h5", LoweringOptions()
    low = lower_trace(trace, options)
    path = save_cached_program(entry, options, low, TraceOrigin.of(trace))
    assert path is not None
    spoil, message = DAMAGES[damage]
    spoil(path)
    if damage not in ("flipped byte", "cut ops.bin"):
        reseal(path)  # past the checksums: the entry's own checks
    with pytest.raises(ProgramFileError, match=message):  # the caller named the entry
        load_cached_program(path, "k", options)
    assert find_cached_program(entry, options) is None  # the replay's lookup: absent
    assert not path.exists()  # deleted
    assert save_cached_program(entry, options, low, TraceOrigin.of(trace)) == path
    found = find_cached_program(entry, options)
    assert found is not None
    assert_same_lowered(found.lowered, low)


def replayed_pingpong(tmp_path: Path) -> tuple[Path, Path, ReplaySetup, ReplayResult]:
    """A two-rank TI trace, its cache folder, the setup, and its first replay."""
    ti = tmp_path / "pp.txt"
    ti.write_text(PINGPONG)
    setup = ReplaySetup(models=("analytic",))
    return ti, tmp_path / "cache", setup, replay_path(ti, tmp_path / "cache", setup)


def test_damaged_entry_through_the_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ti, cache, setup, first = replayed_pingpong(tmp_path)
    (path,) = entries(cache)
    _truncate(path)
    second = replay_path(ti, cache, setup)  # read and lowered again, the entry rewritten
    assert_same_result(first, second)
    assert entries(cache) == [path]
    with monkeypatch.context() as m:
        forbid_reading_and_lowering(m)
        assert_same_result(first, replay_path(ti, cache, setup))


def test_edited_trace_is_lowered_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ti, cache, setup, first = replayed_pingpong(tmp_path)
    ti.write_text(PINGPONG.replace("compute 1e6", "compute 3e6"))
    st = ti.stat()
    os.utime(ti, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    second = replay_path(ti, cache, setup)
    assert len(entries(cache)) == 2  # a new trace key: a new entry
    assert second.model("analytic").simulated_time_s > first.model("analytic").simulated_time_s
    with monkeypatch.context() as m:
        forbid_reading_and_lowering(m)
        assert_same_result(second, replay_path(ti, cache, setup))


def test_failed_write_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = reducing_trace()
    entry, options = tmp_path / "k.h5", LoweringOptions()
    low = lower_trace(trace, options)

    def full_disk(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(program_cache.np, "save", full_disk)
    assert save_cached_program(entry, options, low, TraceOrigin.of(trace)) is None
    assert list(tmp_path.iterdir()) == []
    stale = tmp_path / f"{program_entry(entry, options).name}.part1"
    stale.mkdir()
    os.utime(stale, (0, 0))  # a killed run's leftover, long ago
    monkeypatch.undo()
    path = save_cached_program(entry, options, low, TraceOrigin.of(trace))
    assert path is not None and list(tmp_path.iterdir()) == [path]


def test_deadlock_is_reported_from_the_cached_program(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 2)
    recv = b.call_id("MPI_Recv")
    b.add(0, OpKind.COMPUTE, b.call_id("compute"), seconds=1e-6)
    b.add(0, OpKind.RECV, recv, peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, recv, peer=0, bytes_recv=8)
    trace = b.build()
    entry, options = tmp_path / "k.h5", LoweringOptions()
    setup = ReplaySetup(models=("analytic",))
    low = lower_trace(trace, options)
    save_cached_program(entry, options, low, TraceOrigin.of(trace))
    found = find_cached_program(entry, options)
    assert found is not None
    with pytest.raises(ReplayDeadlockError) as fresh:
        replay_lowered(TraceOrigin.of(trace), low, SimParams(), setup)
    with pytest.raises(ReplayDeadlockError) as cached:
        replay_lowered(found.origin, found.lowered, SimParams(), setup)
    assert str(cached.value) == str(fresh.value)
    assert "rank 0 at trace operation 1 (MPI_Recv)" in str(cached.value)


def test_cli_second_run_prints_the_same_but_the_lowering_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ti = tmp_path / "pp.txt"
    ti.write_text(PINGPONG)
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(tmp_path / "cache"))
    outputs, errs = [], []
    for _ in range(2):
        assert main(["replay", str(ti), "--model", "analytic,packet", "--json"]) == 0
        out, err = capsys.readouterr()
        outputs.append(json.loads(out))
        errs.append(err)
    assert "reading " in errs[0] and "lowering: " in errs[0] and "cache" not in errs[0]
    assert "reading " not in errs[1] and "not read: its lowered program is cached" in errs[1]
    assert "operations loaded from the cache (" in errs[1]
    first, second = outputs
    for d in outputs:
        d.pop("lowering_s")
        for m in d["models"].values():
            m.pop("wall_s")
    assert first == second
    assert main(["replay", str(ti), "--model", "analytic"]) == 0
    table = capsys.readouterr().out
    assert "(ti, 2 ranks, 3 operations -> " in table


def test_streamed_replay_neither_reads_nor_writes_the_cache(tmp_path: Path) -> None:
    ti = tmp_path / "pp.txt"
    ti.write_text(PINGPONG)
    cache, scratch = tmp_path / "cache", tmp_path / "scratch"
    scratch.mkdir()
    setup = ReplaySetup(models=("analytic",))
    streamed = replay_path(ti, cache, setup, stream="on", scratch=scratch)
    assert entries(cache) == []
    whole = replay_path(ti, cache, setup, stream="off")
    assert len(entries(cache)) == 1
    again = replay_path(ti, cache, setup, stream="on", scratch=scratch)
    assert_same_result(streamed, whole)
    assert_same_result(again, whole)
    assert list(scratch.iterdir()) == []


def test_no_cache_no_entry(tmp_path: Path) -> None:
    ti = tmp_path / "pp.txt"
    ti.write_text(PINGPONG)
    cache = tmp_path / "cache"
    replay_path(ti, cache, ReplaySetup(models=("analytic",)), use_cache=False)
    assert not cache.exists() or entries(cache) == []
    assert find_cached_program(None, LoweringOptions()) is None


def test_entry_stored_meanwhile_by_another_run_is_kept(tmp_path: Path) -> None:
    trace = reducing_trace()
    entry, options = tmp_path / "k.h5", LoweringOptions()
    low = lower_trace(trace, options)
    first = save_cached_program(entry, options, low, TraceOrigin.of(trace))
    assert first is not None
    inode = (first / "ops.bin").stat().st_ino
    assert save_cached_program(entry, options, low, TraceOrigin.of(trace)) == first
    assert (first / "ops.bin").stat().st_ino == inode  # not replaced under a reader
    assert list(tmp_path.iterdir()) == [first]  # no temporary entry left


def test_entry_is_not_written_without_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = reducing_trace()
    entry, options = tmp_path / "k.h5", LoweringOptions()
    low = lower_trace(trace, options)
    usage = shutil.disk_usage(tmp_path)
    need = program_cache.ENTRY_BYTES_PER_ROW * low.program.n_ops + 10 * trace.n_ops
    monkeypatch.setattr(
        program_cache.shutil, "disk_usage", lambda _p: usage._replace(free=2 * need - 1)
    )
    assert save_cached_program(entry, options, low, TraceOrigin.of(trace)) is None
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(
        program_cache.shutil, "disk_usage", lambda _p: usage._replace(free=2 * need)
    )
    assert save_cached_program(entry, options, low, TraceOrigin.of(trace)) is not None
