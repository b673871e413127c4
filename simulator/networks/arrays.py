"""The kernel's bundle of a placed network model (:class:`~.state.NetworkArrays`).

:func:`network_arrays` checks the placement and asks the model's registry entry for
its bundle; models without their own (``arrays=None``) get :func:`topology_arrays`:
the routing tables of the model's ``topology`` if it has one, else none.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import ROUTE_MINIMAL
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.flow import no_flow_tables
from mpiuq.simulator.networks.registry import NETWORK_REGISTRY, NetworkModel, model_code
from mpiuq.simulator.networks.state import NetworkArrays
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.routing import no_tables

__all__ = ["network_arrays", "topology_arrays"]


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
        If ``node_of_rank`` has the wrong shape or names a node the topology lacks, or the
        model is not registered or not in the compiled dispatch (``codes.NETWORK_MODELS``).
    """
    entry = NETWORK_REGISTRY.get(network.name)
    model_code(network.name)  # a model missing from the generated codes is refused here
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
    if entry.arrays is not None:
        return entry.arrays(network, nodes, n_nodes)
    topology = getattr(network, "topology", None)
    return topology_arrays(network, nodes, n_nodes, topology)


def topology_arrays(
    network: NetworkModel,
    nodes: npt.NDArray[np.int64],
    n_nodes: int,
    topology: Topology | None,
    routing: int = ROUTE_MINIMAL,
    packet_bytes: float = 1.0,
    route_seed: int = 0,
) -> NetworkArrays:
    """The bundle of ``network`` on ``nodes`` with ``topology``'s routing tables (or none:
    then ``n_nodes`` nodes) and the packet network's ``routing`` code, ``packet_bytes``
    and ``route_seed``.

    Raises
    ------
    SettingError
        If ``nodes`` names a node the topology lacks.
    """
    tables = no_tables()
    if topology is not None:
        if nodes.size and (nodes.min() < 0 or nodes.max() >= topology.n_nodes):
            raise SettingError(
                f"node_of_rank uses nodes {int(nodes.min())}..{int(nodes.max())}: "
                f"the {topology.name} topology has nodes 0..{topology.n_nodes - 1}"
            )
        n_nodes = topology.n_nodes
        tables = topology.routing_tables()
    return NetworkArrays(
        kind=int(network.kind),
        zero_overhead=bool(network.zero_overhead),
        hops=int(network.hops),
        node_of=nodes,
        n_nodes=n_nodes,
        routing=routing,
        route_seed=route_seed,
        packet_bytes=packet_bytes,
        tables=tables,
        flow=no_flow_tables(),
        control_free=False,
    )
