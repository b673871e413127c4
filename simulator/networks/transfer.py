"""The kernel's one call into the network units: start a transfer between two ranks."""

from __future__ import annotations

from mpiuq.simulator.codes import NET_PACKET, NET_ZERO
from mpiuq.simulator.networks.analytic import analytic_arrival
from mpiuq.simulator.networks.compute_only import zero_arrival
from mpiuq.simulator.networks.packet import packet_start
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def start_transfer(t, src, dst, nbytes, flow, net, state, rates):  # type: ignore[no-untyped-def]
    """Start moving ``nbytes`` from rank ``src`` to rank ``dst`` at time ``t``.

    Returns the arrival time, or -1 for the packet network, whose flow ``flow`` the
    caller then starts with a packet event at ``t``. Ranks on the same node exchange
    through memory (no network time).
    """
    a = net.node_of[src]
    b = net.node_of[dst]
    if net.kind == NET_ZERO or a == b:
        return zero_arrival(t)
    if net.kind == NET_PACKET:
        return packet_start(flow, nbytes, state)
    return analytic_arrival(t, a, b, nbytes, state, rates, net.tables)
