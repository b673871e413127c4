"""The kernel's one call into the network models' compiled units (generated).

Written by `python -m mpiuq.generate_networks` from the network-model registry
(``mpiuq.simulator.networks.registry``); do not edit it by hand: a unit test fails
when it differs from what the registry generates.
"""

from __future__ import annotations

from mpiuq.simulator.networks.analytic import analytic_arrival as _start_0
from mpiuq.simulator.networks.compute_only import zero_arrival as _start_1
from mpiuq.simulator.networks.packet import packet_start as _start_2
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def start_transfer(t, src, dst, nbytes, flow, net, state, rates):  # type: ignore[no-untyped-def]
    """Start moving ``nbytes`` from rank ``src`` to rank ``dst`` at time ``t``.

    Returns the arrival time, or -1 for a model whose flow ``flow`` the caller then
    starts with a packet event at ``t``. Ranks on the same node exchange through
    memory (no network time).
    """
    a = net.node_of[src]
    b = net.node_of[dst]
    if a == b:
        return t
    kind = net.kind
    if kind == 0:  # analytic
        return _start_0(t, a, b, nbytes, flow, state, rates, net.tables)
    if kind == 1:  # compute-only
        return _start_1(t, a, b, nbytes, flow, state, rates, net.tables)
    return _start_2(t, a, b, nbytes, flow, state, rates, net.tables)  # packet
