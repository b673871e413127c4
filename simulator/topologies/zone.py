"""A network as a flow model sees it: hosts, links with their bandwidth and latency, routes.

A :class:`Zone` is what the flow network (:mod:`mpiuq.simulator.networks.flow`) shares
bandwidth over. Each link is one shared resource (a SimGrid ``SHARED`` link is one link
used both ways; ``SPLITDUPLEX`` makes two); a ``FATPIPE`` link bounds every flow
crossing it on its own and is never shared. Bandwidths and latencies are *multipliers*
of the simulator's parameters -- ``link_bw_GBps`` (or ``injection_bw_GBps`` for links
marked ``injection``) and ``hop_latency_ns`` -- so calibrated parameters and what-if
edits apply to every zone. A zone read from a SimGrid platform carries the
``reference`` parameter values that make its multipliers the platform's absolute
values.

:func:`zone_of_topology` turns an mpiuq :class:`~.base.Topology` (dragonfly, fat-tree,
crossbar) into a zone routed by its own minimal tables: injection links at the
injection bandwidth, the others at the link bandwidth, one hop latency per link.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import LINK_INJECTION, ZONE_KINDS, ZONE_TABLES
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.crossbar import build_crossbar
from mpiuq.simulator.topologies.zone_routes import ZoneRoutes, zone_routes

if TYPE_CHECKING:  # the routing loops (numba) load when a network is built, not a zone
    from mpiuq.simulator.topologies.routing import RoutingTables

F64 = npt.NDArray[np.float64]
B8 = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Zone:
    """Hosts, links and routes of a flow network.

    Attributes
    ----------
    name
        Kind of network (``"cluster"``, ``"fattree"``, ``"dragonfly"``, ``"torus"``, or
        the mpiuq topology's name).
    params
        What it was built from (shown by :meth:`describe`).
    n_nodes
        Number of hosts.
    link_bw
        ``float64 (n_links,)`` bandwidth of every link as a multiple of ``link_bw_GBps``
        (of ``injection_bw_GBps`` where ``link_injection``).
    link_injection
        ``bool (n_links,)`` links whose bandwidth follows ``injection_bw_GBps``.
    link_lat
        ``float64 (n_links,)`` latency of every link as a multiple of ``hop_latency_ns``.
    link_fatpipe
        ``bool (n_links,)`` links that bound each flow alone and are not shared.
    routes
        How routes are found (:class:`~.zone_routes.ZoneRoutes`).
    tables
        The topology's routing tables (``ZONE_TABLES`` routes); ``None`` otherwise.
    max_route
        Most links on one route.
    reference
        ``(link_bw_GBps, hop_latency_ns)`` giving the multipliers absolute values (a
        SimGrid platform), or ``None``.
    notes
        Arrangement and routing rules, shown by :meth:`describe`.
    """

    name: str
    params: dict[str, object]
    n_nodes: int
    link_bw: F64
    link_injection: B8
    link_lat: F64
    link_fatpipe: B8
    routes: ZoneRoutes
    tables: RoutingTables | None = None
    max_route: int = 2
    reference: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = self.link_bw.shape[0]
        for name in ("link_injection", "link_lat", "link_fatpipe"):
            if getattr(self, name).shape != (n,):
                raise SettingError(
                    f"zone {self.name}: {name} has shape {getattr(self, name).shape}: "
                    f"expected ({n},), one value per link"
                )
        if n and (not np.all(self.link_bw > 0) or not np.all(np.isfinite(self.link_bw))):
            raise SettingError(f"zone {self.name}: link bandwidths must be finite and > 0")
        if n and (not np.all(self.link_lat >= 0) or not np.all(np.isfinite(self.link_lat))):
            raise SettingError(f"zone {self.name}: link latencies must be finite and >= 0")

    @property
    def n_links(self) -> int:
        """Number of links."""
        return int(self.link_bw.shape[0])

    @property
    def kind(self) -> str:
        """Routing kind (one of :data:`~mpiuq.simulator.codes.ZONE_KINDS`)."""
        return ZONE_KINDS[self.routes.kind]

    def routing_tables(self) -> RoutingTables:
        """The tables the compiled routing reads: the topology's (``ZONE_TABLES``
        routes), else empty ones (loads the routing loops, numba)."""
        from mpiuq.simulator.topologies.routing import no_tables

        return self.tables if self.tables is not None else no_tables()

    def describe(self) -> str:
        """One paragraph: name, parameters, counts and rules."""
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        lines = [
            f"{self.name}({params}): {self.n_nodes} hosts, {self.n_links} links "
            f"({int(self.link_fatpipe.sum())} fat pipes), routes of at most {self.max_route} "
            f"links ({self.kind} routing)"
        ]
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


#: Most links of a minimal route, per mpiuq topology name (levels: fat-tree levels).
def _max_minimal_route(topology: Topology) -> int:
    if topology.name == "fattree":
        return 2 * int(topology.params["levels"])
    if topology.name == "dragonfly":
        return 5  # injection, local, global, local, ejection
    if topology.name == "crossbar":
        return 2
    return 2 * topology.n_switches + 2


def zone_of_topology(topology: Topology, hop_scale: float = 1.0) -> Zone:
    """The zone of an mpiuq topology: its links, minimal routing by its tables.

    Parameters
    ----------
    topology
        Dragonfly, fat-tree or crossbar.
    hop_scale
        Latency of every link in hop latencies (1; the no-topology flow network uses
        ``hops / 2`` on its crossbar so that a message pays ``hops`` hop latencies, as
        the analytic model).
    """
    n = topology.n_links
    return Zone(
        name=topology.name,
        params=dict(topology.params),
        n_nodes=topology.n_nodes,
        link_bw=np.ones(n),
        link_injection=np.asarray(topology.link_class == LINK_INJECTION),
        link_lat=np.full(n, float(hop_scale)),
        link_fatpipe=np.zeros(n, np.bool_),
        routes=zone_routes(ZONE_TABLES),
        tables=topology.routing_tables(),
        max_route=_max_minimal_route(topology),
        notes=topology.notes,
    )


def crossbar_zone(n_nodes: int, hops: int) -> Zone:
    """The flow network without topology: every node on one switch, ``hops`` hop
    latencies per message (injection and ejection links of ``hops / 2`` each)."""
    return zone_of_topology(build_crossbar(max(n_nodes, 1)), hop_scale=hops / 2.0)
