"""Routing on a topology, compiled once for the engine and for :meth:`Topology.route`.

The packet network of the engine and the Python-facing :meth:`Topology.route` call the
same compiled functions, so the reference *is* the engine's routing:

* **minimal** -- the table ``next_link[a, b]`` (link taken at switch ``a`` towards
  switch ``b``); on the leg towards the destination node's own switch, a fat-tree's
  up-ports follow d-mod-k (``up_links[a, (d // k**level(a)) % k]`` for node ``d``),
  see :mod:`mpiuq.simulator.topologies.base`;
* **Valiant** -- minimal to an intermediate switch, then minimal to the destination.
  The intermediate is a deterministic hash of the program request id of the message
  and the route seed (every packet and every stage of one message take the same
  one), drawn uniformly from a group other than the source and destination groups
  (dragonfly, :data:`~mpiuq.simulator.codes.VALIANT_OTHER_GROUP`) or from the
  top-level switches (fat-tree, :data:`~mpiuq.simulator.codes.VALIANT_TOP_LEVEL`).
  Traffic between nodes of one switch takes no detour.

A route is written into a caller's buffer as link ids: the source node's injection
link, the network links, the destination node's ejection link.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import ROUTE_VALIANT, VALIANT_OTHER_GROUP, VALIANT_TOP_LEVEL
from mpiuq.simulator.runtime.jit import njit

I32 = npt.NDArray[np.int32]


class RoutingTables(NamedTuple):
    """What the compiled routing reads of a topology (the arrays of :class:`Topology`).

    ``valiant_a`` and ``valiant_b`` parametrise ``valiant_rule``: switches per group
    and number of groups (other-group rule), or the first top-level switch and the
    number of top-level switches (top-level rule). All arrays are empty, and
    ``up_radix`` 0, for networks without a topology.
    """

    link_class: npt.NDArray[np.int8]
    link_dst: I32
    node_switch: I32
    inj_link: I32
    ej_link: I32
    next_link: I32
    switch_level: I32
    up_links: I32
    up_radix: int
    valiant_rule: int
    valiant_a: int
    valiant_b: int


def _empty_tables() -> RoutingTables:
    e = np.zeros(0, np.int32)
    e2 = np.zeros((0, 0), np.int32)
    return RoutingTables(np.zeros(0, np.int8), e, e, e, e, e2, e, e2, 0, 0, 0, 0)


_NO_TABLES = _empty_tables()


def no_tables() -> RoutingTables:
    """Tables of a network without topology (same types as a topology's, all empty;
    one shared instance: empty arrays cannot be written)."""
    return _NO_TABLES


@njit(inline="always", error_model="numpy")
def next_hop(tables, cur, goal, dst_node, to_dst):  # type: ignore[no-untyped-def]
    """Link taken at switch ``cur`` towards switch ``goal``.

    ``to_dst``: ``goal`` is the switch of node ``dst_node`` (the d-mod-k up-port rule
    applies; on a leg towards a Valiant intermediate it must not).
    """
    lk = tables.next_link[cur, goal]
    if (
        tables.up_radix > 0
        and to_dst
        and tables.switch_level[tables.link_dst[lk]] > tables.switch_level[cur]
    ):
        radix = tables.up_radix
        lk = tables.up_links[cur, (dst_node // radix ** tables.switch_level[cur]) % radix]
    return lk


@njit(error_model="numpy")
def switch_hops(a_switch, b_switch, next_link, link_dst):  # type: ignore[no-untyped-def]
    """Switch-to-switch links on the minimal route between two switches."""
    n = 0
    cur = a_switch
    while cur != b_switch:
        cur = link_dst[next_link[cur, b_switch]]
        n += 1
    return n


@njit(inline="always", error_model="numpy")
def _mix64(x):  # type: ignore[no-untyped-def]
    """splitmix64 finaliser of an unsigned 64-bit integer."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(inline="always", error_model="numpy")
def valiant_switch(tables, src_switch, dst_switch, request, seed):  # type: ignore[no-untyped-def]
    """Valiant intermediate of a message between two switches, or -1 if the topology has none.

    A hash of ``request`` (program request id) and ``seed`` picks it uniformly among
    the switches allowed by the topology's rule (see the module docstring).
    """
    h = _mix64(np.uint64(request) ^ _mix64(np.uint64(seed)))
    rule = tables.valiant_rule
    if rule == VALIANT_TOP_LEVEL:
        return tables.valiant_a + np.int64(h % np.uint64(tables.valiant_b))
    if rule != VALIANT_OTHER_GROUP:
        return -1
    per_group = tables.valiant_a
    g_src = src_switch // per_group
    g_dst = dst_switch // per_group
    lo = min(g_src, g_dst)
    hi = max(g_src, g_dst)
    n_other = tables.valiant_b - 1 if lo == hi else tables.valiant_b - 2
    if n_other < 1:
        return -1
    group = np.int64(h % np.uint64(n_other))  # the group-th group that is neither lo nor hi
    if group >= lo:
        group += 1
        if lo != hi and group >= hi:
            group += 1
    within = np.int64((h // np.uint64(n_other)) % np.uint64(per_group))
    return group * per_group + within


@njit(inline="always", error_model="numpy")
def intermediate(tables, routing, src_node, dst_node, request, seed):  # type: ignore[no-untyped-def]
    """Switch a message's route detours through, or -1 for a minimal route."""
    if routing != ROUTE_VALIANT:
        return -1
    a = tables.node_switch[src_node]
    b = tables.node_switch[dst_node]
    if a == b:
        return -1
    return valiant_switch(tables, a, b, request, seed)


@njit(inline="always", error_model="numpy")
def route_links(tables, src_node, dst_node, mid, out):  # type: ignore[no-untyped-def]
    """Write the links from node ``src_node`` to node ``dst_node`` into ``out``.

    ``mid``: intermediate switch (-1, the source or the destination switch: minimal).
    Returns the number of links, or -1 if ``out`` is too short (a broken table).
    """
    out[0] = tables.inj_link[src_node]
    n = 1
    cur = tables.node_switch[src_node]
    target = tables.node_switch[dst_node]
    goal = target
    if mid >= 0 and mid != cur and mid != target:
        goal = mid
    limit = out.shape[0] - 1
    while True:
        while cur != goal:
            if n >= limit:
                return -1
            lk = next_hop(tables, cur, goal, dst_node, goal == target)
            out[n] = lk
            n += 1
            cur = tables.link_dst[lk]
        if goal == target:
            break
        goal = target
    out[n] = tables.ej_link[dst_node]
    return n + 1


@njit(inline="always")
def route_capacity(n_switches):  # type: ignore[no-untyped-def]
    """Buffer length that holds any route (two minimal legs, each < ``n_switches`` hops)."""
    return 2 * n_switches + 2


@njit(error_model="numpy")
def route_path(tables, src_node, dst_node, mid):  # type: ignore[no-untyped-def]
    """The route as a new array (see :func:`route_links`); empty for a broken table."""
    out = np.empty(route_capacity(tables.next_link.shape[0]), np.int32)
    n = route_links(tables, src_node, dst_node, mid, out)
    return out[: max(n, 0)].copy()


@njit(error_model="numpy")
def switch_path(tables, a_switch, b_switch, dst_node):  # type: ignore[no-untyped-def]
    """Network links of the minimal route between two switches; ``dst_node`` < 0: no
    d-mod-k rule, else ``b_switch`` must be that node's switch. -1 appended when broken."""
    out = np.empty(tables.next_link.shape[0] + 1, np.int32)
    n = 0
    cur = a_switch
    while cur != b_switch:
        if n >= tables.next_link.shape[0]:
            out[n] = -1
            return out[: n + 1].copy()
        lk = next_hop(tables, cur, b_switch, dst_node, dst_node >= 0)
        out[n] = lk
        n += 1
        cur = tables.link_dst[lk]
    return out[:n].copy()
