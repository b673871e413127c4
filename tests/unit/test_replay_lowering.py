"""Replay of small traces against hand-computed times and the benchmark of the simulator core.

Hand-computed references use the engine's documented model (simulator/kernel/,
reference paper section 3.1): a small ("mailbox") message costs the sender the
header post delay ``d_hdr``, crosses the two-hop analytic network in
``T = 2 hop_latency + (64 + N) / min(B_inj, B_link)`` (eq. 5, 64-byte header),
and costs the receiver a copy of ``N / B_mem`` when its wait completes. Time a
receiver waits before the sender has sent is synchronisation (eqs. 1-4; for a
nonblocking receive the clock starts at the wait, eqs. 3-4). Tolerances are
floating-point round-off (rel 1e-12).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.benchmarks.run import simulate_benchmark
from mpiuq.simulator.lowering.lower import (
    COLL_COMM_BASE,
    LoweringOptions,
    UnreplayableTraceError,
    lower_trace,
)
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.table import Op
from mpiuq.simulator.replay.run import ReplayDeadlockError, ReplaySetup, replay
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.ir import ANY_SOURCE, UNKNOWN_PEER, OpKind, Trace

P = SimParams()
D_HDR = P.post_header_delay_us * 1e-6
INV_MIN = 1.0 / (min(P.injection_bw_GBps, P.link_bw_GBps) * 1e9)
INV_MEM = 1.0 / (P.memory_bw_GBps * 1e9)
ALPHA = 2 * P.hop_latency_ns * 1e-9
SMALL = 8  # bytes: mailbox protocol


def t_small(nbytes: int = SMALL) -> float:
    """Network time of a mailbox message on the two-hop analytic network, seconds."""
    return ALPHA + (64 + nbytes) * INV_MIN


def run(trace: Trace, model: str = "analytic", **setup: object) -> object:
    res = replay(trace, P, ReplaySetup(models=(model,), **setup))  # type: ignore[arg-type]
    return res.models[0]


def builder(n: int) -> tuple[TraceBuilder, dict[str, int]]:
    b = TraceBuilder("test", "<hand>", n)
    names = [
        "MPI_Send",
        "MPI_Recv",
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Bcast",
    ]
    return b, {n: b.call_id(n) for n in names}


def write_ti(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------ pingpong = core benchmark


@pytest.mark.parametrize("size", [8, 20_000, 1 << 20])  # mailbox, eager, rendezvous
def test_two_rank_ti_pingpong_equals_the_benchmark_of_the_simulator_core(
    tmp_path: Path, size: int
) -> None:
    reps = 3
    lines = ["0 init", "1 init"]
    for _ in range(reps):
        lines += [f"0 send 1 1 {size}", f"0 recv 1 1 {size}"]
        lines += [f"1 recv 0 1 {size}", f"1 send 0 1 {size}"]
    lines += ["0 finalize", "1 finalize"]
    trace = read_trace(write_ti(tmp_path / "pingpong.txt", lines), use_cache=False)
    m = run(trace)
    bench = simulate_benchmark("pingpong", [size], P, repetitions=reps, warmup=0)
    # the benchmark reports half a round trip; rank 0 ends after `reps` round trips
    assert m.end_s[0] == pytest.approx(2 * reps * bench.time_us[0] * 1e-6, rel=1e-12)


# ------------------------------------------------------------------ hand-computed small traces


def test_ring_of_blocking_sends() -> None:
    n = 4
    b, c = builder(n)
    for r in range(n):
        b.add(r, OpKind.SEND, c["MPI_Send"], peer=(r + 1) % n, tag=5, bytes_send=SMALL)
        b.add(r, OpKind.RECV, c["MPI_Recv"], peer=(r - 1) % n, tag=5, bytes_recv=SMALL)
    m = run(b.build())
    end = D_HDR + t_small() + SMALL * INV_MEM
    assert np.allclose(m.end_s, end, rtol=1e-12)
    for r in range(n):
        compute, network, stack, sync = m.per_rank_s[r]
        assert compute == 0.0 and sync == pytest.approx(0.0, abs=1e-18)
        assert network == pytest.approx(t_small(), rel=1e-12)
        assert stack == pytest.approx(D_HDR + SMALL * INV_MEM, rel=1e-12)
    assert m.per_call["MPI_Recv"].network_s == pytest.approx(n * t_small(), rel=1e-12)


def test_binomial_broadcast_on_four_ranks() -> None:
    b, c = builder(4)
    for r in range(4):
        b.add(r, OpKind.BCAST, c["MPI_Bcast"], peer=0, bytes_send=SMALL, bytes_recv=SMALL)
    m = run(b.build())
    t, cp = t_small(), SMALL * INV_MEM
    # root posts to 2 then 1 (largest subtree first); 2 forwards to 3 after receiving
    arrive2 = D_HDR + t
    expected = {
        0: 2 * D_HDR,
        1: 2 * D_HDR + t + cp,
        2: arrive2 + cp + D_HDR,
        3: arrive2 + cp + D_HDR + t + cp,
    }
    for r, e in expected.items():
        assert m.end_s[r] == pytest.approx(e, rel=1e-12), r
    assert m.per_rank_s[3, 3] == pytest.approx(arrive2 + cp + D_HDR, rel=1e-12)  # sync
    assert m.per_call["MPI_Bcast"].total_s == pytest.approx(m.end_s.sum(), rel=1e-12)


def test_late_sender_shows_as_synchronisation() -> None:
    b, c = builder(2)
    late = 1e-3
    b.add_compute(0, late)
    b.add(0, OpKind.SEND, c["MPI_Send"], peer=1, bytes_send=SMALL)
    b.add(1, OpKind.RECV, c["MPI_Recv"], peer=0, bytes_recv=SMALL)
    m = run(b.build())
    _, network, stack, sync = m.per_rank_s[1]
    assert sync == pytest.approx(late + D_HDR, rel=1e-12)
    assert network == pytest.approx(t_small(), rel=1e-12)
    assert stack == pytest.approx(SMALL * INV_MEM, rel=1e-12)
    assert m.per_rank_s[0, 0] == pytest.approx(late, rel=1e-12)


@pytest.mark.parametrize("send_at", [1e-3, 3e-3])
def test_nonblocking_receive_with_deferred_wait(send_at: float) -> None:
    """Eqs. 3-4: an early-posted receive only waits from the ``MPI_Wait`` on."""
    work = 2e-3
    b, c = builder(2)
    b.add_compute(0, send_at)
    b.add(0, OpKind.SEND, c["MPI_Send"], peer=1, bytes_send=SMALL)
    rid = b.new_request()
    b.add(1, OpKind.IRECV, c["MPI_Irecv"], peer=0, bytes_recv=SMALL, request=rid)
    b.add_compute(1, work)
    b.add(1, OpKind.WAIT, c["MPI_Wait"], request=rid)
    m = run(b.build())
    _, network, stack, sync = m.per_rank_s[1]
    arrival = send_at + D_HDR + t_small()
    if arrival <= work:  # message already in: no waiting at all
        assert sync == 0.0 and network == 0.0
        assert m.end_s[1] == pytest.approx(work + SMALL * INV_MEM, rel=1e-12)
    else:
        assert sync == pytest.approx(send_at + D_HDR - work, rel=1e-12)
        assert network == pytest.approx(t_small(), rel=1e-12)
    assert stack == pytest.approx(SMALL * INV_MEM, rel=1e-12)


def test_compute_scale_applies_to_trace_compute_only() -> None:
    b, c = builder(2)
    b.add_compute(0, 1e-3)
    b.add(0, OpKind.SEND, c["MPI_Send"], peer=1, bytes_send=SMALL)
    b.add(1, OpKind.RECV, c["MPI_Recv"], peer=0, bytes_recv=SMALL)
    m = run(b.build(), compute_scale=0.1)
    assert m.per_rank_s[0, 0] == pytest.approx(1e-4, rel=1e-12)
    assert m.per_rank_s[1, 3] == pytest.approx(1e-4 + D_HDR, rel=1e-12)


# ------------------------------------------------------------------ invariants


def mixed_trace() -> Trace:
    """Point-to-point of every kind, ANY_SOURCE, a partial waitall and collectives."""
    n = 5
    b, c = builder(n)
    ar = b.call_id("MPI_Allreduce")
    sr = b.call_id("MPI_Sendrecv")
    for r in range(n):
        b.add_compute(r, 1e-5 * (r + 1))
        rr = b.new_request()
        rs = b.new_request()
        b.add(
            r, OpKind.IRECV, c["MPI_Irecv"], peer=ANY_SOURCE, tag=3, bytes_recv=20_000, request=rr
        )
        b.add(
            r, OpKind.ISEND, c["MPI_Isend"], peer=(r + 2) % n, tag=3, bytes_send=20_000, request=rs
        )
        b.add_waitall(r, c["MPI_Waitall"], [rs])  # partial: the receive is waited for below
        b.add(r, OpKind.ALLREDUCE, ar, bytes_send=4096, bytes_recv=4096)
        b.add(r, OpKind.WAIT, c["MPI_Wait"], request=rr)
        b.add(
            r,
            OpKind.SENDRECV,
            sr,
            peer=(r + 1) % n,
            peer2=(r - 1) % n,
            tag=9,
            tag2=9,
            bytes_send=1 << 18,
            bytes_recv=1 << 18,
        )
        b.add(r, OpKind.BCAST, c["MPI_Bcast"], peer=3, bytes_send=1 << 17, bytes_recv=1 << 17)
    return b.build()


@pytest.mark.parametrize("model", ["analytic", "compute-only"])
def test_parts_sum_to_end_time_and_compute_only_has_no_network(model: str) -> None:
    m = run(mixed_trace(), model)
    assert np.allclose(m.per_rank_s.sum(axis=1), m.end_s, rtol=1e-12, atol=1e-18)
    assert np.all(m.per_rank_s >= 0.0)
    assert m.n_unmatched == 0
    if model == "compute-only":
        assert m.decomposition.network_s == 0.0 and m.decomposition.mpi_stack_s == 0.0


def test_replay_is_deterministic() -> None:
    a = replay(mixed_trace(), P).as_dict()
    b = replay(mixed_trace(), P).as_dict()
    for d in (a, b):
        d.pop("lowering_s")
        for m in d["models"].values():
            m.pop("wall_s")
    assert a == b


def test_collective_traffic_has_its_own_matching_context() -> None:
    low = lower_trace(mixed_trace())
    prog = low.program
    msgs = (prog.kind == Op.ISEND) | (prog.kind == Op.IRECV)
    coll = np.isin(prog.call, [prog.call_names.index(n) for n in ("MPI_Allreduce", "MPI_Bcast")])
    assert np.all(prog.comm[msgs & coll] == COLL_COMM_BASE)
    assert np.all(prog.comm[msgs & ~coll] == 0)
    # blocking calls and sendrecv keep their call id on the wait they lower to
    sr = prog.call_names.index("MPI_Sendrecv")
    assert np.count_nonzero((prog.call == sr) & (prog.kind == Op.WAITALL)) == 5
    assert low.collectives == {"allreduce": 5, "bcast": 5}


def test_nonblocking_collective_runs_at_the_call_and_its_wait_is_a_no_op() -> None:
    b, c = builder(3)
    ia = b.call_id("MPI_Iallreduce")
    for r in range(3):
        rq = b.new_request()
        rs = b.new_request()
        b.add(r, OpKind.ALLREDUCE, ia, bytes_send=8, bytes_recv=8, request=rq, nonblocking=True)
        b.add(r, OpKind.ISEND, c["MPI_Isend"], peer=(r + 1) % 3, bytes_send=8, request=rs)
        b.add_waitall(r, c["MPI_Waitall"], [rq, rs])
        b.add(r, OpKind.RECV, c["MPI_Recv"], peer=(r - 1) % 3, bytes_recv=8)
    low = lower_trace(b.build())
    assert low.nonblocking_collectives == 3
    prog = low.program
    wa = np.flatnonzero(
        (prog.kind == Op.WAITALL) & (prog.call == prog.call_names.index("MPI_Waitall"))
    )
    assert np.all(prog.count[wa] == 1)  # the collective's request was dropped from the waitall
    m = run(b.build())
    assert m.n_unmatched == 0


def test_deadlock_names_the_ranks_and_trace_operations() -> None:
    b, c = builder(3)
    b.add_compute(0, 1e-6)
    b.add(0, OpKind.RECV, c["MPI_Recv"], peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, c["MPI_Recv"], peer=0, bytes_recv=8)
    with pytest.raises(
        ReplayDeadlockError,
        match=r"2 rank\(s\) blocked forever: rank 0 at trace operation 1 \(MPI_Recv\)",
    ) as info:
        replay(b.build(), P, ReplaySetup(models=("analytic",)))
    assert [(r, i, call) for r, i, call, _ in info.value.blocked] == [
        (0, 1, "MPI_Recv"),
        (1, 0, "MPI_Recv"),
    ]
    assert info.value.model == "analytic"


def test_unmatched_messages_are_reported_with_rank_and_operation() -> None:
    b, c = builder(2)
    b.add_compute(0, 1e-6)
    b.add(0, OpKind.ISEND, c["MPI_Isend"], peer=1, tag=7, bytes_send=8, request=b.new_request())
    b.add_compute(1, 1e-6)  # rank 1 never posts the receive
    m = run(b.build())
    assert m.n_unmatched == 1
    assert m.unmatched == ((0, 1, "MPI_Isend"),)
    assert m.as_dict()["unmatched_first"] == [{"rank": 0, "trace_op": 1, "call": "MPI_Isend"}]


def test_partial_trace_is_refused_with_the_reason() -> None:
    b, c = builder(1)
    b.add(0, OpKind.SEND, c["MPI_Send"], peer=UNKNOWN_PEER, bytes_send=8)
    with pytest.raises(UnreplayableTraceError, match="UNKNOWN_PEER"):
        lower_trace(b.build())


def test_bad_settings_raise_typed_errors() -> None:
    with pytest.raises(ValueError, match="network model 'ethernet' is unknown"):
        ReplaySetup(models=("ethernet",))
    with pytest.raises(ValueError, match=r"reduce_rate_Bps=0\.0 is invalid"):
        LoweringOptions(reduce_rate_Bps=0.0)
    with pytest.raises(ValueError, match=r"compute_scale=-1\.0 is invalid"):
        LoweringOptions(compute_scale=-1.0)


def test_ranks_without_operations_named_as_partners_mean_a_partial_trace() -> None:
    b, c = builder(3)  # only rank 0 recorded, as in a single-rank DUMPI file
    b.add(0, OpKind.SEND, c["MPI_Send"], peer=2, bytes_send=8)
    with pytest.raises(UnreplayableTraceError, match=r"1 rank\(s\) \(2\) have no operations"):
        lower_trace(b.build())


@pytest.mark.parametrize("high", [4, 1 << 40])  # packed into integers / lexicographic sort
@pytest.mark.parametrize("n", [0, 1, 500])
def test_unique_rows_equals_numpy_unique_with_axis(n: int, high: int) -> None:
    from mpiuq.simulator.lowering.lower import _unique_rows

    keys = np.random.default_rng(n).integers(-1, high, size=(n, 7)).astype(np.int64)
    keys[n // 2 :] = keys[: n - n // 2]  # repeated rows
    rows, inverse = _unique_rows(keys)
    expected_rows, expected_inverse = np.unique(keys, axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))
