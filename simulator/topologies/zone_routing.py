"""Routes of a flow network between two hosts, link for link as SimGrid 3.32 finds them.

:func:`zone_route` writes the links from host ``a`` to host ``b`` into a buffer. A
topology's own tables route minimally (:func:`~.routing.route_links`); a SimGrid
cluster zone follows the ``get_local_route`` of its kind in SimGrid 3.32, ported
statement for statement, including its quirks (the fat-tree's down walk continues its
port scan in the child it just reached; the dragonfly takes the green link in the
source's chassis and then the black link of chassis 0's router, whichever chassis the
route is in; the torus picks each dimension's direction from the source's
coordinates). A host never routes to itself here (ranks of one host exchange through
memory). Without loopback or limiter links.
"""

from __future__ import annotations

from mpiuq.simulator.codes import ZONE_DRAGONFLY, ZONE_FATTREE, ZONE_STAR, ZONE_TORUS
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies.routing import route_links


@njit(inline="always", error_model="numpy")
def _put(out, n, link):  # type: ignore[no-untyped-def]
    """Append ``link`` (n < 0: overflowed already); returns the new length or -1."""
    if n < 0 or n >= out.shape[0]:
        return -1
    out[n] = link
    return n + 1


@njit(error_model="numpy")
def star_route(z, a, b, out):  # type: ignore[no-untyped-def]
    """Flat cluster: ``a``'s up link, the backbone, ``b``'s down link (each link once)."""
    z = borrowed(z)
    out = borrowed(out)
    n = _put(out, 0, z.up[a])
    if z.backbone >= 0:
        n = _put(out, n, z.backbone)
    if z.down[b] != z.up[a] and z.down[b] != z.backbone:
        n = _put(out, n, z.down[b])
    return n


@njit(inline="always", error_model="numpy")
def _in_subtree(z, root, node):  # type: ignore[no-untyped-def]
    """SimGrid's ``FatTreeZone::is_in_sub_tree``."""
    if z.level[root] <= z.level[node]:
        return False
    same = True
    for i in range(z.level[node]):
        if z.label[root, i] != z.label[node, i]:
            same = False
    for i in range(z.level[root], z.label.shape[1]):
        if z.label[root, i] != z.label[node, i]:
            same = False
    return same


@njit(error_model="numpy")
def fattree_route(z, a, b, out):  # type: ignore[no-untyped-def]
    """SimGrid's fat-tree: up by d-mod-k on the destination's position to the nearest
    common ancestor, then down; among parallel down links the one of the source's
    position modulo their number."""
    z = borrowed(z)
    out = borrowed(out)
    n = 0
    cur = a
    while not _in_subtree(z, cur, b):
        lv = z.level[cur]
        d = z.position[b]
        for i in range(lv):
            d //= z.up[i]
        d %= z.up[lv] * z.ports[lv]
        n = _put(out, n, z.parent_link[cur, d])
        cur = z.parent_node[cur, d]
        if n < 0 or cur < 0:
            return -1
    src_pos = z.position[a]
    while cur != b:
        lv = z.level[cur]
        i = (src_pos % z.ports[lv - 1]) * z.down[lv - 1]
        before = cur
        # the scan goes on in the child just reached, as in SimGrid's loop
        while i < z.n_children[cur]:
            lv2 = z.level[cur]
            if i % z.down[lv2 - 1] == z.label[b, lv2 - 1]:
                n = _put(out, n, z.child_link[cur, i])
                cur = z.child_node[cur, i]
                if n < 0:
                    return -1
            i += 1
        if cur == before:  # no port leads on: a broken table
            return -1
    return n


@njit(error_model="numpy")
def dragonfly_route(z, a, b, out):  # type: ignore[no-untyped-def]
    """SimGrid's dragonfly: green to the router of the target group's index, black to
    chassis 0, blue to the target group, then green and black to the target router."""
    z = borrowed(z)
    out = borrowed(out)
    per_router = z.nodes
    per_chassis = z.routers * per_router
    per_group = z.chassis * per_chassis
    rpg = z.chassis * z.routers  # routers per group
    my_g, my_c = a // per_group, (a % per_group) // per_chassis
    my_b, my_n = (a % per_chassis) // per_router, a % per_router
    t_g, t_c = b // per_group, (b % per_group) // per_chassis
    t_b, t_n = (b % per_chassis) // per_router, b % per_router
    mine = my_g * rpg + my_c * z.routers + my_b
    target = t_g * rpg + t_c * z.routers + t_b
    n = _put(out, 0, z.node_up[mine, my_n])
    if target != mine:
        cur = mine
        if t_g != my_g:
            if cur % z.routers != t_g:
                n = _put(out, n, z.green[cur, t_g])
                cur = my_g * rpg + my_c * z.routers + t_g
            if (cur // z.routers) % z.chassis != 0:
                n = _put(out, n, z.black[cur, 0])
                cur = my_g * rpg + t_g
            n = _put(out, n, z.blue[cur])
            cur = t_g * rpg + my_g
        if t_b != cur % z.routers:
            n = _put(out, n, z.green[cur, t_b])
            cur = t_g * rpg + t_b
        if t_c != (cur // z.routers) % z.chassis:
            n = _put(out, n, z.black[cur, t_c])
    return _put(out, n, z.node_down[target, t_n])


@njit(error_model="numpy")
def torus_route(z, a, b, out):  # type: ignore[no-untyped-def]
    """SimGrid's torus: dimension by dimension, the first dimension first; the way round
    each dimension is chosen from the source's and target's coordinates."""
    z = borrowed(z)
    out = borrowed(out)
    n = 0
    cur = a
    while cur != b:
        dp = 1
        nxt = cur
        link = -1
        for j in range(z.dims.shape[0]):
            cd = z.dims[j]
            here = (cur // dp) % cd
            if here != (b // dp) % cd:
                mc = (a // dp) % cd
                tc = (b // dp) % cd
                half = cd // 2
                if (tc > mc and tc <= mc + half) or (mc > half and (mc + half) % cd >= tc):
                    nxt = cur + dp - dp * cd if here == cd - 1 else cur + dp
                    link = z.up[cur, j]
                else:
                    nxt = cur - dp + dp * cd if here == 0 else cur - dp
                    link = z.down[nxt, j]
                break
            dp *= cd
        n = _put(out, n, link)
        if n < 0 or link < 0:
            return -1
        cur = nxt
    return n


@njit(error_model="numpy")
def zone_route(zr, tables, a, b, out):  # type: ignore[no-untyped-def]
    """Write the links from host ``a`` to host ``b`` into ``out``; returns their number,
    or -1 if ``out`` is too short or the tables are broken (an engine bug)."""
    zr = borrowed(zr)
    tables = borrowed(tables)
    out = borrowed(out)
    if zr.kind == ZONE_STAR:
        return star_route(zr.star, a, b, out)
    if zr.kind == ZONE_FATTREE:
        return fattree_route(zr.fattree, a, b, out)
    if zr.kind == ZONE_DRAGONFLY:
        return dragonfly_route(zr.dragonfly, a, b, out)
    if zr.kind == ZONE_TORUS:
        return torus_route(zr.torus, a, b, out)
    return route_links(tables, a, b, -1, out)
