"""Topology specs: ``make_topology("dragonfly:groups=86,...")``, zones, sizing for a rank count.

A spec is ``name:key=value,...``; the names, their keys and how each is built are the
entries of the topology registry (:mod:`.registry`, one per builder module):

* mpiuq's topologies (:func:`make_topology`, :func:`topology_for_ranks`):
  ``dragonfly:groups=G,switches=A,nodes=P,global=H`` -- canonical dragonfly (reference
  paper, section 4.2: 48-switch all-to-all groups, 4 nodes per switch, up to 8 global
  links per switch; defaults ``switches=48, nodes=4, global=min(8, groups-1)``);
  ``fattree:k=K,levels=N`` -- k-ary n-tree with d-mod-k routing (default ``levels=3``);
  ``crossbar:nodes=N`` -- one switch;
* the flow model's SimGrid-shaped zones (:func:`make_zone`):
  ``cluster:hosts=N[,backbone=B][,backbone_lat=L][,shared=1]`` (``cluster`` alone: one
  host per rank), ``torus:dims=8x8x16[,shared=1]``,
  ``sgfattree:down=8x8x16,up=1x8x8[,parallel=1x1x1][,shared=1]``,
  ``sgdragonfly:groups=G,chassis=C,routers=R,nodes=N[,blue=1,black=1,green=1][,shared=1]``;
  ``shared=1`` makes one link of every cable, used both ways (SimGrid's ``SHARED``),
  otherwise an up and a down link (``SPLITDUPLEX``).

Examples
--------
>>> topo = make_topology("dragonfly:groups=3,switches=2,nodes=2,global=1")
>>> topo.n_nodes, topo.n_switches
(12, 6)
>>> [int(x) for x in topo.route(0, 11)]  # injection, local, global, local, ejection
[0, 24, 31, 28, 23]
>>> make_zone("torus:dims=4x4").n_nodes
16
>>> make_zone("cluster:hosts=8,backbone=2.5").link_bw[-1]
np.float64(2.5)
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.registry import TOPOLOGY_REGISTRY, TopologyEntry, topology_names
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.trace.limits import MAX_RANKS

__all__ = [
    "is_zone_spec",
    "make_topology",
    "make_zone",
    "parse_topology_spec",
    "parse_zone_spec",
    "place_on_zone",
    "topology_for_ranks",
    "valiant_intermediate",
]

#: Largest topology built, in endpoints plus switches: the trace limit on ranks
#: (``MAX_RANKS``) with room for the switches of any tree or dragonfly holding them.
MAX_TOPOLOGY_NODES = 4 * MAX_RANKS

T = TypeVar("T", Topology, Zone)


def _entry(name: str, zone: bool) -> TopologyEntry:
    what = "zone" if zone else "topology"
    if name not in topology_names(zone):
        raise SettingError(f"{what} {name!r} is unknown: expected one of {topology_names(zone)}")
    return TOPOLOGY_REGISTRY.get(name)


def split_spec(spec: str, zone: bool) -> tuple[TopologyEntry, dict[str, Any]]:
    """Split ``"name:key=value,..."`` into the registry entry of the name (a zone's if
    ``zone``, else one of mpiuq's topologies) and its parameters, each read by the
    entry's ``value``.

    Raises
    ------
    SettingError
        Unknown name, malformed item, unknown, repeated or missing key, or bad value.
    """
    name, _, rest = spec.strip().partition(":")
    entry = _entry(name.strip().lower(), zone)
    name = entry.name
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq:
            raise SettingError(f"{name} parameter {item!r} is malformed: expected key=value")
        if key not in entry.options:
            raise SettingError(
                f"{name} parameter {key!r} is unknown: expected one of {entry.options}"
            )
        if key in params:
            raise SettingError(f"{name} parameter {key!r} is given twice")
        params[key] = entry.value(name, key, value)
    missing = [k for k in entry.required if k not in params]
    if missing:
        hint = "" if zone else f": e.g. {entry.example}"
        raise SettingError(f"{name} needs parameter(s) {missing}{hint}")
    return entry, params


def parse_topology_spec(spec: str) -> tuple[str, dict[str, int]]:
    """Split ``"name:key=value,..."`` into the name and integer parameters.

    Raises
    ------
    SettingError
        Unknown topology, malformed item, unknown, repeated or missing key, or a
        value that is not a whole number; the message names key, value and what is allowed.
    """
    entry, params = split_spec(spec, zone=False)
    return entry.name, params


def _built(entry: TopologyEntry, built: object, kind: type[T]) -> T:
    """``built``, checked to be what an entry of its kind must build."""
    if not isinstance(built, kind):
        raise SettingError(
            f"topology {entry.name!r} built a {type(built).__name__}: expected a {kind.__name__} "
            f"(zone={entry.zone} in its registry entry)"
        )
    return built


def _build(entry: TopologyEntry, params: dict[str, Any]) -> Topology:
    spec = ",".join(f"{key}={value}" for key, value in params.items())
    if entry.node_count is not None and (
        any(value > MAX_TOPOLOGY_NODES for value in params.values())
        or entry.node_count(params) > MAX_TOPOLOGY_NODES
    ):
        raise SettingError(
            f"topology {entry.name}:{spec} is too large: it would hold more than "
            f"{MAX_TOPOLOGY_NODES:,} endpoints and switches (at most {MAX_RANKS:,} ranks are "
            f"replayed); choose smaller parameters, e.g. {entry.example}"
        )
    return _built(entry, entry.build(params), Topology)


def make_topology(spec: str) -> Topology:
    """Build a topology from a spec string.

    Parameters
    ----------
    spec : str
        ``"dragonfly:groups=86,switches=48,nodes=4,global=8"``, ``"fattree:k=4,levels=3"``
        or ``"crossbar:nodes=64"`` (see the module docstring for defaults).

    Returns
    -------
    Topology

    Raises
    ------
    SettingError
        For an unknown topology or key, or a value outside its allowed range.
    """
    entry, params = split_spec(spec, zone=False)
    return _build(entry, params)


def topology_for_ranks(name: str, n_ranks: int, **overrides: int) -> Topology:
    """Smallest sensible instance of topology ``name`` with at least ``n_ranks`` nodes
    (the entry's ``size_for``):

    * dragonfly: the reference paper's groups of 48 switches with 4 nodes each and
      ``global = min(8, groups - 1)``, ``groups = ceil(n / 192)``; below two full
      groups (``n < 384``) a balanced small dragonfly with
      ``switches = ceil(sqrt(n / 4))`` switches per group instead.
    * fattree: ``levels = 3`` (2 when ``n <= 16``), ``k = max(2, ceil(n ** (1/levels)))``.
    * crossbar: ``nodes = n``.

    ``overrides`` replace any parameter (e.g. ``switches=16``); the number of groups
    (dragonfly) or the arity (fat-tree) is then recomputed for ``n_ranks`` unless given.

    Raises
    ------
    SettingError
        Unknown name, ``n_ranks < 1``, or overrides that cannot hold ``n_ranks`` nodes.
    """
    entry = _entry(name, zone=False)
    if n_ranks < 1:
        raise SettingError(f"n_ranks={n_ranks} is invalid: expected >= 1")
    for key in overrides:
        if key not in entry.options:
            raise SettingError(
                f"{name} parameter {key!r} is unknown: expected one of {entry.options}"
            )
    if entry.size_for is None:
        raise SettingError(f"{name} is not sized for a rank count: expected e.g. {entry.example}")
    params = entry.size_for(n_ranks, dict(overrides))
    topo = _build(entry, params)
    if topo.n_nodes < n_ranks:
        raise SettingError(
            f"{name} with {params} has {topo.n_nodes} nodes: expected >= n_ranks={n_ranks}"
        )
    return topo


def is_zone_spec(spec: str) -> bool:
    """Whether ``spec`` names a SimGrid-shaped zone (an entry with ``zone=True``)."""
    return spec.strip().partition(":")[0].strip().lower() in topology_names(zone=True)


def parse_zone_spec(spec: str) -> tuple[str, dict[str, object]]:
    """Split ``"name:key=value,..."`` of a zone spec into its name and parameters.

    Raises
    ------
    SettingError
        Naming the unknown zone, malformed item, unknown, repeated or missing key, or bad value.
    """
    entry, params = split_spec(spec, zone=True)
    return entry.name, params


def make_zone(spec: str, n_ranks: int | None = None) -> Zone:
    """The zone of a spec (see the module docstring), sized for ``n_ranks`` where its
    entry allows (a ``cluster`` without ``hosts`` has ``n_ranks`` hosts).

    Raises
    ------
    SettingError
        For a bad spec or zone shape.
    """
    entry, params = split_spec(spec, zone=True)
    if n_ranks is not None and entry.size_for is not None:
        params = entry.size_for(n_ranks, params)
    return _built(entry, entry.build(params), Zone)


def place_on_zone(n_ranks: int, zone: Zone, placement: str, seed: int = 0) -> np.ndarray:
    """Host of every rank on a zone: ``linear`` (rank r on host r) or ``random``.

    Raises
    ------
    SettingError
        If the ranks do not fit, or for another placement.
    """
    if not 1 <= n_ranks <= zone.n_nodes:
        raise SettingError(
            f"n_ranks={n_ranks} does not fit the {zone.name} of {zone.n_nodes} hosts: "
            f"expected 1..{zone.n_nodes}"
        )
    if placement == "linear":
        return np.arange(n_ranks, dtype=np.int64)
    if placement == "random":
        return np.random.default_rng(seed).permutation(zone.n_nodes)[:n_ranks].astype(np.int64)
    raise SettingError(
        f"placement={placement!r} does not apply to the {zone.name} zone: expected linear or random"
    )


def valiant_intermediate(
    topology: Topology, src_node: int, dst_node: int, request: int, seed: int = 0
) -> int:
    """The engine's Valiant intermediate switch of a message (:meth:`Topology.valiant_intermediate`).

    dragonfly: a switch of a group other than the source and destination groups;
    fattree: a top-level switch; chosen by a hash of the program request id
    ``request`` and the route ``seed``. -1 when both nodes hang off one switch.

    Raises
    ------
    SettingError
        If the topology offers no intermediate (crossbar, dragonfly with < 3 groups).
    """
    return topology.valiant_intermediate(src_node, dst_node, request, seed)
