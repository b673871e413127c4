"""The analytic network: ``alpha + beta * N`` per message with port serialisation.

Eq. (5) of the reference paper: ``delta_t = alpha + beta * N`` with
``beta = 1 / min(injection_bw, link_bw)``; ``alpha = hops * hop_latency``, or with a
topology the hop latency times the links of the message's minimal route. Each
node's injection port serialises its messages at the injection bandwidth and its
ejection port delivers them in order at the link bandwidth (like MACRELS). With
``hops = 2`` it is the two-node network of the benchmarks: injection link, one
switch, link into the destination.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.registry import NetworkModelEntry, model_code, register_network
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.routing import switch_hops
from mpiuq.simulator.topologies.zone import Zone


@dataclass(frozen=True, slots=True)
class AnalyticNetwork:
    """Contention-free ``alpha + beta * N`` network with port serialisation.

    Parameters
    ----------
    hops
        Links traversed by every message (2 = node -> switch -> node); ignored
        when a topology is given.
    topology
        Optional topology: ``alpha`` is then the hop latency times the number of
        links on the minimal route of each message.
    """

    hops: int = 2
    topology: Topology | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.hops, bool) or not isinstance(self.hops, int) or self.hops < 1:
            raise SettingError(f"hops={self.hops!r} is invalid: expected a whole number >= 1")

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "analytic"

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return model_code("analytic")

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return False


@njit(inline="always", error_model="numpy")
def analytic_arrival(t, a, b, nbytes, flow, state, rates, tables):  # type: ignore[no-untyped-def]
    """Arrival time of ``nbytes`` sent at ``t`` from node ``a`` to node ``b`` (reserves the ports)."""
    lat = rates.alpha
    if tables.node_switch.shape[0] > 0:
        hops = switch_hops(
            tables.node_switch[a], tables.node_switch[b], tables.next_link, tables.link_dst
        )
        lat = rates.hop * (2 + hops)
    inj_free = state.inj_free
    ej_free = state.ej_free
    start = max(t, inj_free[a])
    inj_free[a] = start + nbytes * rates.inv_inj
    arrive = start + lat + nbytes * rates.inv_min
    serial = ej_free[b] + nbytes * rates.inv_link
    if serial > arrive:
        arrive = serial
    ej_free[b] = arrive
    return arrive


def build_analytic(
    hops: int, topology: Topology | Zone | None, options: Mapping[str, Any]
) -> AnalyticNetwork:
    """The analytic model of ``hops`` links per message, or on ``topology``'s routes."""
    if isinstance(topology, Zone):
        raise SettingError(
            f"network model 'analytic' runs on mpiuq topologies: the {topology.name} of a "
            "SimGrid platform is replayed with the flow model (--model flow)"
        )
    return AnalyticNetwork(hops=hops, topology=topology)


ENTRY = register_network(
    NetworkModelEntry(
        "analytic",
        "`alpha + beta * N` per message with injection and ejection port serialisation "
        "(eq. 5 of the reference paper), on a topology's minimal routes if given",
        AnalyticNetwork,
        build_analytic,
        cost_rank=2,
        start=analytic_arrival,
    )
)
