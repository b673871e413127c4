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
from mpiuq.simulator.networks.packet import PacketNetwork
from mpiuq.simulator.networks.state import NetworkArrays
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.routing import no_tables

__all__ = [
    "NETWORK_MODELS",
    "ROUTINGS",
    "TWO_NODE_SWITCH",
    "AnalyticNetwork",
    "ComputeOnly",
    "NetworkArrays",
    "NetworkModel",
    "PacketNetwork",
    "network_arrays",
    "network_by_name",
]

NetworkModel = AnalyticNetwork | ComputeOnly | PacketNetwork

#: The benchmark network: two nodes through one switch.
TWO_NODE_SWITCH = AnalyticNetwork(hops=2)


def network_by_name(
    name: str,
    hops: int = 2,
    topology: Topology | None = None,
    **packet_options: Any,
) -> NetworkModel:
    """Build a network model from its registry name.

    Parameters
    ----------
    name
        One of :data:`NETWORK_MODELS`.
    hops
        Links per message of the analytic model without topology.
    topology
        Topology of the packet model (required) or of the analytic model (optional).
    packet_options
        ``packet_bytes``, ``routing``, ``seed`` of :class:`PacketNetwork`.

    Raises
    ------
    SettingError
        If ``name`` is not one of :data:`NETWORK_MODELS`, or the packet model lacks a topology.
    """
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
    topology = network.topology if isinstance(network, AnalyticNetwork | PacketNetwork) else None
    n_nodes = int(nodes.max()) + 1 if nodes.size else 1
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
    )
