"""Every collective algorithm delivers the right data between the right ranks.

Each case builds a one-collective trace (on MPI_COMM_WORLD or a sub-communicator
with scrambled world ranks), lowers it, and runs the lowered program through a
small *symbolic* executor independent of the engine: every rank starts knowing
only its own contribution, a message carries what its sender knew when it was
posted, and a rank learns a message's content when its wait completes. The
reference is the MPI standard's definition of each collective (who must end
up with whose contribution); byte totals are checked against closed forms.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import pytest

from mpiuq.simulator.collectives import (
    ALGORITHMS,
    CollectiveError,
    CollSizes,
    default_algorithm,
    schedule,
    validate_algorithms,
)
from mpiuq.simulator.engine import simulate
from mpiuq.simulator.lowering.lower import COLL_COMM_BASE, LoweringOptions, lower_trace
from mpiuq.simulator.networks import network_by_name
from mpiuq.simulator.program.table import Op, Program
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.ir import OpKind, Trace

KIND = {
    "barrier": OpKind.BARRIER,
    "bcast": OpKind.BCAST,
    "reduce": OpKind.REDUCE,
    "allreduce": OpKind.ALLREDUCE,
    "gather": OpKind.GATHER,
    "gatherv": OpKind.GATHERV,
    "scatter": OpKind.SCATTER,
    "scatterv": OpKind.SCATTERV,
    "allgather": OpKind.ALLGATHER,
    "allgatherv": OpKind.ALLGATHERV,
    "alltoall": OpKind.ALLTOALL,
    "alltoallv": OpKind.ALLTOALLV,
    "reduce_scatter": OpKind.REDUCE_SCATTER,
    "scan": OpKind.SCAN,
    "exscan": OpKind.EXSCAN,
}
ROOTED = {"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"}
BLOCK = 40  # bytes per rank block / reduced vector


@dataclass
class SymbolicRun:
    know: list[set[int]]  # world ranks whose contribution reached each rank
    recv_bytes: np.ndarray  # bytes received per world rank
    sent_bytes: np.ndarray
    pairs: set[tuple[int, int]]  # (src, dst) world ranks of every message


def symbolic_run(program: Program) -> SymbolicRun:
    """Execute ``program`` on knowledge sets (MPI matching: FIFO per source, tag, comm)."""
    n = program.n_ranks
    know = [{r} for r in range(n)]
    pc = program.rank_ptr[:-1].copy()
    payload: dict[int, frozenset[int]] = {}  # recv request -> content
    done: set[int] = set()
    posted: list[deque[int]] = [deque() for _ in range(n)]  # receive op indices
    unexpected: list[deque[tuple[int, int, frozenset[int]]]] = [deque() for _ in range(n)]
    recv_bytes = np.zeros(n, np.int64)
    sent_bytes = np.zeros(n, np.int64)
    pairs: set[tuple[int, int]] = set()

    def matches(recv_op: int, src: int, send_op: int) -> bool:
        p, t, c = program.peer[recv_op], program.tag[recv_op], program.comm[recv_op]
        return (
            c == program.comm[send_op]
            and (p < 0 or p == src)
            and (t < 0 or t == program.tag[send_op])
        )

    def deliver(recv_op: int, send_op: int, src: int, content: frozenset[int]) -> None:
        payload[int(program.req[recv_op])] = content
        done.add(int(program.req[recv_op]))
        done.add(int(program.req[send_op]))
        dst = int(program.peer[send_op])
        recv_bytes[dst] += program.nbytes[send_op]
        sent_bytes[src] += program.nbytes[send_op]
        pairs.add((src, dst))

    progress = True
    while progress:
        progress = False
        for r in range(n):
            while pc[r] < program.rank_ptr[r + 1]:
                i = int(pc[r])
                k = program.kind[i]
                if k == Op.ISEND:
                    dst = int(program.peer[i])
                    content = frozenset(know[r])
                    for j in posted[dst]:
                        if matches(j, r, i):
                            posted[dst].remove(j)
                            deliver(j, i, r, content)
                            break
                    else:
                        unexpected[dst].append((i, r, content))
                elif k == Op.IRECV:
                    for item in unexpected[r]:
                        if matches(i, item[1], item[0]):
                            unexpected[r].remove(item)
                            deliver(i, item[0], item[1], item[2])
                            break
                    else:
                        posted[r].append(i)
                elif k in (Op.WAIT, Op.WAITALL):
                    reqs = (
                        [int(program.req[i])]
                        if k == Op.WAIT
                        else program.wait_list[
                            program.req[i] : program.req[i] + program.count[i]
                        ].tolist()
                    )
                    if not all(q in done for q in reqs):
                        break
                    for q in reqs:
                        know[r] |= payload.get(q, frozenset())
                pc[r] += 1
                progress = True
    stuck = [r for r in range(n) if pc[r] < program.rank_ptr[r + 1]]
    assert not stuck, f"symbolic run deadlocked on ranks {stuck}"
    assert not any(unexpected), "messages left unmatched"
    return SymbolicRun(know, recv_bytes, sent_bytes, pairs)


def one_collective_trace(
    name: str, members: list[int], n_world: int, root_c: int = 0, vcounts: list[int] | None = None
) -> Trace:
    """Every member of ``members`` (world ranks, communicator order) calls ``name`` once."""
    b = TraceBuilder("test", f"<{name}>", n_world)
    comm = 0 if members == list(range(n_world)) else b.add_comm(members)
    call = b.call_id(f"MPI_{name}")
    p = len(members)
    for me, w in enumerate(members):
        b.add_compute(w, 1e-6 * (1 + me))  # staggered arrival
        peer = members[root_c] if name in ROOTED else -2
        if name in ("gatherv", "allgatherv", "scatterv", "reduce_scatter"):
            vc = vcounts or [BLOCK] * p
            own = vc[me]
            b.add_vcollective(
                w, KIND[name], call, vc, peer=peer, comm=comm, bytes_send=own, bytes_recv=own
            )
        elif name == "alltoallv":
            vc = vcounts or [BLOCK] * p
            send = [vc[(me + j) % p] for j in range(p)]  # rank me sends vc[me+j] to j
            recv = [vc[(j + me) % p] for j in range(p)]  # ... so j sends vc[j+me] to me
            b.add_vcollective(w, KIND[name], call, send + recv, comm=comm)
        else:
            b.add(w, KIND[name], call, peer=peer, comm=comm, bytes_send=BLOCK, bytes_recv=BLOCK)
    return b.build()


CASES = [(coll, alg) for coll, table in ALGORITHMS.items() for alg in table]
SIZES = [1, 2, 3, 5, 8, 12]


def expected_knowledge(name: str, p: int, me: int, root: int) -> set[int]:
    """Communicator ranks whose contribution ``me`` must hold after ``name`` (MPI standard)."""
    everyone = set(range(p))
    if name in ("barrier", "allreduce", "allgather", "allgatherv", "alltoall", "alltoallv"):
        return everyone
    if name == "reduce_scatter":
        return everyone
    if name in ("bcast", "scatter", "scatterv"):
        return {root, me}
    if name in ("reduce", "gather", "gatherv"):
        return everyone if me == root else {me}
    if name == "scan":
        return set(range(me + 1))
    if name == "exscan":
        return set(range(me)) | {me}
    raise AssertionError(name)


def power_of_two_only(name: str, alg: str, p: int) -> bool:
    """SimGrid's all-to-all ``pair`` refuses other sizes (tests/unit/test_collectives_alltoall.py)."""
    return (name, alg) == ("alltoall", "pair") and p & (p - 1) != 0


@pytest.mark.parametrize(("name", "alg"), CASES)
@pytest.mark.parametrize("p", SIZES)
def test_every_rank_ends_with_the_contributions_it_should_have(name: str, alg: str, p: int) -> None:
    if power_of_two_only(name, alg, p):
        return
    root = (p - 1) // 2
    trace = one_collective_trace(name, list(range(p)), p, root_c=root)
    lowered = lower_trace(trace, LoweringOptions(algorithms=((name, alg),)))
    lowered.program.validate()
    run = symbolic_run(lowered.program)
    for me in range(p):
        missing = expected_knowledge(name, p, me, root) - run.know[me]
        assert not missing, f"{name}/{alg} p={p}: rank {me} lacks contributions of {missing}"
    assert lowered.algorithms == {name: [alg]}


@pytest.mark.parametrize(("name", "alg"), CASES)
def test_sub_communicator_uses_member_world_ranks_only(name: str, alg: str) -> None:
    members = [6, 1, 4, 2, 9]  # scrambled world ranks of a 5-rank communicator in a 10-rank world
    if power_of_two_only(name, alg, len(members)):
        members = members[:4]
    trace = one_collective_trace(name, members, 10, root_c=2)
    lowered = lower_trace(trace, LoweringOptions(algorithms=((name, alg),)))
    prog = lowered.program
    run = symbolic_run(prog)
    for w in set(range(10)) - set(members):  # outsiders take no part
        assert prog.rank_ptr[w + 1] - prog.rank_ptr[w] == 0
        assert run.know[w] == {w}
    assert {s for s, _ in run.pairs} | {d for _, d in run.pairs} <= set(members)
    for me, w in enumerate(members):
        want = {members[c] for c in expected_knowledge(name, len(members), me, 2)}
        assert want <= run.know[w], f"{name}/{alg}: world rank {w} lacks {want - run.know[w]}"
    msgs = (prog.kind == Op.ISEND) | (prog.kind == Op.IRECV)
    assert np.all(prog.comm[msgs] == COLL_COMM_BASE + 1)  # collective matching context


def _total_recv(name: str, alg: str, p: int, vcounts: list[int] | None = None) -> SymbolicRun:
    trace = one_collective_trace(name, list(range(p)), p, root_c=0, vcounts=vcounts)
    return symbolic_run(lower_trace(trace, LoweringOptions(algorithms=((name, alg),))).program)


@pytest.mark.parametrize("p", [2, 3, 6, 8])
def test_message_volumes_match_closed_forms(p: int) -> None:
    """Byte totals from the algorithm definitions (Thakur et al. 2005, section 4)."""
    nb = BLOCK
    for alg in ("binomial", "linear"):
        assert _total_recv("bcast", alg, p).recv_bytes.sum() == (p - 1) * nb
        assert _total_recv("reduce", alg, p).recv_bytes.sum() == (p - 1) * nb
        assert _total_recv("gather", alg, p).recv_bytes[0] == (p - 1) * nb
        assert _total_recv("scatter", alg, p).sent_bytes[0] == (p - 1) * nb
    pof2 = 1 << (p.bit_length() - 1)
    rd = _total_recv("allreduce", "recursive_doubling", p).recv_bytes.sum()
    assert rd == (pof2 * (pof2.bit_length() - 1) + 2 * (p - pof2)) * nb
    # the ring moves 2 (p - 1) chunks of nb / p per rank (nb = 40 splits unevenly for p = 3, 6)
    assert _total_recv("allreduce", "ring", p).recv_bytes.sum() == 2 * (p - 1) * nb
    for alg in ("ring", "bruck"):
        assert np.all(_total_recv("allgather", alg, p).recv_bytes == (p - 1) * nb)
    vc = [8 * (j + 1) for j in range(p)]
    for alg in ("ring", "bruck"):
        got = _total_recv("allgatherv", alg, p, vc).recv_bytes
        assert np.array_equal(got, sum(vc) - np.array(vc))
    for alg in ("pairwise", "linear"):
        assert np.all(_total_recv("alltoall", alg, p).recv_bytes == (p - 1) * nb)
        got = _total_recv("alltoallv", alg, p, vc).recv_bytes
        # rank m receives vc[(j + m) % p] from every j != m (see one_collective_trace)
        assert np.array_equal(got, sum(vc) - np.array([vc[(2 * m) % p] for m in range(p)]))
    got = _total_recv("reduce_scatter", "pairwise", p, vc).recv_bytes
    assert np.array_equal(got, (p - 1) * np.array(vc))


def test_reduction_compute_is_charged_per_combine_step_at_the_configured_rate() -> None:
    p, rate = 8, 2e9
    trace = one_collective_trace("allreduce", list(range(p)), p)
    prog = lower_trace(
        trace,
        LoweringOptions(reduce_rate_Bps=rate, algorithms=(("allreduce", "recursive_doubling"),)),
    ).program
    comp = (prog.kind == Op.COMPUTE) & (prog.call == trace.call_names.index("MPI_allreduce"))
    # recursive doubling on 8 ranks: log2(8) = 3 combines of BLOCK bytes on every rank
    assert comp.sum() == 3 * p
    assert np.allclose(prog.seconds[comp], BLOCK / rate)


def test_trace_operator_cost_replaces_the_rate_model() -> None:
    b = TraceBuilder("test", "<op cost>", 2)
    call = b.call_id("MPI_Allreduce")
    for r in range(2):
        b.add(r, OpKind.ALLREDUCE, call, bytes_send=8, bytes_recv=8, seconds=3e-6)
    prog = lower_trace(b.build(), LoweringOptions(compute_scale=0.5)).program
    comp = prog.kind == Op.COMPUTE
    assert np.allclose(prog.seconds[comp], 1.5e-6) and comp.sum() == 2


@pytest.mark.parametrize("model", ["analytic", "compute-only"])
def test_all_collectives_in_sequence_run_on_the_engine(model: str) -> None:
    """Many collectives on two communicators back to back: no deadlock, nothing unmatched."""
    p = 6
    b = TraceBuilder("test", "<sequence>", p)
    sub = b.add_comm([5, 3, 1])
    for name in KIND:
        call = b.call_id(f"MPI_{name}")
        for comm, members in ((0, list(range(p))), (sub, [5, 3, 1])):
            for w in members:
                q = len(members)
                kw = {"comm": comm, "bytes_send": BLOCK, "bytes_recv": BLOCK}
                if name in ROOTED:
                    kw["peer"] = members[-1]
                if name == "alltoallv":
                    b.add_vcollective(w, KIND[name], call, [BLOCK] * (2 * q), comm=comm)
                elif name in ("gatherv", "allgatherv", "scatterv", "reduce_scatter"):
                    b.add_vcollective(w, KIND[name], call, [BLOCK] * q, **kw)
                else:
                    b.add(w, KIND[name], call, **kw)
    prog = lower_trace(b.build()).program
    run = simulate(prog, network=network_by_name(model))
    assert run.unmatched_sends == ()
    assert np.allclose(run.parts_s.sum(axis=1), run.end_s, rtol=1e-12, atol=1e-15)


def test_defaults_follow_the_size_thresholds() -> None:
    assert default_algorithm("allreduce", 16, CollSizes(2048)) == "recursive_doubling"
    assert default_algorithm("allreduce", 16, CollSizes(2049)) == "ring"
    assert default_algorithm("allgather", 16, CollSizes(100)) == "bruck"
    assert default_algorithm("allgather", 16, CollSizes(10_000)) == "ring"
    assert default_algorithm("alltoall", 4, CollSizes(1 << 20)) == "pairwise"
    assert default_algorithm("barrier", 4, CollSizes()) == "dissemination"


def test_bad_names_and_arguments_raise_typed_errors() -> None:
    with pytest.raises(CollectiveError, match="collective 'allfoo' is unknown"):
        validate_algorithms({"allfoo": "ring"})
    with pytest.raises(CollectiveError, match="algorithm 'tree' for bcast is unknown"):
        validate_algorithms({"bcast": "tree"})
    with pytest.raises(CollectiveError, match=r"root 4 of bcast is not a rank in 0\.\.3"):
        schedule("bcast", "binomial", 0, 4, 4, CollSizes(8))
    with pytest.raises(CollectiveError, match="allgatherv needs 4 per-rank byte counts, got 2"):
        schedule("allgatherv", "ring", 0, 4, 0, CollSizes(8, (1, 2)))
    with pytest.raises(CollectiveError, match="algorithm 'tree' for bcast is unknown"):
        LoweringOptions(algorithms=(("bcast", "tree"),))
