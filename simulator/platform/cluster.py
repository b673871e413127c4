"""A SimGrid ``<cluster>`` element as a flow-network zone (SimGrid 3.32's attribute rules).

Attributes read: ``id``, ``prefix``, ``suffix``, ``radical``, ``speed`` (the first power
state), ``core``, ``bw``, ``lat``, ``sharing_policy``, ``topology`` (``FLAT``, or one
that a topology registry entry models: ``FAT_TREE``, ``DRAGONFLY``, ``TORUS``) with
``topo_parameters``, ``bb_bw``, ``bb_lat``, ``bb_sharing_policy`` (flat clusters), ``router_id`` (ignored), ``loopback_bw`` and
``loopback_lat`` (accepted: ranks of one host exchange through memory here, see the
docs). ``limiter_link`` and any other attribute are refused with the element's line.
Bandwidths and latencies become multiples of the cluster's ``bw`` and ``lat`` (the
zone's reference values, so that parameter edits apply to every link).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.platform.errors import PlatformError
from mpiuq.simulator.platform.units import BANDWIDTH_UNITS, SPEED_UNITS, TIME_UNITS, parse_quantity
from mpiuq.simulator.platform.xml_tree import XmlElement
from mpiuq.simulator.topologies.cluster_zone import build_cluster_zone
from mpiuq.simulator.topologies.registry import TOPOLOGY_REGISTRY
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_options import ZoneOptions

REQUIRED = ("id", "prefix", "suffix", "radical", "speed", "bw", "lat")
OPTIONAL = (
    "core",
    "sharing_policy",
    "topology",
    "topo_parameters",
    "bb_bw",
    "bb_lat",
    "bb_sharing_policy",
    "router_id",
    "loopback_bw",
    "loopback_lat",
    "limiter_link",
)
SHARING = ("SPLITDUPLEX", "FULLDUPLEX", "SHARED", "FATPIPE")
#: Most hosts of one cluster.
MAX_HOSTS = 1 << 20
#: Latency unit of a cluster whose ``lat`` is 0 (its zone's latencies are then in ns).
ZERO_LAT_REFERENCE_NS = 1.0


@dataclass(frozen=True)
class Cluster:
    """A cluster read from a platform file: its zone, host names and host speed."""

    id: str
    zone: Zone
    hosts: tuple[str, ...]
    speed_flops: float


def _radicals(text: str) -> list[int]:
    """SimGrid's ``radical``: ``a-b`` ranges and single numbers, comma-separated."""
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if m is None:
            raise ValueError(f"radical part {part!r} is not N or N-M")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"radical range {part.strip()!r} is empty (end before start)")
        if len(out) + hi - lo + 1 > MAX_HOSTS:
            raise ValueError(f"radical {text!r} names more than {MAX_HOSTS} hosts")
        out.extend(range(lo, hi + 1))
    return out


def simgrid_topologies() -> tuple[str, ...]:
    """The ``topology`` values a cluster may take: ``FLAT`` (read here) and those of the
    topology registry's entries (:mod:`mpiuq.simulator.topologies.registry`)."""
    return ("FLAT", *(e.simgrid_topology for e in TOPOLOGY_REGISTRY if e.simgrid_topology))


def _topo_zone(
    topology: str, params: str, split: bool, lat: float, reference: tuple[float, float]
) -> Zone:
    """The zone of a hierarchical cluster from its ``topo_parameters`` (SimGrid's syntax),
    built by the registry entry that models ``topology``."""
    options = ZoneOptions(split_duplex=split, lat=lat, reference=reference)
    for entry in TOPOLOGY_REGISTRY:
        if entry.simgrid_topology == topology and entry.from_platform is not None:
            return entry.from_platform(params, options)
    raise ValueError(f"topology={topology!r} is unknown: expected one of {simgrid_topologies()}")


def read_cluster(element: XmlElement, file: str) -> Cluster:
    """The :class:`Cluster` of a ``<cluster>`` element.

    Raises
    ------
    PlatformError
        Naming the file, the element's line and the attribute at fault.
    """

    def fail(reason: str) -> PlatformError:
        return PlatformError(file, reason, line=element.line, element=element.label)

    attrs = element.attrs
    missing = [a for a in REQUIRED if a not in attrs]
    if missing:
        raise fail(f"attribute(s) {missing} missing: a cluster needs {list(REQUIRED)}")
    unknown = [a for a in attrs if a not in REQUIRED and a not in OPTIONAL]
    if unknown:
        raise fail(f"attribute(s) {unknown} unknown: expected {list(REQUIRED + OPTIONAL)}")
    if attrs.get("limiter_link", ""):
        raise fail("limiter_link is not replayed by mpiuq: remove it (limiter links unsupported)")
    for child in element.children:
        if child.tag != "prop":
            raise PlatformError(
                file,
                "unsupported inside <cluster>: only <prop> (host properties, ignored)",
                line=child.line,
                element=child.label,
            )
    topology = attrs.get("topology", "FLAT")
    policy = attrs.get("sharing_policy", "SPLITDUPLEX")
    bb_policy = attrs.get("bb_sharing_policy", "SHARED")
    for name, value, allowed in (
        ("topology", topology, simgrid_topologies()),
        ("sharing_policy", policy, SHARING),
        ("bb_sharing_policy", bb_policy, ("SHARED", "FATPIPE")),
    ):
        if value not in allowed:
            raise fail(f"{name}={value!r} is unknown: expected one of {list(allowed)}")
    policy = "SPLITDUPLEX" if policy == "FULLDUPLEX" else policy  # SimGrid's deprecated alias
    try:
        bw = parse_quantity(attrs["bw"], BANDWIDTH_UNITS, "Bps")
        lat = parse_quantity(attrs["lat"], TIME_UNITS, "s")
        speed = parse_quantity(attrs["speed"].split(",")[0], SPEED_UNITS, "f")
        bb_bw = (
            parse_quantity(attrs["bb_bw"], BANDWIDTH_UNITS, "Bps") if attrs.get("bb_bw") else None
        )
        bb_lat = parse_quantity(attrs.get("bb_lat") or "0s", TIME_UNITS, "s")
        radicals = _radicals(attrs["radical"])
        core = int(attrs.get("core", "1"))
    except ValueError as exc:
        raise fail(str(exc)) from None
    checks: tuple[tuple[str, float | None, bool], ...] = (
        ("bw", bw, bw > 0),
        ("lat", lat, lat >= 0),
        ("speed", speed, speed > 0),
        ("bb_bw", bb_bw, bb_bw is None or bb_bw > 0),
        ("bb_lat", bb_lat, bb_lat >= 0),
        ("core", core, core >= 1),
    )
    for label, amount, ok in checks:
        if not ok:
            raise fail(f"{label}={amount!r} is invalid: expected a positive value")
    lat_ref = lat if lat > 0 else ZERO_LAT_REFERENCE_NS * 1e-9
    reference = (bw / 1e9, lat_ref * 1e9)
    try:
        if topology == "FLAT":
            if bb_bw is None and bb_lat > 0:
                raise ValueError("bb_lat without bb_bw: a backbone needs a bandwidth")
            zone = build_cluster_zone(
                len(radicals),
                policy="SHARED" if policy == "FATPIPE" else policy,  # SimGrid 3.32 does so
                lat=lat / lat_ref,
                backbone_bw=None if bb_bw is None else bb_bw / bw,
                backbone_lat=bb_lat / lat_ref,
                backbone_policy=bb_policy,
                reference=reference,
            )
        else:  # SimGrid 3.32 makes SHARED links of every policy but SPLITDUPLEX here
            split = policy == "SPLITDUPLEX"
            params = attrs.get("topo_parameters", "")
            zone = _topo_zone(topology, params, split, lat / lat_ref, reference)
    except (ValueError, SettingError) as exc:
        raise fail(str(exc)) from None
    if zone.n_nodes != len(radicals):
        raise fail(
            f"radical names {len(radicals)} hosts but topology {topology} "
            f"({attrs.get('topo_parameters', '')}) has {zone.n_nodes}: SimGrid needs them equal"
        )
    hosts = tuple(f"{attrs['prefix']}{r}{attrs['suffix']}" for r in radicals)
    return Cluster(attrs["id"], zone, hosts, speed)
