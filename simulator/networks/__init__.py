"""Network models the engine can run on, chosen by name.

Each model is a small frozen description beside its compiled unit, one module each;
every unit has one contract -- *start a transfer of N bytes between two nodes at
time t and return its arrival time* (or start a flow whose packets follow as
events), updating its own state -- and the kernel dispatches on the model's
integer ``kind`` (:func:`mpiuq.simulator.networks.transfer.start_transfer`).
Bandwidths and the per-hop latency come from
:class:`~mpiuq.simulator.parameters.SimParams`, so calibrated values carry over.

* ``analytic`` (:mod:`.analytic`) -- ``alpha + beta * N`` per message (eq. 5 of the
  reference paper) with injection and ejection port serialisation;
* ``packet`` (:mod:`.packet`) -- congestion-aware packets on a topology (dragonfly,
  fat-tree, crossbar) with minimal or Valiant routing;
* ``flow`` (:mod:`.flow`) -- flows sharing link bandwidth by max-min fairness, on a
  topology, a SimGrid platform's cluster, or one switch (CM02, LV08 and SMPI rules);
* ``compute-only`` (:mod:`.compute_only`) -- zero network time and zero MPI-stack
  overhead: the limit set by load balance alone.

:func:`network_arrays` turns a model and a rank placement into the
:class:`~mpiuq.simulator.networks.state.NetworkArrays` bundle the kernel runs on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import NETWORK_MODELS, ROUTE_MINIMAL, ROUTINGS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.analytic import AnalyticNetwork
from mpiuq.simulator.networks.compute_only import ComputeOnly
from mpiuq.simulator.networks.flow import FlowNetwork, FlowSharing, flow_tables, no_flow_tables
from mpiuq.simulator.networks.packet import PacketNetwork
from mpiuq.simulator.networks.state import NetworkArrays
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.routing import no_tables
from mpiuq.simulator.topologies.zone import Zone, crossbar_zone, zone_of_topology

__all__ = [
    "NETWORK_MODELS",
    "ROUTINGS",
    "TWO_NODE_SWITCH",
    "AnalyticNetwork",
    "ComputeOnly",
    "FlowNetwork",
    "FlowSharing",
    "NetworkArrays",
    "NetworkModel",
    "PacketNetwork",
    "network_arrays",
    "network_by_name",
]

NetworkModel = AnalyticNetwork | ComputeOnly | PacketNetwork | FlowNetwork

#: The benchmark network: two nodes through one switch.
TWO_NODE_SWITCH = AnalyticNetwork(hops=2)


def network_by_name(
    name: str,
    hops: int = 2,
    topology: Topology | Zone | None = None,
    **options: Any,
) -> NetworkModel:
    """Build a network model from its registry name.

    Parameters
    ----------
    name
        One of :data:`NETWORK_MODELS`.
    hops
        Links per message of the analytic and flow models without topology.
    topology
        Topology of the packet model (required) or of the analytic and flow models
        (optional); a :class:`~mpiuq.simulator.topologies.zone.Zone` (a SimGrid
        platform's cluster) only for the flow model.
    options
        ``packet_bytes``, ``routing``, ``seed`` of :class:`PacketNetwork`; ``sharing``
        and ``zero_overhead`` of :class:`FlowNetwork` (ignored by the other models).

    Raises
    ------
    SettingError
        If ``name`` is not one of :data:`NETWORK_MODELS`, the packet model lacks a
        topology, or a zone is given to a model other than the flow model.
    """
    flow_options = {k: options.pop(k) for k in ("sharing", "zero_overhead") if k in options}
    if name == "flow":
        zone = zone_of_topology(topology) if isinstance(topology, Topology) else topology
        return FlowNetwork(zone=zone, hops=hops, **flow_options)
    if isinstance(topology, Zone):
        raise SettingError(
            f"network model {name!r} runs on mpiuq topologies: the {topology.name} of a "
            "SimGrid platform is replayed with the flow model (--model flow)"
        )
    packet_options = options
    if name == "analytic":
        return AnalyticNetwork(hops=hops, topology=topology)
    if name == "compute-only":
        return ComputeOnly()
    if name == "packet":
        if topology is None:
            raise SettingError(
                "network model 'packet' needs a topology, e.g. dragonfly:groups=9,switches=8"
            )
        return PacketNetwork(topology=topology, **packet_options)
    raise SettingError(f"network model {name!r} is unknown: expected one of {list(NETWORK_MODELS)}")


def network_arrays(
    network: NetworkModel, n_ranks: int, node_of_rank: npt.ArrayLike | None = None
) -> NetworkArrays:
    """The kernel's bundle of ``network`` for ``n_ranks`` ranks placed on ``node_of_rank``.

    Parameters
    ----------
    network
        The model.
    n_ranks
        Number of ranks of the program.
    node_of_rank
        Node hosting each rank (default: one rank per node, rank ``i`` on node ``i``).

    Raises
    ------
    SettingError
        If ``node_of_rank`` has the wrong shape or names a node the topology lacks.
    """
    nodes = (
        np.arange(n_ranks, dtype=np.int64)
        if node_of_rank is None
        else np.ascontiguousarray(node_of_rank, dtype=np.int64)
    )
    if nodes.shape != (n_ranks,):
        raise SettingError(
            f"node_of_rank has shape {nodes.shape}: expected ({n_ranks},), one node per rank"
        )
    if nodes.size and nodes.min() < 0:
        raise SettingError(f"node_of_rank holds node {int(nodes.min())}: expected nodes >= 0")
    n_nodes = int(nodes.max()) + 1 if nodes.size else 1
    if isinstance(network, FlowNetwork):
        return _flow_arrays(network, nodes, n_nodes)
    topology = network.topology if isinstance(network, AnalyticNetwork | PacketNetwork) else None
    tables = no_tables()
    if topology is not None:
        if nodes.size and (nodes.min() < 0 or nodes.max() >= topology.n_nodes):
            raise SettingError(
                f"node_of_rank uses nodes {int(nodes.min())}..{int(nodes.max())}: "
                f"the {topology.name} topology has nodes 0..{topology.n_nodes - 1}"
            )
        n_nodes = topology.n_nodes
        tables = topology.routing_tables()
    routing, packet_bytes, seed = ROUTE_MINIMAL, 1.0, 0
    if isinstance(network, PacketNetwork):
        routing = ROUTINGS.index(network.routing)
        packet_bytes, seed = float(network.packet_bytes), int(network.seed)
    return NetworkArrays(
        kind=int(network.kind),
        zero_overhead=bool(network.zero_overhead),
        hops=int(network.hops),
        node_of=nodes,
        n_nodes=n_nodes,
        routing=routing,
        route_seed=seed,
        packet_bytes=packet_bytes,
        tables=tables,
        flow=no_flow_tables(),
        control_free=False,
    )


def _flow_arrays(network: FlowNetwork, nodes: npt.NDArray[np.int64], n_nodes: int) -> NetworkArrays:
    """:func:`network_arrays` of a flow network (its zone, or one switch for the nodes)."""
    zone = network.zone if network.zone is not None else crossbar_zone(n_nodes, network.hops)
    if nodes.size and nodes.max() >= zone.n_nodes:
        raise SettingError(
            f"node_of_rank uses nodes {int(nodes.min())}..{int(nodes.max())}: "
            f"the {zone.name} has hosts 0..{zone.n_nodes - 1}"
        )
    return NetworkArrays(
        kind=int(network.kind),
        zero_overhead=bool(network.zero_overhead),
        hops=int(network.hops),
        node_of=nodes,
        n_nodes=zone.n_nodes,
        routing=ROUTE_MINIMAL,
        route_seed=0,
        packet_bytes=1.0,
        tables=zone.routing_tables(),
        flow=flow_tables(zone, network.sharing),
        control_free=bool(network.sharing.control_free),
    )
