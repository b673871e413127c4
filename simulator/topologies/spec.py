"""Topology specs: ``make_topology("dragonfly:groups=86,...")`` and sizing for a rank count.

Three topologies, each a small builder module of this package:

* ``dragonfly:groups=G,switches=A,nodes=P,global=H`` -- canonical dragonfly (reference
  paper, section 4.2: 48-switch all-to-all groups, 4 nodes per switch, up to 8 global
  links per switch). Defaults ``switches=48, nodes=4, global=min(8, groups-1)``.
* ``fattree:k=K,levels=N`` -- k-ary n-tree with d-mod-k routing (default ``levels=3``).
* ``crossbar:nodes=N`` -- one switch.

Examples
--------
>>> topo = make_topology("dragonfly:groups=3,switches=2,nodes=2,global=1")
>>> topo.n_nodes, topo.n_switches
(12, 6)
>>> [int(x) for x in topo.route(0, 11)]  # injection, local, global, local, ejection
[0, 24, 31, 28, 23]
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.crossbar import build_crossbar
from mpiuq.simulator.topologies.dragonfly import build_dragonfly
from mpiuq.simulator.topologies.fattree import build_fattree
from mpiuq.simulator.trace.limits import MAX_RANKS

__all__ = [
    "TOPOLOGIES",
    "make_topology",
    "parse_topology_spec",
    "topology_for_ranks",
    "valiant_intermediate",
]

#: name -> (required keys, allowed keys)
TOPOLOGIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dragonfly": (("groups",), ("groups", "switches", "nodes", "global")),
    "fattree": (("k",), ("k", "levels")),
    "crossbar": (("nodes",), ("nodes",)),
}

#: Reference-paper dragonfly (section 4.2): switches per group, nodes per switch, global links.
PAPER_SWITCHES, PAPER_NODES, PAPER_GLOBAL = 48, 4, 8


def split_spec(
    spec: str,
    known: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
    what: str,
    value_of: Callable[[str, str, str], object],
) -> tuple[str, dict[str, object]]:
    """Split ``"name:key=value,..."`` into the name (one of ``known``: name -> (required
    keys, allowed keys)) and its parameters, each converted by ``value_of(name, key,
    text)`` (which raises :class:`SettingError` for a bad value).

    Raises
    ------
    SettingError
        Unknown name (called a ``what``), malformed item, unknown, repeated or missing key.
    """
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in known:
        raise SettingError(f"{what} {name!r} is unknown: expected one of {tuple(known)}")
    required, allowed = known[name]
    params: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq:
            raise SettingError(f"{name} parameter {item!r} is malformed: expected key=value")
        if key not in allowed:
            raise SettingError(f"{name} parameter {key!r} is unknown: expected one of {allowed}")
        if key in params:
            raise SettingError(f"{name} parameter {key!r} is given twice")
        params[key] = value_of(name, key, value)
    missing = [k for k in required if k not in params]
    if missing:
        hint = f": e.g. {_example(name)}" if known is TOPOLOGIES else ""
        raise SettingError(f"{name} needs parameter(s) {missing}{hint}")
    return name, params


def _whole_number(name: str, key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise SettingError(
            f"{name} parameter {key}={text!r} is invalid: expected a whole number"
        ) from None


def parse_topology_spec(spec: str) -> tuple[str, dict[str, int]]:
    """Split ``"name:key=value,..."`` into the name and integer parameters.

    Raises
    ------
    SettingError
        Unknown topology, malformed item, unknown, repeated or missing key, or a
        value that is not a whole number; the message names key, value and what is allowed.
    """
    name, params = split_spec(spec, TOPOLOGIES, "topology", _whole_number)
    return name, {k: int(v) for k, v in params.items()}  # type: ignore[call-overload]


def _example(name: str) -> str:
    return {
        "dragonfly": "dragonfly:groups=86,switches=48,nodes=4,global=8",
        "fattree": "fattree:k=4,levels=3",
        "crossbar": "crossbar:nodes=64",
    }[name]


#: Largest topology built, in endpoints plus switches: the trace limit on ranks
#: (``MAX_RANKS``) with room for the switches of any tree or dragonfly holding them.
MAX_TOPOLOGY_NODES = 4 * MAX_RANKS


def _node_count(name: str, params: dict[str, int]) -> int:
    """Endpoints plus switches that ``_build`` would allocate (Python ints: no overflow)."""
    if name == "dragonfly":
        per_group = params.get("switches", PAPER_SWITCHES)
        return params["groups"] * per_group * (1 + params.get("nodes", PAPER_NODES))
    if name == "fattree":
        k, levels = params["k"], params.get("levels", 3)
        if k < 2 or levels < 1:
            return 0  # the builder names the bad value
        return k**levels + levels * k ** (levels - 1)
    return params["nodes"]


def _build(name: str, params: dict[str, int]) -> Topology:
    spec = ",".join(f"{key}={value}" for key, value in params.items())
    if any(value > MAX_TOPOLOGY_NODES for value in params.values()) or (
        _node_count(name, params) > MAX_TOPOLOGY_NODES
    ):
        raise SettingError(
            f"topology {name}:{spec} is too large: it would hold more than "
            f"{MAX_TOPOLOGY_NODES:,} endpoints and switches (at most {MAX_RANKS:,} ranks are "
            f"replayed); choose smaller parameters, e.g. {_example(name)}"
        )
    if name == "dragonfly":
        g = params["groups"]
        return build_dragonfly(
            groups=g,
            switches=params.get("switches", PAPER_SWITCHES),
            nodes=params.get("nodes", PAPER_NODES),
            global_links=params.get("global", min(PAPER_GLOBAL, max(g - 1, 0))),
        )
    if name == "fattree":
        return build_fattree(k=params["k"], levels=params.get("levels", 3))
    return build_crossbar(nodes=params["nodes"])


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
    name, params = parse_topology_spec(spec)
    return _build(name, params)


def topology_for_ranks(name: str, n_ranks: int, **overrides: int) -> Topology:
    """Smallest sensible instance of topology ``name`` with at least ``n_ranks`` nodes.

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
    if name not in TOPOLOGIES:
        raise SettingError(f"topology {name!r} is unknown: expected one of {tuple(TOPOLOGIES)}")
    if n_ranks < 1:
        raise SettingError(f"n_ranks={n_ranks} is invalid: expected >= 1")
    allowed = TOPOLOGIES[name][1]
    for key in overrides:
        if key not in allowed:
            raise SettingError(f"{name} parameter {key!r} is unknown: expected one of {allowed}")
    params = dict(overrides)
    if name == "dragonfly":
        p = params.setdefault("nodes", PAPER_NODES)
        if n_ranks >= 2 * PAPER_SWITCHES * p:
            a = params.setdefault("switches", PAPER_SWITCHES)
        else:
            a = params.setdefault("switches", max(1, math.ceil(math.sqrt(n_ranks / p))))
        g = params.setdefault("groups", max(1, math.ceil(n_ranks / (a * p))))
        params.setdefault("global", min(PAPER_GLOBAL, g - 1))
    elif name == "fattree":
        levels = params.setdefault("levels", 2 if n_ranks <= 16 else 3)
        k = max(2, math.ceil(n_ranks ** (1.0 / levels) - 1e-9))
        while k**levels < n_ranks:  # guard against rounding of the root
            k += 1
        params.setdefault("k", k)
    else:
        params.setdefault("nodes", n_ranks)
    topo = _build(name, params)
    if topo.n_nodes < n_ranks:
        raise SettingError(
            f"{name} with {params} has {topo.n_nodes} nodes: expected >= n_ranks={n_ranks}"
        )
    return topo


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
