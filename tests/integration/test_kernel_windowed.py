"""The windowed kernel (simulator.streaming): a program read through per-rank windows of
a few rows gives the in-memory run bit for bit (events, their order, every float), its
deadlock reports and its bad-window errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.simulator.benchmarks.run import BenchmarkSetup, benchmark_program
from mpiuq.simulator.engine import RunResult, simulate
from mpiuq.simulator.errors import DeadlockError, SettingError
from mpiuq.simulator.lowering.blocks import lower_trace_blocks
from mpiuq.simulator.lowering.lower import Lowered, lower_trace
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.networks import network_by_name
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.file import ProgramFile
from mpiuq.simulator.program.source import ProgramSlices, ProgramSource, wait_rooms
from mpiuq.simulator.program.table import Program, ProgramBuilder
from mpiuq.simulator.replay.run import (
    ReplayDeadlockError,
    ReplaySetup,
    TraceOrigin,
    lower_for_replay,
    network_and_nodes,
    replay_lowered,
)
from mpiuq.simulator.replay.windowed import (
    MAX_WINDOW_ROWS,
    FileLowering,
    WindowStats,
    simulate_windowed,
)
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.cache.store import save_trace
from mpiuq.simulator.trace.ir import OpKind, Trace

WINDOWS = (1, 2, 3, 7, 64)
P = SimParams()


def assert_identical(a: RunResult, b: RunResult) -> None:
    assert a.n_events == b.n_events
    for name in ("end_s", "parts_s", "per_call_s", "marks_s", "link_bytes", "matched_recv"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), name  # bits, NaN marks too
    assert a.unmatched_sends == b.unmatched_sends
    assert a.call_names == b.call_names


def check_windows(program: Program, windows: tuple[int, ...] = WINDOWS, **kw: object) -> None:
    whole = simulate(program, P, **kw)  # type: ignore[arg-type]
    for w in windows:
        stats = WindowStats()
        run = simulate_windowed(ProgramSlices(program), P, window_rows=w, stats=stats, **kw)  # type: ignore[arg-type]
        assert_identical(whole, run)
        longest = int(np.diff(program.rank_ptr).max())
        if w < longest:
            assert stats.stops > 0  # the windows did run dry and were refilled


@pytest.mark.parametrize("bench", ["pingpong", "stream"])
def test_benchmark_programs_windowed_equal_in_memory(bench: str) -> None:
    program = benchmark_program(BenchmarkSetup(bench, window=8, repetitions=3), 70_000)
    check_windows(program)


def motif_program(motif: str, n_ranks: int, **kw: object) -> Program:
    trace = synthesize(MotifSpec(motif, n_ranks=n_ranks, iterations=3, compute_s=1e-6, **kw))  # type: ignore[arg-type]
    return lower_trace(trace).program


@pytest.mark.parametrize(
    ("motif", "n_ranks", "model"),
    [
        ("halo3d", 27, "analytic"),
        ("halo3d", 8, "packet"),
        ("sweep", 16, "analytic"),
        ("random", 12, "packet"),
        ("alltoall", 6, "compute-only"),
        ("allreduce", 9, "analytic"),
    ],
)
def test_motif_programs_windowed_equal_in_memory(motif: str, n_ranks: int, model: str) -> None:
    program = motif_program(motif, n_ranks)
    setup = ReplaySetup(models=(model,))
    factory, nodes = network_and_nodes(setup, n_ranks)
    check_windows(program, network=factory(model), node_of_rank=nodes)


def test_any_source_receives_matched_after_their_rows_left_the_window() -> None:
    # rank 1 posts wildcard and specific receives long before the messages arrive: the
    # matching reads their envelopes when their rows are out of a 1-row window
    b = ProgramBuilder(n_ranks=3)
    reqs = [b.irecv(1, source=-1, nbytes=8, tag=5), b.irecv(1, source=2, nbytes=8, tag=-1)]
    reqs += [b.irecv(1, source=0, nbytes=1 << 20, tag=7)]
    for _ in range(4):
        b.compute(1, 1e-6)
    b.compute(0, 1e-3)
    b.send(0, 1, 1 << 20, tag=7)
    b.send(0, 1, 8, tag=5)
    b.compute(2, 2e-3)
    b.send(2, 1, 8, tag=9)
    b.waitall(1, reqs)
    check_windows(b.build(), (1, 2, 3))


def test_progress_reaches_one_and_results_do_not_change() -> None:
    program = motif_program("halo3d", 8)
    seen: list[float] = []
    run = simulate_windowed(ProgramSlices(program), P, window_rows=2, on_progress=seen.append)
    assert seen[-1] == 1.0
    assert_identical(simulate(program, P), run)


def test_wait_rooms_equal_the_kernels() -> None:
    from mpiuq.simulator.kernel import wait_offsets

    program = motif_program("halo3d", 27)
    expected = wait_offsets(program.rank_ptr, program.ops)
    assert np.array_equal(wait_rooms(ProgramSlices(program)), expected)
    assert np.array_equal(wait_rooms(program), expected)


def deadlocked_program() -> Program:
    b = ProgramBuilder(n_ranks=3)
    b.compute(0, 1e-6)
    b.send(0, 1, 100, tag=1)
    b.recv(1, 0, 100, tag=2)  # never sent: rank 1 waits forever
    b.compute(2, 1e-6)
    b.recv(2, 0, 100)  # rank 0 never sends to 2
    b.send(2, 0, 64)  # unmatched
    return b.build()


def test_deadlock_reports_are_those_of_the_in_memory_run() -> None:
    program = deadlocked_program()
    with pytest.raises(DeadlockError) as whole:
        simulate(program, P)
    for w in (1, 2, 64):
        with pytest.raises(DeadlockError) as windowed:
            simulate_windowed(ProgramSlices(program), P, window_rows=w)
        assert str(windowed.value) == str(whole.value)
        assert windowed.value.blocked == whole.value.blocked


@pytest.mark.parametrize("bad", [0, -1, float("nan"), 2.5, MAX_WINDOW_ROWS + 1, "8", True])
def test_bad_window_sizes_are_refused_naming_the_value(bad: object) -> None:
    program = motif_program("halo3d", 8)
    with pytest.raises(SettingError, match=rf"window_rows={bad!r} is invalid: expected a whole"):
        simulate_windowed(ProgramSlices(program), P, window_rows=bad)  # type: ignore[arg-type]


#: Shared traces of several formats and features (any-source receives, partial waitalls,
#: sub-communicators, I-collectives); ``experiments/checks/windowed_identity.py``
#: replays every shared trace.
SHARED = [
    "ti_minife_16r/minife_16r.txt",
    "otf2_sstmac_mpi_coverage_10r",
    "dumpi_sstmac_testbgp_7r",
    "gen_ti_lulesh_8r",
]


@needs_traces
@pytest.mark.parametrize("name", SHARED)
def test_shared_traces_windowed_equal_in_memory(name: str, tmp_path: Path) -> None:
    from mpiuq.simulator.trace import read_trace

    trace = read_trace(TRACES / name, cache_dir=tmp_path)
    setup = ReplaySetup(models=("analytic", "compute-only", "packet"))
    program = lower_trace(trace, setup.lowering_options(P)).program
    factory, nodes = network_and_nodes(setup, trace.n_ranks)
    for model in setup.models:
        net = network_by_name(model) if nodes is None else factory(model)
        # windows of 1-3 rows stop the loop at nearly every row (45 us each): the motifs
        # and benchmarks above test them; experiments/checks/windowed_identity.py runs
        # them on every shared trace
        check_windows(program, (7, 64), network=net, node_of_rank=nodes)


@dataclass
class Streamed:
    """A lowered trace whose program is read through a ProgramSource (a StreamedLowering)."""

    low: Lowered
    program: ProgramSlices
    collectives: dict[str, int]
    algorithms: dict[str, list[str]]
    nonblocking_collectives: int

    def trace_op(self, row: int) -> int:
        return self.low.trace_op(row)


def streamed(low: Lowered) -> Streamed:
    return Streamed(
        low,
        ProgramSlices(low.program),
        low.collectives,
        low.algorithms,
        low.nonblocking_collectives,
    )


def test_replay_of_a_streamed_lowering_equals_the_in_memory_replay() -> None:
    from test_replay_scale import assert_same_replays

    trace = synthesize(MotifSpec("halo3d", n_ranks=27, iterations=2, compute_s=1e-6))
    setup = ReplaySetup(models=("packet", "analytic", "compute-only"))
    low, _ = lower_for_replay(trace, P, setup)
    origin = TraceOrigin.of(trace)
    whole = replay_lowered(origin, low, P, setup)
    assert_same_replays(whole, replay_lowered(origin, streamed(low), P, setup, window_rows=3))


def program_file_of(trace: Trace, setup: ReplaySetup, folder: Path) -> Path:
    save_trace(trace, folder / "t.h5")
    options = setup.lowering_options(P)
    return lower_trace_blocks(
        folder / "t.h5", options, folder / "p.mpiuqprog", ranks_per_block=5
    ).path


def test_program_file_of_the_block_lowering_windowed_equals_in_memory(tmp_path: Path) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=27, iterations=2, compute_s=1e-6))
    setup = ReplaySetup(models=("packet", "analytic"))
    program = lower_trace(trace, setup.lowering_options(P)).program
    factory, nodes = network_and_nodes(setup, trace.n_ranks)
    with ProgramFile.open(program_file_of(trace, setup, tmp_path)) as pf:
        assert isinstance(pf, ProgramSource)
        for model in setup.models:
            whole = simulate(program, P, factory(model), node_of_rank=nodes)
            for w in (1, 3, 64):
                run = simulate_windowed(pf, P, factory(model), window_rows=w, node_of_rank=nodes)
                assert_identical(whole, run)


def test_replay_of_a_program_file_equals_the_in_memory_replay(tmp_path: Path) -> None:
    from test_replay_scale import assert_same_replays

    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2, compute_s=1e-6))
    setup = ReplaySetup(models=("packet", "analytic", "compute-only"))
    low, _ = lower_for_replay(trace, P, setup)
    origin = TraceOrigin.of(trace)
    with ProgramFile.open(program_file_of(trace, setup, tmp_path)) as pf:
        streamed_file = FileLowering(pf)
        rows = [0, 1, 17, low.program.n_ops - 1, low.program.n_ops]
        assert [streamed_file.trace_op(g) for g in rows] == [low.trace_op(g) for g in rows]
        run = replay_lowered(origin, streamed_file, P, setup, window_rows=2)
    assert_same_replays(replay_lowered(origin, low, P, setup), run)


def test_replay_deadlock_through_windows_names_the_same_operations(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 3)
    recv = b.call_id("MPI_Recv")
    for r in range(3):
        b.add(r, OpKind.COMPUTE, b.call_id("compute"), seconds=1e-6 * (r + 1))
    b.add(0, OpKind.RECV, recv, peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, recv, peer=2, bytes_recv=8)
    b.add(2, OpKind.RECV, recv, peer=0, bytes_recv=8)
    trace = b.build()
    setup = ReplaySetup(models=("analytic",))
    low, _ = lower_for_replay(trace, P, setup)
    origin = TraceOrigin.of(trace)
    with pytest.raises(ReplayDeadlockError) as whole:
        replay_lowered(origin, low, P, setup)
    with pytest.raises(ReplayDeadlockError) as in_memory:
        replay_lowered(origin, streamed(low), P, setup, window_rows=1)
    path = program_file_of(trace, setup, tmp_path)
    with ProgramFile.open(path) as pf, pytest.raises(ReplayDeadlockError) as from_file:
        replay_lowered(origin, FileLowering(pf), P, setup, window_rows=1)
    assert str(in_memory.value) == str(from_file.value) == str(whole.value)
