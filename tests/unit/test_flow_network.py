"""The flow network in the engine: closed-form transfer times, sharing over time, SMPI rules.

References: a lone transfer of N bytes on a route of L links takes ``L hop + N / B``
(B the smallest bandwidth of the route), exactly the analytic model's ``alpha + beta N``;
two equal flows into one node share its ejection link and end together at ``2 N / B``;
a flow that starts while another runs gets half the link from then on (fluid
arithmetic below). With SimGrid's SMPI rules a message of s bytes takes
``lat * f_lat(s + 16) + (s + 16) / (B * f_bw(s + 16))`` once matched.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_packet_network import pairs_program

from mpiuq.simulator.engine import simulate
from mpiuq.simulator.networks import (
    AnalyticNetwork,
    FlowNetwork,
    FlowSharing,
    network_by_name,
)
from mpiuq.simulator.networks.flow import SMPI_BW_FACTORS, SMPI_LAT_FACTORS
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.table import ProgramBuilder
from mpiuq.simulator.regimes import Regime
from mpiuq.simulator.replay.simgrid_like import SIMGRID_REGIMES
from mpiuq.simulator.topologies import make_topology
from mpiuq.simulator.topologies.cluster_zone import build_cluster_zone

# mailbox protocol for every size: one transfer per message
P = SimParams(small_max_bytes=1 << 24, eager_max_bytes=1 << 24)
# one transfer per message, once matched, no endpoint costs (SimGrid-like protocol)
FREE = FlowSharing(control_free=True)
ONE = SimParams(regimes=(Regime("rendezvous"),))


@pytest.mark.parametrize(
    "spec", [None, "crossbar:nodes=4", "fattree:k=2,levels=3", "dragonfly:groups=3,switches=2"]
)
@pytest.mark.parametrize("nbytes", [1, 4096, 100_000, 1 << 20])
def test_lone_message_equals_analytic(spec: str | None, nbytes: int) -> None:
    topo = None if spec is None else make_topology(spec)
    n = 4 if topo is None else topo.n_nodes
    b = ProgramBuilder(n)
    b.send(0, n - 1, nbytes)
    b.recv(n - 1, 0, nbytes)
    program = b.build()
    for params in (P, SimParams()):
        flow = simulate(program, params, network_by_name("flow", topology=topo))
        analytic = simulate(program, params, AnalyticNetwork(topology=topo))
        np.testing.assert_allclose(flow.end_s, analytic.end_s, rtol=1e-12)
        np.testing.assert_allclose(flow.parts_s, analytic.parts_s, rtol=1e-9, atol=1e-15)


def test_two_flows_into_one_node_share_its_link() -> None:
    n = 1 << 22
    program = pairs_program(3, [(0, 2), (1, 2)], n)
    run = simulate(program, ONE, FlowNetwork(sharing=FREE, zero_overhead=True))
    b = ONE.link_bw_GBps * 1e9  # the ejection link is the narrower (12.47 < 13.04 GB/s)
    hop = ONE.hop_latency_ns * 1e-9
    assert run.end_s[2] == pytest.approx(2 * hop + 2 * n / b, rel=1e-12)


def test_a_flow_joining_halves_the_share_from_then_on() -> None:
    # rank 0 sends N at 0; rank 1 computes for d, then sends N; both into rank 2
    n, d = 1 << 22, 1e-4
    b = ProgramBuilder(3)
    b.isend(0, 2, n, tag=0)
    b.compute(1, d)
    b.isend(1, 2, n, tag=1)
    r0 = b.irecv(2, 0, n, tag=0)
    r1 = b.irecv(2, 1, n, tag=1)
    b.wait(2, r0)
    b.mark(2)
    b.wait(2, r1)
    run = simulate(b.build(), ONE, FlowNetwork(sharing=FREE, zero_overhead=True))
    bw = ONE.link_bw_GBps * 1e9
    lat = 2 * ONE.hop_latency_ns * 1e-9
    # alone from lat to d + lat, then at half rate until its last byte
    left = n - bw * d
    first = lat + d + 2 * left / bw
    # the second had bw/2 until then, then the whole link
    second = first + (n - (first - d - lat) * bw / 2) / bw
    assert run.marks_s[0] == pytest.approx(first, rel=1e-12)
    assert run.end_s[2] == pytest.approx(second, rel=1e-12)


def smpi_time(nbytes: int, lat: float, bw: float) -> float:
    """SMPI's time of a lone message: latency and rate by SMPI's factor tables."""
    size = nbytes + 16

    def factor(table: tuple[tuple[int, float], ...]) -> float:
        f = 1.0
        for threshold, value in table:
            if size <= threshold:
                return f
            f = value
        return f

    return lat * factor(SMPI_LAT_FACTORS) + size / (bw * factor(SMPI_BW_FACTORS))


@pytest.mark.parametrize("nbytes", [0, 100, 256, 1000, 5000, 20_000, 65_535, 65_536, 1 << 20])
def test_smpi_rules_for_a_lone_message(nbytes: int) -> None:
    zone = build_cluster_zone(2, backbone_bw=8.0, reference=(12.5, 1000.0))
    params = SimParams(
        injection_bw_GBps=12.5, link_bw_GBps=12.5, hop_latency_ns=1000.0, regimes=SIMGRID_REGIMES
    )
    b = ProgramBuilder(2)
    b.send(0, 1, nbytes)
    b.recv(1, 0, nbytes)
    run = simulate(
        b.build(), params, FlowNetwork(zone, sharing=FlowSharing.smpi(), zero_overhead=True)
    )
    # route: private link up (1 us), backbone (0 latency), private link down (1 us)
    want = smpi_time(nbytes, 2e-6, 12.5e9)
    assert run.end_s[1] == pytest.approx(want, rel=1e-12)
    detached = nbytes < 65536
    assert run.end_s[0] == (0.0 if detached else pytest.approx(want, rel=1e-12))


def test_detached_payload_moves_when_the_receive_is_posted() -> None:
    # the receiver posts late: SMPI starts the transfer then (sender done at once)
    zone = build_cluster_zone(2, reference=(12.5, 1000.0))
    params = SimParams(
        injection_bw_GBps=12.5, link_bw_GBps=12.5, hop_latency_ns=1000.0, regimes=SIMGRID_REGIMES
    )
    b = ProgramBuilder(2)
    b.send(0, 1, 1000)
    b.compute(1, 1e-3)
    b.recv(1, 0, 1000)
    run = simulate(
        b.build(), params, FlowNetwork(zone, sharing=FlowSharing.smpi(), zero_overhead=True)
    )
    assert run.end_s[0] == 0.0
    assert run.end_s[1] == pytest.approx(1e-3 + smpi_time(1000, 2e-6, 12.5e9), rel=1e-12)


def test_symmetric_all_to_all_ends_together_through_many_reschedules() -> None:
    # latency penalties differ by route length on a fat-tree: shares move at every end,
    # so stale events pile up and the heap is compacted; the exchange stays symmetric
    topo = make_topology("fattree:k=2,levels=3")
    n = topo.n_nodes
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    program = pairs_program(n, pairs, 200_000)
    sharing = FlowSharing(latency_penalty=True, control_free=True, crosstraffic=0.05)
    run = simulate(program, ONE, FlowNetwork(zone=None, sharing=sharing, zero_overhead=True))
    assert np.ptp(run.end_s) <= 1e-12 * run.end_s.max()
    run = simulate(
        program, ONE, network_by_name("flow", topology=topo, sharing=sharing, zero_overhead=True)
    )
    # by symmetry (node i -> node i xor s) of d-mod-k routing every rank ends together
    assert np.ptp(run.end_s) <= 1e-9 * run.end_s.max()
    total = sum(200_000 for _ in pairs)
    assert run.link_bytes[:n].sum() == total  # every byte left through an injection link
    assert math.isfinite(run.simulated_time_s)


def test_heap_compaction_changes_no_result() -> None:
    """Flows of different sizes end one by one, each end re-rating the others: stale end
    events pile up. With room for 2 stale events the heap is compacted again and again;
    every output must equal a run with the default room, but for the event count: the
    stale events compacted away are never popped."""
    from mpiuq.simulator import kernel
    from mpiuq.simulator.engine import params_vector, program_arrays
    from mpiuq.simulator.networks import network_arrays

    n = 6
    b = ProgramBuilder(n)
    reqs: dict[int, list[int]] = {}
    for i in range(n):
        for j in range(n):
            if i != j:
                size = 10_000 * (1 + (7 * i + 3 * j) % 23)
                b.isend(i, j, size, tag=i)
                reqs.setdefault(j, []).append(b.irecv(j, i, size, tag=i))
    for j, rs in reqs.items():
        b.waitall(j, rs)
    prog = program_arrays(b.build())
    sharing = FlowSharing(latency_penalty=True, control_free=True, crosstraffic=0.05)
    net = network_arrays(FlowNetwork(sharing=sharing, zero_overhead=True), n)
    outputs = []
    for room in (None, 2):
        state = kernel.state_for(prog, net)
        if room is not None:
            state.network.flow.ctr[3] = room
        out = kernel.run_program(prog, params_vector(ONE), net, 1.0, state)
        outputs.append([np.array(x, copy=True) for x in out])
    default, compacted = outputs
    assert int(compacted[4]) < int(default[4])  # events: fewer stale ones popped
    for k in (0, 1, 2, 3, 5, 6, 7):  # end, parts, per call, marks, pc, matches, link bytes
        np.testing.assert_array_equal(default[k], compacted[k])
