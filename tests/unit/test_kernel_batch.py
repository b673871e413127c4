"""The kernel's batch path: one program under many parameter vectors on any network.

``run_batch`` takes the same network bundle as a single run, so a lowered trace can be
replayed over many parameter sets on a topology; every set must give exactly what a
separate ``simulate`` gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from mpiuq.simulator import kernel
from mpiuq.simulator.engine import params_vector, program_arrays, simulate
from mpiuq.simulator.lowering.lower import lower_trace
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.networks import (
    AnalyticNetwork,
    ComputeOnly,
    NetworkModel,
    PacketNetwork,
    network_arrays,
)
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.placement import place_ranks
from mpiuq.simulator.topologies import make_topology

TOPO = make_topology("dragonfly:groups=4,switches=2,nodes=2,global=2")


@pytest.mark.parametrize(
    "network",
    [
        AnalyticNetwork(),
        ComputeOnly(),
        AnalyticNetwork(topology=TOPO),
        PacketNetwork(TOPO, packet_bytes=2048),
        PacketNetwork(TOPO, routing="valiant", seed=4),
    ],
    ids=["analytic", "compute-only", "analytic-topology", "packet", "packet-valiant"],
)
def test_batch_equals_single_runs(network: NetworkModel) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=16, iterations=2, message_bytes=40000))
    program = lower_trace(trace).program
    nodes = place_ranks(16, TOPO, "round-robin")
    sets = [
        SimParams(),
        SimParams(link_bw_GBps=3.0, post_header_delay_us=1.5),
        SimParams(eager_max_bytes=1 << 20, injection_bw_GBps=20.0),
    ]
    matrix = np.stack([params_vector(p) for p in sets])
    net = network_arrays(network, program.n_ranks, nodes)
    marks, acc, end, unfinished, events = kernel.run_batch(  # type: ignore[call-arg]
        program_arrays(program), matrix, net, 0.5
    )
    assert unfinished.tolist() == [0, 0, 0]
    total = 0
    for s, p in enumerate(sets):
        one = simulate(program, p, network, node_of_rank=nodes, compute_scale=0.5)
        np.testing.assert_array_equal(end[s], one.end_s)
        np.testing.assert_array_equal(acc[s], one.parts_s)
        np.testing.assert_array_equal(marks[s], one.marks_s)
        total += one.n_events
    assert events == total
    if not isinstance(network, ComputeOnly):  # the sets differ, so the check can fail
        assert not np.array_equal(end[0], end[1])
