"""The engine's WAITANY: it consumes the first of its listed requests to complete among
those no wait has consumed yet (MPI_Waitany as SMPI executes it), closed forms on the
default parameters (eager messages: sync until the send, then the wire, then the copy-out
at memory bandwidth, as in ``test_simulator_engine``)."""

from __future__ import annotations

import pytest

from mpiuq.simulator.engine import simulate
from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.kernel import HEADER_BYTES
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.table import Op, Program, ProgramBuilder

P = SimParams()
D_HDR = P.post_header_delay_us * 1e-6


def wire_s(n: int) -> float:
    return 2 * P.hop_latency_ns * 1e-9 + n / (min(P.injection_bw_GBps, P.link_bw_GBps) * 1e9)


def copy_s(n: int) -> float:
    return n / (P.memory_bw_GBps * 1e9)


def arrival_s(t_send: float, n: int) -> float:
    """When an eager message of ``n`` B sent at ``t_send`` (after its post) is received."""
    return t_send + D_HDR + wire_s(HEADER_BYTES + n)


def senders_and_receives() -> tuple[ProgramBuilder, int, int]:
    """Rank 1 posts receives of 8 B from rank 0 (sent at 50 us) and of 800 B from rank 2
    (sent at 10 us), in that order; returns the builder and the two requests."""
    b = ProgramBuilder(3)
    b.compute(0, 50e-6)
    b.send(0, 1, 8, tag=0)
    b.compute(2, 10e-6)
    b.send(2, 1, 800, tag=0)
    return b, b.irecv(1, 0, 8, tag=0), b.irecv(1, 2, 800, tag=0)


def two_senders(late_first: bool, receiver_busy_s: float = 0.0) -> tuple[Program, list[int]]:
    """:func:`senders_and_receives`, then three WAITANYs on both requests; marks after each."""
    b, qa, qb = senders_and_receives()
    if receiver_busy_s:
        b.compute(1, receiver_busy_s)
    marks = []
    for _ in range(3):
        b.waitany(1, [qa, qb] if late_first else [qb, qa])
        marks.append(b.mark(1))
    return b.build(), marks


@pytest.mark.parametrize("late_first", [True, False], ids=["late-listed-first", "early-first"])
def test_waitany_takes_the_first_request_to_complete(late_first: bool) -> None:
    program, marks = two_senders(late_first)
    run = simulate(program, P)
    first = arrival_s(10e-6, 800) + copy_s(800)  # rank 2's message, whatever the list order
    second = arrival_s(50e-6, 8) + copy_s(8)
    assert run.marks_s[marks[0]] == pytest.approx(first, rel=1e-12)
    assert run.marks_s[marks[1]] == pytest.approx(second, rel=1e-12)
    # every listed request consumed: the third WAITANY ends at once (MPI_UNDEFINED)
    assert run.marks_s[marks[2]] == run.marks_s[marks[1]]
    assert run.end_s[1] == pytest.approx(second, rel=1e-12)


def test_waitany_on_complete_requests_takes_the_earliest_completed() -> None:
    """Both messages are in when the rank waits (at 100 us): the first WAITANY takes rank
    2's (completed first, listed second) and pays its copy-out, the second rank 0's."""
    program, marks = two_senders(True, receiver_busy_s=100e-6)
    run = simulate(program, P)
    assert run.marks_s[marks[0]] == pytest.approx(100e-6 + copy_s(800), rel=1e-12)
    assert run.marks_s[marks[1]] == pytest.approx(100e-6 + copy_s(800) + copy_s(8), rel=1e-12)
    d = run.rank(1)
    assert d.sync_s == 0.0 and d.network_s == 0.0
    assert d.mpi_stack_s == pytest.approx(copy_s(800) + copy_s(8), rel=1e-12)


def test_waitanys_equal_waits_in_completion_order() -> None:
    """Two WAITANYs on (a, b) time and split exactly as a WAIT on b then a WAIT on a,
    b completing first (the decomposition sums to the end time)."""
    program, _ = two_senders(True)
    b, qa, qb = senders_and_receives()
    b.wait(1, qb)
    b.mark(1)
    b.wait(1, qa)
    b.mark(1)
    b.mark(1)
    run_any, run_wait = simulate(program, P), simulate(b.build(), P)
    assert list(run_any.end_s) == list(run_wait.end_s)
    assert run_any.parts_s.tolist() == run_wait.parts_s.tolist()
    assert run_any.parts_s[1].sum() == pytest.approx(run_any.end_s[1], rel=1e-12)


def test_waitany_blocks_until_a_later_send_completes_it() -> None:
    """A rendezvous-size message: the WAITANY wakes when the transfer ends, not before."""
    n = 1 << 20
    b = ProgramBuilder(2)
    b.compute(0, 30e-6)
    b.send(0, 1, n)
    q = b.irecv(1, 0, n)
    b.waitany(1, [q])
    m = b.mark(1)
    b2 = ProgramBuilder(2)
    b2.compute(0, 30e-6)
    b2.send(0, 1, n)
    q2 = b2.irecv(1, 0, n)
    b2.wait(1, q2)
    m2 = b2.mark(1)
    t_any = simulate(b.build(), P).marks_s[m]
    assert t_any == simulate(b2.build(), P).marks_s[m2]
    assert t_any > 30e-6 + n / (P.link_bw_GBps * 1e9)


def test_waitany_list_outside_the_wait_list_is_a_program_error() -> None:
    b = ProgramBuilder(1)
    b.waitany(0, [])
    prog = b.build()
    ops = prog.ops.copy()
    ops[0, 5] = 3  # count 3 on an empty wait list
    bad = Program(
        n_ranks=1,
        rank_ptr=prog.rank_ptr,
        ops=ops,
        nbytes=prog.nbytes,
        seconds=prog.seconds,
        wait_list=prog.wait_list,
        n_requests=0,
        n_marks=0,
        call_names=prog.call_names,
    )
    assert Op(int(bad.kind[0])) is Op.WAITANY
    with pytest.raises(ProgramError, match=r"waitany list \[0, 3\) outside wait_list of length 0"):
        bad.validate()
