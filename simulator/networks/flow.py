"""The flow network: transfers share link bandwidth by max-min fairness (CM02, LV08, SMPI).

Every transfer is a flow on the links of its route (a :class:`~mpiuq.simulator.topologies.zone.Zone`:
an mpiuq topology, a SimGrid cluster, or one switch without topology). A flow first
pays its route's latency (the sum of its links' latencies), taking no bandwidth; then it
shares: the rates of all sharing flows are the weighted max-min fair allocation of the
links' capacities (Casanova and Marchal's CM02 model, as SimGrid's ``lmm`` solves it),
recomputed when a flow starts sharing or ends -- incrementally, over the flows that share
links, directly or through others, with the flow that changed (:mod:`.flow_share`).
Each flow's rate is bounded by the smallest bandwidth of its route.

:class:`FlowSharing` holds the knobs of SimGrid's models: with ``latency_penalty`` a
flow's *sharing penalty* is its route latency (CM02's RTT-unfairness: larger penalty,
smaller share) plus ``weight_s`` bytes divided by each link's bandwidth (LV08); a TCP
window ``tcp_gamma`` bounds a flow's rate by ``tcp_gamma / (2 latency)``; a flow also
loads its reverse route with weight ``crosstraffic`` (acknowledgements); size-dependent
factors multiply latency and rate (LV08's constants, SMPI's piecewise tables); every
transfer carries ``envelope`` bytes more. The defaults are textbook max-min fairness
(equal penalties, no window, no cross-traffic, no factors). :meth:`FlowSharing.cm02`,
:meth:`FlowSharing.lv08` and :meth:`FlowSharing.smpi` give SimGrid 3.32's models of
those names (``smpirun`` uses ``network/model:SMPI``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import ROUTE_MINIMAL
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.registry import NetworkModelEntry, model_code, register_network
from mpiuq.simulator.networks.state import FlowTables, NetworkArrays
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.zone import Zone, crossbar_zone, zone_of_topology
from mpiuq.simulator.topologies.zone_routes import EMPTY_ZONE_ROUTES

#: SimGrid 3.32's default ``smpi/bw-factor`` and ``smpi/lat-factor`` (``sg_config.cpp``):
#: ``(size threshold in bytes, factor for larger sizes)``.
SMPI_BW_FACTORS: tuple[tuple[int, float], ...] = (
    (0, 0.812084), (257, 0.338112), (732, 0.341987), (1426, 0.608902), (3484, 0.77493),
    (5776, 1.08739), (9376, 0.58729), (15424, 0.697866), (65472, 0.940694),
)  # fmt: skip
SMPI_LAT_FACTORS: tuple[tuple[int, float], ...] = (
    (0, 2.01467), (257, 1.95341), (732, 1.9503), (1426, 1.61075), (3484, 1.88101),
    (5776, 2.18796), (9376, 2.59299), (15424, 3.48845), (65472, 11.6436),
)  # fmt: skip
#: SimGrid's ``network/weight-S`` of the SMPI model and of LV08, bytes.
SMPI_WEIGHT_S = 8775.0
LV08_WEIGHT_S = 20537.0
#: SimGrid's ``network/TCP-gamma`` default, bytes.
TCP_GAMMA_BYTES = 4194304.0
#: Weight of a flow on its reverse route with SimGrid's ``network/crosstraffic:yes``.
CROSSTRAFFIC = 0.05
#: Bytes SMPI adds to every message (its MPI envelope: tag, source, communicator).
SMPI_ENVELOPE_BYTES = 16


def _check_factors(name: str, table: tuple[tuple[int, float], ...]) -> None:
    last = None
    for item in table:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise SettingError(f"{name} entry {item!r}: expected (size threshold, factor)")
        size, factor = item
        if (
            isinstance(size, bool)
            or not isinstance(size, int)
            or (last is not None and size <= last)
        ):
            raise SettingError(f"{name} thresholds must be whole numbers, strictly increasing")
        if not (isinstance(factor, int | float) and math.isfinite(factor) and factor > 0):
            raise SettingError(f"{name} factor {factor!r} is invalid: expected finite > 0")
        last = size


@dataclass(frozen=True, slots=True)
class FlowSharing:
    """How flows share links (see the module docstring); the defaults are plain CM02.

    Parameters
    ----------
    latency_penalty
        A flow's sharing penalty is its route latency (plus the ``weight_s`` terms), as
        in SimGrid; else every flow has penalty 1 (equal shares).
    weight_s_bytes
        Sharing-penalty bytes per link (SimGrid ``network/weight-S``), >= 0.
    tcp_gamma_bytes
        TCP window bounding a flow's rate by ``gamma / (2 latency)``; 0: no bound.
    crosstraffic
        Weight of a flow on its reverse route, in [0, 1).
    envelope_bytes
        Bytes added to every transfer (>= 0).
    lat_factors, bw_factors
        ``(threshold, factor)`` pairs, thresholds strictly increasing: a transfer of
        ``s`` bytes gets the factor of the last threshold below ``s`` (1 below the
        first), SMPI's rule; ``((-1, f),)`` is a constant ``f``.
    control_free
        Protocol control messages take no network time (SimGrid simulates payloads only).
    """

    latency_penalty: bool = False
    weight_s_bytes: float = 0.0
    tcp_gamma_bytes: float = 0.0
    crosstraffic: float = 0.0
    envelope_bytes: int = 0
    lat_factors: tuple[tuple[int, float], ...] = ()
    bw_factors: tuple[tuple[int, float], ...] = ()
    control_free: bool = False

    def __post_init__(self) -> None:
        for name in ("weight_s_bytes", "tcp_gamma_bytes"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise SettingError(f"{name}={v!r} is invalid: expected a finite number >= 0")
        if not (isinstance(self.crosstraffic, int | float) and 0 <= self.crosstraffic < 1):
            raise SettingError(
                f"crosstraffic={self.crosstraffic!r} is invalid: expected 0 <= x < 1"
            )
        e = self.envelope_bytes
        if isinstance(e, bool) or not isinstance(e, int) or e < 0:
            raise SettingError(f"envelope_bytes={e!r} is invalid: expected a whole number >= 0")
        _check_factors("lat_factors", self.lat_factors)
        _check_factors("bw_factors", self.bw_factors)

    @classmethod
    def smpi(cls) -> FlowSharing:
        """SimGrid 3.32's SMPI network model (``smpirun``'s ``network/model:SMPI``):
        SMPI's factor tables, weight-S 8775 B, TCP window 4 MiB, cross-traffic 0.05,
        16-byte envelope, no control messages."""
        return cls(
            latency_penalty=True,
            weight_s_bytes=SMPI_WEIGHT_S,
            tcp_gamma_bytes=TCP_GAMMA_BYTES,
            crosstraffic=CROSSTRAFFIC,
            envelope_bytes=SMPI_ENVELOPE_BYTES,
            lat_factors=SMPI_LAT_FACTORS,
            bw_factors=SMPI_BW_FACTORS,
            control_free=True,
        )

    @classmethod
    def cm02(cls) -> FlowSharing:
        """SimGrid's CM02 model: latency penalties, TCP window 4 MiB, cross-traffic 0.05."""
        return cls(latency_penalty=True, tcp_gamma_bytes=TCP_GAMMA_BYTES, crosstraffic=CROSSTRAFFIC)

    @classmethod
    def lv08(cls) -> FlowSharing:
        """SimGrid's LV08 model (its default outside SMPI): latency x 13.01, bandwidth x
        0.97, weight-S 20537 B, TCP window 4 MiB, cross-traffic 0.05."""
        return cls(
            latency_penalty=True,
            weight_s_bytes=LV08_WEIGHT_S,
            tcp_gamma_bytes=TCP_GAMMA_BYTES,
            crosstraffic=CROSSTRAFFIC,
            lat_factors=((-1, 13.01),),
            bw_factors=((-1, 0.97),),
        )


@dataclass(frozen=True, slots=True)
class FlowNetwork:
    """Max-min fair sharing of link bandwidth by concurrent flows.

    Parameters
    ----------
    zone
        Hosts, links and routes; ``None``: every node on one switch, ``hops`` hop
        latencies per transfer (the analytic model's network, shared).
    hops
        Hop latencies per transfer without zone (>= 1).
    sharing
        Sharing rules (:class:`FlowSharing`; plain CM02 by default).
    zero_overhead
        Endpoints without MPI-stack costs (SimGrid's SMPI charges none by default).
    """

    zone: Zone | None = field(default=None, compare=False)
    hops: int = 2
    sharing: FlowSharing = field(default_factory=FlowSharing)
    zero_overhead: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.hops, bool) or not isinstance(self.hops, int) or self.hops < 1:
            raise SettingError(f"hops={self.hops!r} is invalid: expected a whole number >= 1")

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "flow"

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return model_code("flow")


def _factor_arrays(
    table: tuple[tuple[int, float], ...],
) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([float(s) for s, _ in table], np.float64),
        np.array([float(f) for _, f in table], np.float64),
    )


def flow_tables(zone: Zone, sharing: FlowSharing) -> FlowTables:
    """The kernel's :class:`FlowTables` of ``zone`` under ``sharing``.

    The latency and bandwidth tables are merged onto one list of thresholds (each
    factor keeps its value between its own thresholds).
    """
    sizes = sorted({s for s, _ in sharing.lat_factors} | {s for s, _ in sharing.bw_factors})

    def at(table: tuple[tuple[int, float], ...]) -> np.ndarray:
        out = []
        for s in sizes:  # the factor of sizes just above threshold s
            f = 1.0
            for t, v in table:
                if t <= s:
                    f = v
            out.append(f)
        return np.array(out, np.float64)

    return FlowTables(
        zone.routes,
        np.ascontiguousarray(zone.link_bw, np.float64),
        np.ascontiguousarray(zone.link_injection, np.bool_),
        np.ascontiguousarray(zone.link_lat, np.float64),
        np.ascontiguousarray(zone.link_fatpipe, np.bool_),
        int(zone.max_route),
        np.array(sizes, np.float64),
        at(sharing.lat_factors),
        at(sharing.bw_factors),
        bool(sharing.latency_penalty),
        float(sharing.weight_s_bytes),
        float(sharing.tcp_gamma_bytes),
        float(sharing.crosstraffic),
        float(sharing.envelope_bytes),
    )


def _empty_flow_tables() -> FlowTables:
    f = np.zeros(0, np.float64)
    b = np.zeros(0, np.bool_)
    return FlowTables(EMPTY_ZONE_ROUTES, f, b, f, b, 0, f, f, f, False, 0.0, 0.0, 0.0, 0.0)


_NO_FLOW_TABLES = _empty_flow_tables()


def no_flow_tables() -> FlowTables:
    """Flow tables of the other network models (one shared instance, all empty)."""
    return _NO_FLOW_TABLES


def build_flow(
    hops: int, topology: Topology | Zone | None, options: Mapping[str, Any]
) -> FlowNetwork:
    """The flow model on a zone (a SimGrid platform's cluster), an mpiuq topology (made a
    zone) or one switch, with ``sharing`` and ``zero_overhead``."""
    zone = zone_of_topology(topology) if isinstance(topology, Topology) else topology
    return FlowNetwork(zone=zone, hops=hops, **options)


def flow_arrays(network: FlowNetwork, nodes: npt.NDArray[np.int64], n_nodes: int) -> NetworkArrays:
    """The kernel's bundle of a flow network (its zone, or one switch for the nodes).

    Raises
    ------
    SettingError
        If ``nodes`` names a host the zone lacks.
    """
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


ENTRY = register_network(
    NetworkModelEntry(
        "flow",
        "flows sharing link bandwidth by max-min fairness (CM02, LV08 and SMPI rules) on a "
        "topology, a SimGrid platform's cluster, or one switch",
        FlowNetwork,
        build_flow,
        options=("sharing", "zero_overhead"),
        on_platform=True,
        cost_rank=1,
        kernel_events=True,
        arrays=flow_arrays,
    )
)
