"""Engine semantics: MPI matching, time accounting (eqs. 1-4), deadlocks, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiuq.simulator.codes import TABLE_COLUMNS
from mpiuq.simulator.engine import simulate
from mpiuq.simulator.errors import DeadlockError, ProgramError
from mpiuq.simulator.kernel import HEADER_BYTES
from mpiuq.simulator.networks import ComputeOnly, network_by_name
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.table import ANY_SOURCE, ANY_TAG, Op, Program, ProgramBuilder

P = SimParams()
D_HDR = P.post_header_delay_us * 1e-6


def wire_s(n: int) -> float:
    return 2 * P.hop_latency_ns * 1e-9 + n / (min(P.injection_bw_GBps, P.link_bw_GBps) * 1e9)


def pin_s(n: int) -> float:
    return (
        P.rdma_pin_latency_us * 1e-6 + math.ceil(n / P.page_bytes) * P.rdma_pin_per_page_ns * 1e-9
    )


def assert_parts_sum_to_end(program: Program, **kw: object) -> None:
    run = simulate(program, P, **kw)  # type: ignore[arg-type]
    np.testing.assert_allclose(run.parts_s.sum(axis=1), run.end_s, rtol=1e-12, atol=1e-18)
    assert (run.parts_s >= -1e-18).all()


def test_late_sender_is_receiver_sync_eq2() -> None:
    b = ProgramBuilder(2)
    b.compute(0, 10e-6)
    b.send(0, 1, 8)
    b.recv(1, 0, 8)
    run = simulate(b.build(), P)
    d = run.rank(1)
    # eq. (2): TSend (after the post delay) minus TPostRecv (0)
    assert d.sync_s == pytest.approx(10e-6 + D_HDR, rel=1e-12)
    assert d.network_s == pytest.approx(wire_s(HEADER_BYTES + 8), rel=1e-12)
    assert d.mpi_stack_s == pytest.approx(8 / (P.memory_bw_GBps * 1e9), rel=1e-12)
    assert d.total_s == pytest.approx(run.end_s[1], rel=1e-12)
    assert run.rank(0).sync_s == 0.0  # eager senders never wait


def test_late_receiver_is_rendezvous_sender_sync_eq1() -> None:
    n = 1 << 20
    b = ProgramBuilder(2)
    b.send(0, 1, n)
    b.compute(1, 50e-6)
    b.recv(1, 0, n)
    run = simulate(b.build(), P)
    t_send = pin_s(n) + D_HDR
    d0 = run.rank(0)
    assert d0.sync_s == pytest.approx(50e-6 - t_send, rel=1e-12)  # eq. (1)
    assert d0.total_s == pytest.approx(run.end_s[0], rel=1e-12)
    # the receiver arrives after the header: no sync, it pins, gets and is done
    d1 = run.rank(1)
    assert d1.sync_s == 0.0
    assert d1.compute_s == pytest.approx(50e-6)


def test_deferred_wait_counts_sync_from_the_wait_eq4() -> None:
    b = ProgramBuilder(2)
    b.compute(0, 50e-6)
    b.send(0, 1, 8)
    q = b.irecv(1, 0, 8)
    b.compute(1, 30e-6)
    b.wait(1, q)
    d1 = simulate(b.build(), P).rank(1)
    assert d1.sync_s == pytest.approx(50e-6 + D_HDR - 30e-6, rel=1e-12)  # eq. (4)
    assert d1.compute_s == pytest.approx(30e-6)


def test_deferred_wait_after_arrival_has_no_sync_or_network() -> None:
    b = ProgramBuilder(2)
    b.send(0, 1, 8)
    q = b.irecv(1, 0, 8)
    b.compute(1, 30e-6)
    b.wait(1, q)
    d1 = simulate(b.build(), P).rank(1)
    assert d1.sync_s == 0.0
    assert d1.network_s == 0.0
    assert d1.mpi_stack_s == pytest.approx(8 / (P.memory_bw_GBps * 1e9))


def test_deferred_rendezvous_send_wait_eq3() -> None:
    n = 1 << 20
    b = ProgramBuilder(2)
    s = b.isend(0, 1, n)
    b.compute(0, 5e-6)
    b.wait(0, s)
    b.compute(1, 80e-6)
    b.recv(1, 0, n)
    d0 = simulate(b.build(), P).rank(0)
    t_wait = pin_s(n) + D_HDR + 5e-6
    assert d0.sync_s == pytest.approx(80e-6 - t_wait, rel=1e-12)  # eq. (3)


def test_tags_select_messages_regardless_of_order() -> None:
    b = ProgramBuilder(2)
    b.send(0, 1, 8, tag=1)
    b.send(0, 1, 16, tag=2)
    q2 = b.irecv(1, 0, 16, tag=2)
    q1 = b.irecv(1, 0, 8, tag=1)
    b.waitall(1, [q2, q1])
    program = b.build()
    run = simulate(program, P)
    sends = program.req[program.kind == 1]
    assert run.matched_recv[sends[0]] == q1
    assert run.matched_recv[sends[1]] == q2


def test_same_tag_messages_match_in_posting_order() -> None:
    b = ProgramBuilder(2)
    s = [b.isend(0, 1, 100, tag=5) for _ in range(3)]
    b.waitall(0, s)
    b.compute(1, 20e-6)  # all three arrive before any receive: unexpected queue
    r = [b.irecv(1, 0, 100, tag=ANY_TAG) for _ in range(3)]
    b.waitall(1, r)
    run = simulate(b.build(), P)
    assert [int(run.matched_recv[x]) for x in s] == r


def test_any_source_takes_the_first_arrival() -> None:
    b = ProgramBuilder(3)
    b.compute(0, 10e-6)
    b.send(0, 2, 8, tag=3)
    b.send(1, 2, 8, tag=3)
    first = b.irecv(2, ANY_SOURCE, 8, tag=3)
    second = b.irecv(2, ANY_SOURCE, 8, tag=3)
    b.waitall(2, [first, second])
    program = b.build()
    run = simulate(program, P)
    sends = program.req[program.kind == 1]
    assert run.matched_recv[sends[1]] == first  # rank 1 sent at t=0
    assert run.matched_recv[sends[0]] == second


def test_communicators_do_not_match_each_other() -> None:
    b = ProgramBuilder(2)
    b.send(0, 1, 8, tag=0, comm=1)
    b.recv(1, 0, 8, tag=0, comm=0)
    with pytest.raises(
        DeadlockError, match=r"rank 1 at operation 1: MPI_Recv waiting on receive from 0"
    ):
        simulate(b.build(), P)


def test_deadlock_is_reported_with_ranks_and_operations() -> None:
    b = ProgramBuilder(2)
    b.recv(0, 1, 8)
    b.send(0, 1, 8)
    b.recv(1, 0, 8)
    b.send(1, 0, 8)
    with pytest.raises(DeadlockError, match="2 rank") as info:
        simulate(b.build(), P)
    assert [r for r, _, _ in info.value.blocked] == [0, 1]


def test_unmatched_send_is_reported() -> None:
    b = ProgramBuilder(2)
    b.send(0, 1, 8, tag=9)
    run = simulate(b.build(), P)
    assert run.unmatched_sends == ((0, 0),)


def test_compute_only_has_no_network_or_stack_time() -> None:
    b = ProgramBuilder(2)
    b.compute(0, 1e-3)
    b.send(0, 1, 1 << 20)
    b.recv(1, 0, 1 << 20)
    run = simulate(b.build(), P, network=ComputeOnly())
    assert run.total().network_s == 0.0
    assert run.total().mpi_stack_s == 0.0
    assert run.rank(1).sync_s == pytest.approx(1e-3)
    assert run.simulated_time_s == pytest.approx(1e-3)


def test_compute_scale_scales_compute() -> None:
    b = ProgramBuilder(1)
    b.compute(0, 1.0)
    assert simulate(b.build(), P, compute_scale=0.1).end_s[0] == pytest.approx(0.1)


def test_port_serialisation_two_senders_one_receiver() -> None:
    """Two large eager-free streams into one node share its ejection port."""
    n = 1 << 22
    params = P.with_values(small_max_bytes=1 << 23, eager_max_bytes=1 << 23)
    b = ProgramBuilder(3)
    b.send(0, 2, n)
    b.send(1, 2, n)
    r = [b.irecv(2, 0, n), b.irecv(2, 1, n)]
    b.waitall(2, r)
    run = simulate(b.build(), params)
    # both payloads pass the ejection link one after the other at link bandwidth
    assert run.end_s[2] >= 2 * n / (params.link_bw_GBps * 1e9)


def test_bad_programs_raise_program_error() -> None:
    b = ProgramBuilder(2)
    with pytest.raises(ProgramError, match=r"rank 5 is not in 0..1"):
        b.compute(5, 1.0)
    b.compute(0, float("nan"))
    with pytest.raises(ProgramError, match=r"compute duration nan s .*rank 0, operation 0"):
        b.build()
    b2 = ProgramBuilder(2)
    b2.isend(0, 7, 8)
    with pytest.raises(ProgramError, match="peer 7 is not a rank"):
        b2.build()
    b3 = ProgramBuilder(2)
    q = b3.irecv(1, 0, 8)
    b3.wait(0, q)
    with pytest.raises(ProgramError, match="never created"):
        b3.build()


def test_network_registry_rejects_unknown_names() -> None:
    assert network_by_name("analytic", hops=3).hops == 3
    with pytest.raises(ValueError, match=r"network model 'torus' is unknown"):
        network_by_name("torus")


@st.composite
def exchange_programs(draw: st.DrawFn) -> Program:
    """Deadlock-free random programs: phases of compute + a random pairwise exchange."""
    n_ranks = draw(st.integers(2, 4))
    b = ProgramBuilder(n_ranks)
    for phase in range(draw(st.integers(1, 4))):
        for r in range(n_ranks):
            b.compute(r, draw(st.floats(0, 20e-6)))
        perm = draw(st.permutations(range(n_ranks)))
        size = draw(st.sampled_from([1, 512, 4096, 5000, 65536, 70000, 300000]))
        blocking = draw(st.booleans())
        for r in range(n_ranks):
            dst = perm[r]
            src = perm.index(r)
            if blocking and dst != r:
                # order sends/receives by rank parity-free scheme: nonblocking receive first
                q = b.irecv(r, src, size, tag=phase)
                b.send(r, dst, size, tag=phase)
                b.wait(r, q)
            else:
                q = b.irecv(r, src, size, tag=phase)
                s = b.isend(r, dst, size, tag=phase)
                b.compute(r, draw(st.floats(0, 5e-6)))
                b.waitall(r, [s, q])
    return b.build()


@settings(max_examples=60, deadline=None)
@given(exchange_programs())
def test_parts_sum_to_end_time_on_random_programs(program: Program) -> None:
    assert_parts_sum_to_end(program)


def test_runs_are_deterministic() -> None:
    b = ProgramBuilder(3)
    for r in range(3):
        q = b.irecv(r, ANY_SOURCE, 70000)
        b.send(r, (r + 1) % 3, 70000)
        b.wait(r, q)
    program = b.build()
    a, c = simulate(program, P), simulate(program, P)
    np.testing.assert_array_equal(a.parts_s, c.parts_s)
    np.testing.assert_array_equal(a.matched_recv, c.matched_recv)


def test_program_errors_name_the_rank_and_its_own_operation_index() -> None:
    import dataclasses

    b = ProgramBuilder(2)
    b.compute(0, 1.0)
    q = b.irecv(1, 0, 8)
    b.waitall(1, [q])
    good = b.build()
    bad_list = dataclasses.replace(good, wait_list=np.zeros(0, dtype=np.int64))
    # the wait-all is operation 1 of rank 1 (global operation 2)
    with pytest.raises(ProgramError, match=r"waitall list \[0, 1\) outside .*rank 1, operation 1"):
        bad_list.validate()
    unknown = dataclasses.replace(good, wait_list=np.array([7], dtype=np.int64))
    with pytest.raises(ProgramError, match=r"unknown request id 7 .*rank 1, operation 1"):
        unknown.validate()


def test_program_errors_for_every_kind_of_problem() -> None:
    """Each check of Program.validate, one problem at a time, with its location."""
    b = ProgramBuilder(2)
    b.compute(0, 1.0)
    s = b.isend(0, 1, 8)
    b.wait(0, s)
    q = b.irecv(1, 0, 8)
    b.wait(1, q)
    good = b.build()
    good.validate()
    isend = int(np.flatnonzero(good.kind == Op.ISEND)[0])  # operation 1 of rank 0
    irecv = int(np.flatnonzero(good.kind == Op.IRECV)[0])  # operation 0 of rank 1

    columns = {name: getattr(good, name).astype(np.int64) for name in TABLE_COLUMNS}
    columns |= {"nbytes": good.nbytes, "seconds": good.seconds}
    common = {
        "n_ranks": 2,
        "rank_ptr": good.rank_ptr,
        "wait_list": good.wait_list,
        "n_requests": good.n_requests,
        "call_names": good.call_names,
    }

    def with_column(name: str, i: int, value: float, n_marks: int = 0) -> Program:
        changed = dict(columns)
        changed[name] = changed[name].copy()
        changed[name][i] = value
        return Program.from_columns(**changed, **common, n_marks=n_marks)

    cases = [
        (with_column("kind", 0, 9), r"unknown operation code 9 .*rank 0, operation 0"),
        (with_column("nbytes", isend, -1), r"message size -1 B is negative .*rank 0, operation 1"),
        (with_column("req", irecv, 5), r"request id 5 out of range .*rank 1, operation 0"),
        (with_column("req", irecv, s), rf"request id {s} is created twice .*rank 0, operation 1"),
        (with_column("kind", 0, Op.MARK), r"mark id outside"),
        (with_column("call", 0, 99), r"call index outside"),
    ]
    for program, message in cases:
        with pytest.raises(ProgramError, match=message):
            program.validate()
    with pytest.raises(ProgramError, match=r"column tag holds 4294967296, outside the int32"):
        with_column("tag", 0, 2**32)
