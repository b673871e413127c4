"""The bundles every network unit works on: its description, rates and mutable state.

* :class:`NetworkArrays` -- the typed, immutable description of one network for the
  compiled kernel (built from a :data:`~mpiuq.simulator.networks.NetworkModel` by
  :func:`mpiuq.simulator.networks.network_arrays`); :func:`mpiuq.simulator.kernel.run_program`
  and :func:`~mpiuq.simulator.kernel.run_batch` take the same bundle.
* :class:`Rates` -- the network's rates under one parameter vector (seconds per byte,
  seconds), computed by the kernel from the parameters.
* :class:`NetState` -- ports, flows and links as they evolve during a run.
* :class:`FlowTables` and :class:`FlowState` -- the flow network's description and state.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.topologies.routing import RoutingTables
from mpiuq.simulator.topologies.zone_routes import ZoneRoutes

F64 = npt.NDArray[np.float64]


class FlowTables(NamedTuple):
    """What the flow network reads of its zone and sharing rules (empty for other models).

    Bandwidths are multiples of ``link_bw_GBps`` (``injection_bw_GBps`` where
    ``link_injection``), latencies multiples of ``hop_latency_ns``; the size-dependent
    factors follow SMPI's rule (:func:`~mpiuq.simulator.networks.flow_start.size_factor`).
    """

    zone: ZoneRoutes  #: how routes are found
    link_bw: F64  #: (n_links,) bandwidth multiple
    link_injection: npt.NDArray[np.bool_]  #: (n_links,) bandwidth of injection_bw_GBps
    link_lat: F64  #: (n_links,) latency multiple
    link_fatpipe: npt.NDArray[np.bool_]  #: (n_links,) bounds each flow alone, not shared
    max_route: int  #: most links on one route
    factor_bytes: F64  #: ascending size thresholds of the factors, bytes
    lat_factor: F64  #: latency factor above each threshold
    bw_factor: F64  #: bandwidth factor above each threshold
    latency_penalty: bool  #: a flow's sharing penalty is its latency (else 1 for all)
    weight_s: float  #: bytes: the sharing penalty adds weight_s / bandwidth per link
    tcp_gamma: float  #: bytes: rate bound tcp_gamma / (2 latency); 0: none
    cross: float  #: weight of a flow on its reverse route (cross-traffic); 0: none
    envelope: float  #: bytes added to every transfer


class FlowState(NamedTuple):
    """Flows of the flow network during a run, indexed by message slot (a message moves
    one transfer at a time), and the links they share (allocated by ``kernel.new_state``)."""

    phase: npt.NDArray[np.int8]  #: FLOW_LATENCY or FLOW_SHARING (-1: none)
    stage: npt.NDArray[np.int8]  #: stage of the message the flow carries
    seq: npt.NDArray[np.int64]  #: heap sequence of the flow's pending event (-1: none)
    rem: F64  #: bytes left at t_last
    t_last: F64  #: when rem was last brought up to date, s
    t_done: F64  #: when the flow ends at its current rate, s
    rate: F64  #: bytes per second (max-min share times the bandwidth factor)
    value: F64  #: max-min share, bytes per second
    new_value: F64  #: scratch: the share being computed
    penalty: F64  #: sharing penalty (larger: smaller share)
    bound: F64  #: largest share, bytes per second
    factor: F64  #: bandwidth factor
    n_ent: npt.NDArray[np.int32]  #: links the flow shares (route, then reverse route)
    cnst: npt.NDArray[np.int32]  #: (slots, entries) those links
    weight: F64  #: (slots, entries) the flow's weight on each
    el_next: npt.NDArray[np.int64]  #: per (slot, entry): next flow entry on the same link
    el_prev: npt.NDArray[np.int64]
    f_stamp: npt.NDArray[np.int64]  #: scratch: flows reached by a recomputation
    f_done: npt.NDArray[np.int64]  #: scratch: flows whose share is fixed
    f_mark: npt.NDArray[np.int64]  #: scratch: flows collected in one filling round
    comp_f: npt.NDArray[np.int64]  #: scratch: the flows of a recomputation
    sat_f: npt.NDArray[np.int64]  #: scratch: the flows of one filling round
    resched: npt.NDArray[np.int64]  #: flows whose end moved (for the kernel's heap)
    head: npt.NDArray[np.int64]  #: (n_links,) first flow entry on each link (-1: none)
    load: F64  #: (n_links,) bytes per second in use
    cap: F64  #: (n_links,) capacity, bytes per second (set by run_program)
    c_rem: F64  #: scratch: capacity left while filling
    c_usage: F64  #: scratch: sum of weight / penalty of unfixed flows
    c_left: npt.NDArray[np.int64]  #: scratch: unfixed flow entries per link
    c_stamp: npt.NDArray[np.int64]  #: scratch: links reached by a recomputation
    comp_c: npt.NDArray[np.int64]  #: scratch: the links of a recomputation
    active: npt.NDArray[np.int64]  #: scratch: links still to saturate
    pending: npt.NDArray[np.int64]  #: links waiting for this instant's recomputation
    c_pending: npt.NDArray[np.int8]  #: (n_links,) 1 while listed in ``pending``
    ctr: npt.NDArray[np.int64]  #: counters (``networks.flow_share``, ``kernel.flows``)


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
    flow
        The flow network's zone and sharing rules (empty for other models).
    control_free
        Whether protocol control messages (headers without payload, get requests,
        go-aheads, acknowledgements) take no network time (SimGrid moves payloads only).
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
    flow: FlowTables
    control_free: bool


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
    route: npt.NDArray[np.int32]  #: scratch: the links of the packet or flow being started
    flow: FlowState  #: the flow network's flows and links (empty for other models)
