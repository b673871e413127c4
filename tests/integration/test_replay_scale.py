"""What makes the issue-15 scale case fit: the lowering's one value column, the kernel's
int32 request arrays, the unmatched-send scan in blocks, and models run in threads.

Each is checked against the plain path it replaces: two separate columns, the scan
over the whole program, the models one after the other. Results must be bit-identical.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.main import main
from mpiuq.simulator import engine
from mpiuq.simulator.engine import simulate
from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.lowering.lower import Lowered, LoweringOptions, lower_trace
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.networks import network_by_name
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.placement import place_ranks
from mpiuq.simulator.program.table import Op, Program
from mpiuq.simulator.replay.run import ReplayDeadlockError, ReplayResult, ReplaySetup, replay
from mpiuq.simulator.topologies import topology_for_ranks
from mpiuq.simulator.trace import read_trace, save_trace
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.ir import OpKind, Trace

P = SimParams()
MODELS = ("compute-only", "packet", "analytic")  # not the order the threads start them in


def halo() -> Trace:
    """A small issue-15 motif: 26-neighbour halo exchange, compute, an allreduce each step."""
    spec = MotifSpec("halo3d", n_ranks=64, iterations=3, compute_s=2e-5, allreduce_every=1)
    return synthesize(spec)


def comparable(result: ReplayResult) -> dict[str, object]:
    """The result's JSON without wall-clock seconds."""
    d = result.as_dict()
    d.pop("lowering_s")
    for m in d["models"].values():
        m.pop("wall_s")
    return d


def assert_same_replays(a: ReplayResult, b: ReplayResult) -> None:
    assert [m.model for m in a.models] == [m.model for m in b.models]
    for ma, mb in zip(a.models, b.models, strict=True):
        for name in ("end_s", "per_rank_s"):
            x, y = getattr(ma, name), getattr(mb, name)
            assert x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))
        assert ma.events == mb.events and ma.hot_links == mb.hot_links
    assert comparable(a) == comparable(b)


@pytest.mark.parametrize("threads", [2, 3])
def test_models_in_threads_equal_the_models_one_after_the_other(threads: int) -> None:
    trace = halo()
    setup = ReplaySetup(models=MODELS)
    alone = replay(trace, P, setup)
    stages: list[str] = []
    together = replay(
        trace, P, setup, threads=threads, on_progress=lambda p: stages.append(p.stage)
    )
    assert [m.model for m in together.models] == list(MODELS)  # the order asked for
    assert_same_replays(alone, together)
    assert alone.model("packet").events > alone.model("analytic").events > 0
    for name in MODELS:  # each model's start and end were reported
        assert stages.count(name) >= 2


@needs_traces
def test_models_in_threads_equal_one_after_the_other_on_a_shared_trace() -> None:
    trace = read_trace(TRACES / "ti_nekbone_16r")
    setup = ReplaySetup(models=MODELS, compute_scale=0.5)
    assert_same_replays(replay(trace, P, setup), replay(trace, P, setup, threads=2))


def test_a_failing_model_in_threads_raises_as_one_after_the_other() -> None:
    b = TraceBuilder("test", "<hand>", 2)
    recv = b.call_id("MPI_Recv")
    b.add(0, OpKind.RECV, recv, peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, recv, peer=0, bytes_recv=8)
    for threads in (1, 2):
        with pytest.raises(ReplayDeadlockError, match="model 'compute-only' deadlocked") as info:
            replay(b.build(), P, ReplaySetup(models=("compute-only", "analytic")), threads=threads)
        assert info.value.model == "compute-only"


def test_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"threads=0 is invalid: expected at least 1"):
        replay(halo(), P, ReplaySetup(models=("analytic",)), threads=0)


def separate_columns(program: Program) -> Program:
    """``program`` with its bytes and seconds in two columns of their own (0 where unread)."""
    comm = (program.kind == Op.ISEND) | (program.kind == Op.IRECV)
    compute = program.kind == Op.COMPUTE
    return Program(
        n_ranks=program.n_ranks,
        rank_ptr=program.rank_ptr,
        ops=program.ops,
        nbytes=np.where(comm, program.nbytes, 0),
        seconds=np.where(compute, program.seconds, 0.0),
        wait_list=program.wait_list,
        n_requests=program.n_requests,
        n_marks=program.n_marks,
        call_names=program.call_names,
    )


def test_lowered_program_keeps_bytes_and_seconds_in_one_column() -> None:
    trace = halo()
    program = lower_trace(trace).program
    assert np.shares_memory(program.nbytes, program.seconds)
    assert program.nbytes.nbytes == 8 * program.n_ops  # one 8-byte entry per row
    kind = program.kind
    # independent reference: the trace's bytes and compute seconds, row by row
    user = (kind == Op.ISEND) & (program.comm == 0)
    sends = trace.kind == OpKind.ISEND
    assert np.array_equal(program.nbytes[user], trace.bytes_send[sends])
    assert np.array_equal(program.seconds[kind == Op.COMPUTE][:1], [2e-5])
    assert np.all(program.nbytes[(kind == Op.WAIT) | (kind == Op.WAITALL)] == 0)
    plain = separate_columns(program)
    plain.validate()
    topo = topology_for_ranks("dragonfly", trace.n_ranks)
    nodes = place_ranks(trace.n_ranks, topo, "linear")
    for model in ("packet", "analytic", "compute-only"):
        net = network_by_name(model, topology=topo)
        a = simulate(program, P, net, node_of_rank=nodes)
        b = simulate(plain, P, net, node_of_rank=nodes)
        assert a.n_events == b.n_events
        for name in ("end_s", "parts_s", "per_call_s", "link_bytes", "matched_recv"):
            x, y = getattr(a, name), getattr(b, name)
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        assert a.matched_recv.dtype == np.int32  # as the kernel keeps it (4 B per request)


def test_unmatched_sends_found_in_blocks_equal_one_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    b = TraceBuilder("test", "<hand>", 3)
    isend = b.call_id("MPI_Isend")
    for r in range(3):
        b.add_compute(r, 1e-6)
        for k in range(4):  # sends nobody receives, spread over the rows
            b.add(
                r,
                OpKind.ISEND,
                isend,
                peer=(r + 1) % 3,
                tag=k,
                bytes_send=8,
                request=b.new_request(),
            )
            b.add_compute(r, 1e-6)
    program = lower_trace(b.build()).program
    whole = simulate(program, P).unmatched_sends
    assert len(whole) == 12
    for rows in (1, 3, 5):
        monkeypatch.setattr(engine, "UNMATCHED_BLOCK_ROWS", rows)
        assert simulate(program, P).unmatched_sends == whole


def test_cli_threads_give_the_same_replay(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "halo.h5"  # type: ignore[operator]
    save_trace(halo(), path)
    outs = []
    for threads in ("1", "2"):
        args = ["replay", str(path), "--model", "packet,compute-only", "--json", "-q"]
        assert main([*args, "--threads", threads]) == 0
        data = json.loads(capsys.readouterr().out)
        data.pop("lowering_s")
        for m in data["models"].values():
            m.pop("wall_s")
        outs.append(data)
    assert outs[0] == outs[1]
    assert list(outs[0]["models"]) == ["packet", "compute-only"]
    with pytest.raises(SystemExit):
        main(["replay", str(path), "--threads", "0"])
    assert "--threads: 0 is out of range" in capsys.readouterr().err


def test_cli_threads_default_to_the_variable_then_the_usable_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--threads``, else ``$MPIUQ_SIMULATOR_THREADS`` (as campaigns), else every usable
    core; a bad value of the variable is a typed error naming it."""
    import argparse
    import os

    from mpiuq.commands.replay import model_threads
    from mpiuq.simulator.errors import SimulatorError

    monkeypatch.delenv("MPIUQ_SIMULATOR_THREADS", raising=False)
    assert model_threads(argparse.Namespace(threads=3)) == 3
    assert model_threads(argparse.Namespace(threads=None)) == len(os.sched_getaffinity(0))
    monkeypatch.setenv("MPIUQ_SIMULATOR_THREADS", "5")
    assert model_threads(argparse.Namespace(threads=None)) == 5
    assert model_threads(argparse.Namespace(threads=2)) == 2  # the option wins
    monkeypatch.setenv("MPIUQ_SIMULATOR_THREADS", "two")
    with pytest.raises(SimulatorError, match="MPIUQ_SIMULATOR_THREADS = 'two' is invalid"):
        model_threads(argparse.Namespace(threads=None))


def collective_compute_rows(low: Lowered, trace: Trace) -> np.ndarray:
    """The COMPUTE rows that collectives lower to, in row order."""
    from mpiuq.simulator.lowering.rows import segments

    coll_ops = np.flatnonzero(trace.kind >= OpKind.BARRIER)
    n_out = low.row_ptr[coll_ops + 1] - low.row_ptr[coll_ops]
    rows, _ = segments(low.row_ptr[coll_ops], n_out)
    return rows[low.program.kind[rows] == Op.COMPUTE]


@pytest.mark.parametrize("alg", ["recursive_doubling", "ring", "reduce_bcast"])
def test_combine_rows_are_the_reductions_compute_rows(alg: str) -> None:
    b = TraceBuilder("test", "<hand>", 6)
    ar, red = b.call_id("MPI_Allreduce"), b.call_id("MPI_Reduce")
    sub = b.add_comm([5, 1, 3, 0])  # a sub-communicator, not in world order
    for r in range(6):
        b.add_compute(r, 1e-6)
        b.add(r, OpKind.ALLREDUCE, ar, bytes_send=1 << 16, bytes_recv=1 << 16)
        if r in (5, 1, 3, 0):
            b.add(r, OpKind.ALLREDUCE, ar, comm=sub, bytes_send=4096, bytes_recv=4096)
            b.add(r, OpKind.REDUCE, red, comm=sub, peer=3, bytes_send=800, bytes_recv=800)
    trace = b.build()
    opts = LoweringOptions(reduce_rate_Bps=2e9, algorithms=(("allreduce", alg),))
    low = lower_trace(trace, opts)
    assert low.reduce_rows.dtype == np.int64 and low.reduce_rows.size > 0
    assert np.all(np.diff(low.reduce_rows) > 0)  # in row order, each once
    prog = low.program
    # independent reference: the template COMPUTE rows inside collectives, in row order
    assert np.array_equal(low.reduce_rows, collective_compute_rows(low, trace))
    assert np.array_equal(prog.seconds[low.reduce_rows], low.reduce_bytes / 2e9)


def test_lowering_beyond_the_engines_int32_ids_is_refused_before_writing_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Request ids and wait-list entries are int32 in the kernel: a trace lowering to more
    is refused, naming the trace and the limit (a real one would need > 2^31 requests)."""
    import mpiuq.simulator.lowering.rows as lowering  # the row planner and writer

    real_plan_rows = lowering.plan_rows

    def plan_rows_of_a_huge_trace(*args: object) -> tuple[int, int, int]:
        total, _n_requests, n_wl = real_plan_rows(*args)
        return total, 2**31, n_wl

    def emit_must_not_run(*args: object) -> None:
        raise AssertionError("rows written before the limit was checked")

    monkeypatch.setattr(lowering, "plan_rows", plan_rows_of_a_huge_trace)
    monkeypatch.setattr(lowering, "emit_program", emit_must_not_run)
    trace = synthesize(MotifSpec("halo3d", 8, 1))
    with pytest.raises(ProgramError, match=r"2147483648 requests .* limit is 2147483647"):
        lower_trace(trace)
