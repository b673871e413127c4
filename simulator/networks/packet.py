"""The packet network: congestion-aware packets on the links of a topology.

Messages are cut into packets injected one after the other; each packet crosses
the links of its route (:mod:`mpiuq.simulator.topologies.routing`) cut-through: its
head advances one hop latency per link, its tail cannot leave a link before it
left the previous one, and each link transmits at its bandwidth (injection links
at the injection bandwidth, switch and ejection links at the link bandwidth).
Packets whose routes share a link share it first-come-first-served. Links are
reserved along the whole route when a packet is injected (path reservation),
which keeps one event per packet. Without contention a message takes exactly the
analytic ``alpha + beta * N``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mpiuq.simulator.codes import ROUTINGS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.arrays import topology_arrays
from mpiuq.simulator.networks.registry import NetworkModelEntry, model_code, register_network
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.routing import intermediate, route_links
from mpiuq.simulator.topologies.zone import Zone

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from mpiuq.simulator.networks.state import NetworkArrays


@dataclass(frozen=True, slots=True)
class PacketNetwork:
    """Congestion-aware packet network on a topology.

    Parameters
    ----------
    topology
        Switches, links and routing tables.
    packet_bytes
        Size of the coarse packets messages are cut into.
    routing
        ``"minimal"`` or ``"valiant"`` (minimal to an intermediate switch chosen per
        message from its request id and ``seed`` -- in a group other than the source
        and destination groups on a dragonfly, at the top level of a fat-tree -- then
        minimal to the destination).
    seed
        Seed of the Valiant intermediate choice (>= 0).

    Raises
    ------
    SettingError
        For a packet size below one byte, an unknown routing, a negative seed, or
        Valiant routing on a topology without alternative paths.
    """

    topology: Topology = field(compare=False)
    packet_bytes: int = 4096
    routing: str = "minimal"
    seed: int = 0

    def __post_init__(self) -> None:
        if (
            isinstance(self.packet_bytes, bool)
            or not isinstance(self.packet_bytes, int)
            or self.packet_bytes < 1
        ):
            raise SettingError(
                f"packet_bytes={self.packet_bytes!r} is invalid: expected a whole number >= 1"
            )
        if self.routing not in ROUTINGS:
            raise SettingError(
                f"routing {self.routing!r} is unknown: expected one of {list(ROUTINGS)}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise SettingError(f"seed={self.seed!r} is invalid: expected a whole number >= 0")
        if self.routing == "valiant":
            self.topology.check_valiant()

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "packet"

    @property
    def hops(self) -> int:
        """Not used: hop counts come from the routes."""
        return 0

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return model_code("packet")

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return False


@njit(inline="always", error_model="numpy")
def packet_start(t, a, b, nbytes, flow, state, rates, tables):  # type: ignore[no-untyped-def]
    """Start flow ``flow`` of ``nbytes``: its packets follow as events. Returns -1."""
    state.flow_rem[flow] = nbytes
    return -1.0


@njit(inline="always", error_model="numpy")
def inject_packet(t, flow, a, b, request, state, rates, net):  # type: ignore[no-untyped-def]
    """Inject the next packet of ``flow`` from node ``a`` to node ``b`` at ``t``.

    Reserves the links of the route of the message with program request id
    ``request``. Returns ``(time, more)``: when the next packet can be injected and
    True while bytes remain, else the arrival of the last packet and False.
    """
    tables = net.tables
    link_busy = state.link_busy
    link_bytes = state.link_bytes
    link_inv = state.link_inv
    route = state.route
    hop = rates.hop
    rem = state.flow_rem[flow]
    pkt = min(net.packet_bytes, rem)
    mid = intermediate(tables, net.routing, a, b, request, net.route_seed)
    n = route_links(tables, a, b, mid, route)
    if n < 0:  # an engine bug, not a property of the program
        raise RuntimeError("packet route longer than the route buffer: broken routing table")
    # first link: the source node's injection link
    lk = route[0]
    e = max(t, link_busy[lk])
    tail = e + pkt * link_inv[lk]
    link_busy[lk] = tail
    link_bytes[lk] += pkt
    first_tail = tail
    # cut-through along the route: the head advances one hop latency per link,
    # the tail cannot leave a link before it left the previous one
    for j in range(1, n):
        lk = route[j]
        e = max(e + hop, link_busy[lk])
        tail = max(e + pkt * link_inv[lk], tail + hop)
        link_busy[lk] = tail
        link_bytes[lk] += pkt
    rem -= pkt
    state.flow_rem[flow] = rem
    if rem > 0.0:
        return first_tail, True
    return tail + hop, False


def build_packet(
    hops: int, topology: Topology | Zone | None, options: Mapping[str, Any]
) -> PacketNetwork:
    """The packet model on ``topology`` (required) with ``packet_bytes``, ``routing``, ``seed``."""
    if isinstance(topology, Zone):
        raise SettingError(
            f"network model 'packet' runs on mpiuq topologies: the {topology.name} of a "
            "SimGrid platform is replayed with the flow model (--model flow)"
        )
    if topology is None:
        raise SettingError(
            "network model 'packet' needs a topology, e.g. dragonfly:groups=9,switches=8"
        )
    return PacketNetwork(topology=topology, **options)


def packet_arrays(
    network: PacketNetwork, nodes: npt.NDArray[np.int64], n_nodes: int
) -> NetworkArrays:
    """The kernel's bundle of a packet network: its topology's tables and its routing."""
    return topology_arrays(
        network,
        nodes,
        n_nodes,
        network.topology,
        routing=ROUTINGS.index(network.routing),
        packet_bytes=float(network.packet_bytes),
        route_seed=int(network.seed),
    )


ENTRY = register_network(
    NetworkModelEntry(
        "packet",
        "congestion-aware packets on a topology (dragonfly, fat-tree, crossbar) with "
        "minimal or Valiant routing",
        PacketNetwork,
        build_packet,
        options=("packet_bytes", "routing", "seed"),
        cost_rank=0,
        start=packet_start,
        arrays=packet_arrays,
    )
)
