"""A SimGrid ``<cluster>`` element as a flow-network zone (SimGrid 3.32's attribute rules).

Attributes read: ``id``, ``prefix``, ``suffix``, ``radical``, ``speed`` (the first power
state), ``core``, ``bw``, ``lat``, ``sharing_policy``, ``topology`` (``FLAT``,
``FAT_TREE``, ``DRAGONFLY``, ``TORUS``) with ``topo_parameters``, ``bb_bw``, ``bb_lat``,
``bb_sharing_policy`` (flat clusters), ``router_id`` (ignored), ``loopback_bw`` and
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
from mpiuq.simulator.topologies.dragonfly_zone import build_dragonfly_zone
from mpiuq.simulator.topologies.fattree_zone import build_fattree_zone
from mpiuq.simulator.topologies.torus_zone import build_torus_zone
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
TOPOLOGIES = ("FLAT", "FAT_TREE", "DRAGONFLY", "TORUS")
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


def _ints(text: str, sep: str, what: str) -> tuple[int, ...]:
    items = [s.strip() for s in text.split(sep)]
    if not all(re.fullmatch(r"\d+", s) for s in items):
        raise ValueError(f"{what} {text!r}: expected whole numbers separated by {sep!r}")
    return tuple(int(s) for s in items)


def _topo_zone(
    topology: str, params: str, split: bool, lat: float, reference: tuple[float, float]
) -> Zone:
    """The zone of a hierarchical cluster from its ``topo_parameters`` (SimGrid's syntax)."""
    options = ZoneOptions(split_duplex=split, lat=lat, reference=reference)
    if topology == "FAT_TREE":
        parts = params.split(";")
        if len(parts) != 4:
            raise ValueError(
                f"topo_parameters {params!r}: a fat-tree is 'levels;down,...;up,...;parallel,...'"
            )
        (levels,) = _ints(parts[0], ",", "fat-tree levels")
        vectors = [_ints(p, ",", "fat-tree vector") for p in parts[1:]]
        if any(len(v) != levels for v in vectors):
            raise ValueError(
                f"topo_parameters {params!r}: {levels} level(s) need three vectors of {levels}"
            )
        down, up, parallel = vectors
        return build_fattree_zone(down, up, parallel, options)
    if topology == "DRAGONFLY":
        parts = params.split(";")
        if len(parts) != 4:
            raise ValueError(
                f"topo_parameters {params!r}: a dragonfly is "
                "'groups,blue;chassis,black;routers,green;nodes'"
            )
        pairs = [_ints(p, ",", "dragonfly pair") for p in parts[:3]]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(f"topo_parameters {params!r}: the first three parts are pairs N,M")
        (nodes,) = _ints(parts[3], ",", "dragonfly nodes")
        (g, blue), (c, black), (r, green) = pairs
        return build_dragonfly_zone(g, blue, c, black, r, green, nodes, options)
    dims = _ints(params, ",", "torus dimensions")
    return build_torus_zone(dims, options)


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
        ("topology", topology, TOPOLOGIES),
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
