"""Canonical dragonfly: all-to-all groups joined by global links (Kim et al., ISCA 2008).

Numbering: switch ``s = group * a + i`` (``i`` its index in the group), node
``s * p + c`` (``c`` its port on the switch). Links: injection ``0..n-1``, ejection
``n..2n-1``, then the directed local links ``2n + s * (a - 1) + (j if j < i else j - 1)``
from switch ``s = (G, i)`` to ``(G, j)``, then the directed global links.

Global arrangement ("absolute", consecutive): group ``G`` numbers its ``a * h`` global
ports ``q = i * h + k`` (switch ``i``, slot ``k``); port ``q`` belongs to round
``r = q // (g - 1)`` and points at the ``t = q % (g - 1)``-th other group
(``T = t`` if ``t < G`` else ``t + 1``). It is wired to port
``r * (g - 1) + (G if G < T else G - 1)`` of group ``T`` when that port exists (< a*h);
otherwise it stays unused. Every pair of groups therefore gets ``a*h // (g-1)`` or one
more parallel links, each switch at most one link to any group (needs ``h <= g - 1``),
and every link has its reverse. This is the arrangement of the reference study
(section 4.2: "up to eight intergroup connections per switch, with a maximum of one
link to each group per switch").

Minimal routing: local hop to a switch owning a global link to the destination group,
global hop, local hop to the destination switch (hops that are not needed are
skipped). If the current switch owns a link to the destination group it takes it;
otherwise, among the ``m`` parallel links of the group pair (hosts in increasing
switch index), it takes the first that lands on the destination switch, else host
number ``(i + j) % m`` for source index ``i`` and destination index ``j``, spreading
flows over the parallel links deterministically. Routes are then shortest paths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mpiuq.simulator.codes import VALIANT_NONE, VALIANT_OTHER_GROUP
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology, endpoint_links
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology

__all__ = ["DRAGONFLY", "build_dragonfly", "dragonfly_global_link_count"]

#: Reference-paper dragonfly (section 4.2): switches per group, nodes per switch, global links.
PAPER_SWITCHES, PAPER_NODES, PAPER_GLOBAL = 48, 4, 8


def _check(name: str, value: int, ok: bool, allowed: str) -> None:
    if not ok:
        raise SettingError(f"dragonfly {name}={value!r} is invalid: expected {allowed}")


def dragonfly_global_link_count(groups: int, switches: int, global_links: int) -> int:
    """Number of directed global links of the arrangement (see the module docstring).

    With ``P = a * h`` ports per group and ``g - 1`` other groups, each full round of
    ``g - 1`` ports links every pair once; the last partial round of ``R = P % (g - 1)``
    ports links the pairs ``(i, j)``, ``i < j``, with ``j <= R``.

    Returns
    -------
    int
        ``2 * (P // (g-1) * g * (g-1) / 2 + R * (R + 1) / 2)``, 0 for a single group.
    """
    if groups < 2:
        return 0
    ports = switches * global_links
    full, rest = divmod(ports, groups - 1)
    return 2 * (full * groups * (groups - 1) // 2 + rest * (rest + 1) // 2)


def _global_links(g: int, a: int, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source switch, destination switch and destination group of every global link."""
    if g < 2 or h == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    ports = a * h
    grp = np.arange(g)[:, None]
    q = np.arange(ports)[None, :]
    rnd, t = np.divmod(q, g - 1)
    target = np.where(t < grp, t, t + 1)
    partner = rnd * (g - 1) + np.where(grp < target, grp, grp - 1)
    valid = np.broadcast_to(partner < ports, (g, ports))
    src = np.broadcast_to(grp * a + q // h, (g, ports))[valid]
    dst = (target * a + partner // h)[valid]
    return src, dst, np.broadcast_to(target, (g, ports))[valid]


def build_dragonfly(groups: int, switches: int, nodes: int, global_links: int) -> Topology:
    """Dragonfly of ``groups`` all-to-all groups of ``switches`` switches.

    Parameters
    ----------
    groups : int
        Number of groups ``g`` (>= 1; at most ``switches * global_links + 1``).
    switches : int
        Switches per group ``a`` (>= 1), connected all-to-all by local links.
    nodes : int
        Nodes per switch ``p`` (>= 1, the concentration).
    global_links : int
        Global links per switch ``h`` (1..g-1 when ``g >= 2``; ignored when ``g = 1``).

    Returns
    -------
    Topology
        ``g*a*p`` nodes, ``g*a`` switches, ``g*a*(a-1)`` directed local links and
        :func:`dragonfly_global_link_count` directed global links.

    Raises
    ------
    SettingError
        Naming the parameter, its value and the allowed range.
    """
    g, a, p, h = groups, switches, nodes, global_links
    for name, value in (("groups", g), ("switches", a), ("nodes", p)):
        _check(name, value, value >= 1, "a whole number >= 1")
    _check("global", h, h >= 0, "a whole number >= 0")
    if g >= 2:
        _check(
            "global", h, 1 <= h <= g - 1, f"1..{g - 1} (at most one link per group pair and switch)"
        )
        _check("groups", g, g <= a * h + 1, f"<= switches*global+1 = {a * h + 1}")
    n_sw = g * a
    n = n_sw * p
    node_switch = np.repeat(np.arange(n_sw, dtype=np.int32), p)
    g_src, g_dst, g_grp = _global_links(g, a, h)
    n_local = n_sw * (a - 1)
    link_class, link_src, link_dst, inj, ej = endpoint_links(node_switch, n_local + g_src.size)
    # local links, source-major
    s = np.repeat(np.arange(n_sw), a - 1)
    slot = np.tile(np.arange(a - 1), n_sw)
    i = s % a
    j = np.where(slot < i, slot, slot + 1)
    base = 2 * n
    link_src[base : base + n_local] = s
    link_dst[base : base + n_local] = s - i + j
    gbase = base + n_local
    link_src[gbase:] = g_src
    link_dst[gbase:] = g_dst
    # global link of every (switch, destination group), -1 if none
    gl_to = np.full((n_sw, g), -1, dtype=np.int64)
    gl_to[g_src, g_grp] = gbase + np.arange(g_src.size)
    land = np.full((n_sw, g), -1, dtype=np.int64)
    land[g_src, g_grp] = g_dst
    next_link = _next_link(g, a, n, gl_to, land)
    notes = (
        "global links: absolute (consecutive) arrangement, rounds of g-1 ports, "
        f"{dragonfly_global_link_count(g, a, h)} directed global links",
        "minimal routing: local, global, local; parallel link landing on the target, else (i + j) mod m",
        "valiant: through a switch of a group other than the source and destination groups",
    )
    return Topology(
        name="dragonfly",
        params={"groups": g, "switches": a, "nodes": p, "global": h},
        n_nodes=n,
        n_switches=n_sw,
        link_class=link_class,
        link_src=link_src,
        link_dst=link_dst,
        node_switch=node_switch,
        inj_link=inj,
        ej_link=ej,
        next_link=next_link,
        switch_level=np.zeros(n_sw, dtype=np.int32),
        up_links=np.zeros((n_sw, 0), dtype=np.int32),
        valiant=(VALIANT_OTHER_GROUP, a, g) if g >= 3 else (VALIANT_NONE, 0, 0),
        notes=notes,
    )


def _next_link(g: int, a: int, n: int, gl_to: np.ndarray, land: np.ndarray) -> np.ndarray:
    """Minimal next-link table (see the module docstring for the tie-break)."""
    n_sw = g * a
    # hosts[G1, G2, r]: index in G1 of the r-th switch owning a link to G2; lands[...]:
    # index in G2 of the switch that link arrives at
    blocks = (gl_to >= 0).reshape(g, a, g)
    n_par = np.maximum(blocks.sum(axis=1), 1)
    hosts = np.transpose(np.argsort(~blocks, axis=1, kind="stable"), (0, 2, 1))
    grp_of_host = np.arange(g)[:, None, None] * a + hosts
    lands = land[grp_of_host, np.arange(g)[None, :, None]] % a
    valid = np.arange(a)[None, None, :] < n_par[:, :, None]
    dst = np.arange(n_sw)
    dst_grp, dst_idx = np.divmod(dst, a)
    table = np.empty((n_sw, n_sw), dtype=np.int32)
    base = 2 * n
    for grp in range(g):
        par = n_par[grp, dst_grp]
        exact = (lands[grp, dst_grp] == dst_idx[:, None]) & valid[grp, dst_grp]
        has_exact = exact.any(axis=1)
        exact_r = exact.argmax(axis=1)
        other = dst_grp != grp
        for i in range(a):
            x = grp * a + i
            first_local = base + x * (a - 1)  # local link ids of x, by destination index
            own = gl_to[x, dst_grp]
            pick = np.where(has_exact, exact_r, (i + dst_idx) % par)
            hop = np.where(other, hosts[grp, dst_grp, pick], dst_idx)
            row = np.where((own >= 0) & other, own, first_local + hop - (hop > i))
            row[x] = -1
            table[x] = row
    return table


def _build(params: Mapping[str, Any]) -> Topology:
    g = params["groups"]
    return build_dragonfly(
        groups=g,
        switches=params.get("switches", PAPER_SWITCHES),
        nodes=params.get("nodes", PAPER_NODES),
        global_links=params.get("global", min(PAPER_GLOBAL, max(g - 1, 0))),
    )


def _size_for(n_ranks: int, params: dict[str, Any]) -> dict[str, Any]:
    """The reference paper's groups of 48 switches with 4 nodes each and
    ``global = min(8, groups - 1)``, ``groups = ceil(n / 192)``; below two full groups
    (``n < 384``) a balanced small dragonfly of ``ceil(sqrt(n / 4))`` switches a group."""
    p = params.setdefault("nodes", PAPER_NODES)
    if n_ranks >= 2 * PAPER_SWITCHES * p:
        a = params.setdefault("switches", PAPER_SWITCHES)
    else:
        a = params.setdefault("switches", max(1, math.ceil(math.sqrt(n_ranks / p))))
    g = params.setdefault("groups", max(1, math.ceil(n_ranks / (a * p))))
    params.setdefault("global", min(PAPER_GLOBAL, g - 1))
    return params


def _node_count(params: Mapping[str, Any]) -> int:
    per_group = params.get("switches", PAPER_SWITCHES)
    return int(params["groups"] * per_group * (1 + params.get("nodes", PAPER_NODES)))


DRAGONFLY = register_topology(
    TopologyEntry(
        "dragonfly",
        "canonical dragonfly (reference paper, section 4.2): all-to-all groups of `switches` "
        "switches with `nodes` nodes each, `global` global links a switch (defaults 48, 4, "
        "min(8, groups - 1)); minimal or Valiant routing",
        "dragonfly:groups=86,switches=48,nodes=4,global=8",
        _build,
        options=("groups", "switches", "nodes", "global"),
        required=("groups",),
        size_for=_size_for,
        node_count=_node_count,
    )
)
