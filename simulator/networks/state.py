"""The bundles every network unit works on: its description, rates and mutable state.

* :class:`NetworkArrays` -- the typed, immutable description of one network for the
  compiled kernel (built from a :data:`~mpiuq.simulator.networks.NetworkModel` by
  :func:`mpiuq.simulator.networks.network_arrays`); :func:`mpiuq.simulator.kernel.run_program`
  and :func:`~mpiuq.simulator.kernel.run_batch` take the same bundle.
* :class:`Rates` -- the network's rates under one parameter vector (seconds per byte,
  seconds), computed by the kernel from the parameters.
* :class:`NetState` -- ports, flows and links as they evolve during a run.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.topologies.routing import RoutingTables

F64 = npt.NDArray[np.float64]


class NetworkArrays(NamedTuple):
    """One network as the compiled kernel sees it.

    Attributes
    ----------
    kind
        ``NET_*`` code of :mod:`mpiuq.simulator.codes`.
    zero_overhead
        Whether MPI-stack costs are switched off (compute-only).
    hops
        Links per message of the analytic model without topology.
    node_of
        ``int64 (n_ranks,)`` node of each rank; ranks on one node exchange through memory.
    n_nodes
        Number of nodes (ports).
    routing, route_seed
        ``ROUTE_*`` code and seed of the packet network's routing.
    packet_bytes
        Packet size of the packet network, bytes.
    tables
        Topology arrays (all empty without topology).
    """

    kind: int
    zero_overhead: bool
    hops: int
    node_of: npt.NDArray[np.int64]
    n_nodes: int
    routing: int
    route_seed: int
    packet_bytes: float
    tables: RoutingTables


class Rates(NamedTuple):
    """Network rates under one parameter vector (SI units)."""

    inv_inj: float  #: seconds per byte of an injection link
    inv_link: float  #: seconds per byte of a switch or ejection link
    inv_min: float  #: seconds per byte at the slower of the two
    hop: float  #: seconds per link traversal
    alpha: float  #: analytic latency without topology, ``hops * hop``


class NetState(NamedTuple):
    """Ports, flows and links during a run (allocated by ``kernel.new_state``)."""

    inj_free: F64  #: (n_nodes,) injection port free at, s
    ej_free: F64  #: (n_nodes,) ejection port free at, s
    flow_rem: F64  #: (n_flows,) bytes left per packet flow (set when it starts)
    link_busy: F64  #: (n_links,) link busy until, s
    link_bytes: F64  #: (n_links,) bytes carried per link
    link_inv: F64  #: (n_links,) seconds per byte per link (set by run_program)
    route: npt.NDArray[np.int32]  #: scratch: the links of the packet being injected
