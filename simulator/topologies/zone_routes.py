"""The arrays a SimGrid cluster zone's routes are computed from, one bundle per zone kind.

SimGrid 3.32 computes a route between two hosts of a cluster zone with rules of its own
(``src/kernel/routing/{Star,FatTree,Dragonfly,Torus}Zone.cpp``), not by walking a graph:
its dragonfly, for one, may name links of a router the route never reaches. A flow
network reproduces those routes link for link (:mod:`.zone_routing`) from these arrays,
built by the zone builders (:mod:`.cluster_zone`, :mod:`.fattree_zone`,
:mod:`.dragonfly_zone`, :mod:`.torus_zone`). Link ids index the zone's link arrays
(:class:`~mpiuq.simulator.topologies.zone.Zone`); -1 means no link.

All bundles are present in :class:`ZoneRoutes`; those of the other kinds are empty.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import ZONE_TABLES

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


class StarRoutes(NamedTuple):
    """Flat cluster (SimGrid ``StarZone``): host up link, optional backbone, host down link."""

    up: I32  #: (n_hosts,) link a host sends on
    down: I32  #: (n_hosts,) link a host receives on (the up link if shared)
    backbone: int  #: the backbone link, or -1


class FatTreeRoutes(NamedTuple):
    """SimGrid's fat-tree (a generalised fat-tree ``levels;down;up;parallel``).

    Vertices are the hosts (``0..n_hosts-1``, level 0) then the switches, level by
    level. ``parent_*[v, j]`` is the ``j``-th up port of vertex ``v`` (link and upper
    vertex), ``child_*[v, i]`` its ``i``-th down port; ``label[v]`` its SimGrid label.
    """

    down: I64  #: (levels,) children per switch of each level
    up: I64  #: (levels,) parents per vertex of each level
    ports: I64  #: (levels,) parallel links between a vertex and each parent
    level: I32  #: (n_vertices,)
    position: I32  #: (n_vertices,) position within its level
    label: I32  #: (n_vertices, levels)
    parent_link: I32  #: (n_vertices, max up ports)
    parent_node: I32
    n_children: I32  #: (n_vertices,) down ports
    child_link: I32  #: (n_vertices, max down ports)
    child_node: I32


class DragonflyRoutes(NamedTuple):
    """SimGrid's dragonfly (``groups,blue;chassis,black;routers,green;nodes``).

    Router ``r = (group * chassis + c) * routers + b``; host ``(r, n)`` is host
    ``r * nodes + n``. Links of router ``r``: ``node_up[r, n]`` / ``node_down[r, n]`` to
    its hosts, ``green[r, b]`` to router ``b`` of its chassis, ``black[r, c]`` to the
    router of its blade in chassis ``c``, ``blue[r]`` its one link to another group.
    """

    chassis: int  #: chassis per group
    routers: int  #: routers (blades) per chassis
    nodes: int  #: hosts per router
    node_up: I32  #: (n_routers, nodes)
    node_down: I32
    green: I32  #: (n_routers, routers)
    black: I32  #: (n_routers, chassis)
    blue: I32  #: (n_routers,)


class TorusRoutes(NamedTuple):
    """SimGrid's torus: host ``h`` owns, per dimension ``j``, the link to its successor
    (``up[h, j]``: ``h`` -> successor; ``down[h, j]``: successor -> ``h``)."""

    dims: I64  #: (n_dims,) size of every dimension, the first varying fastest
    up: I32  #: (n_hosts, n_dims)
    down: I32


class ZoneRoutes(NamedTuple):
    """The routing of a flow network: its kind (``ZONE_*`` of
    :mod:`mpiuq.simulator.codes`) and the arrays of every kind (empty if unused)."""

    kind: int
    star: StarRoutes
    fattree: FatTreeRoutes
    dragonfly: DragonflyRoutes
    torus: TorusRoutes


def _i32(*shape: int) -> I32:
    return np.zeros(shape, np.int32)


def _i64(n: int) -> I64:
    return np.zeros(n, np.int64)


EMPTY_STAR = StarRoutes(_i32(0), _i32(0), -1)
EMPTY_FATTREE = FatTreeRoutes(
    _i64(0), _i64(0), _i64(0), _i32(0), _i32(0), _i32(0, 0), _i32(0, 0), _i32(0, 0), _i32(0),
    _i32(0, 0), _i32(0, 0),
)  # fmt: skip
EMPTY_DRAGONFLY = DragonflyRoutes(0, 0, 0, _i32(0, 0), _i32(0, 0), _i32(0, 0), _i32(0, 0), _i32(0))
EMPTY_TORUS = TorusRoutes(_i64(0), _i32(0, 0), _i32(0, 0))


def zone_routes(
    kind: int,
    star: StarRoutes = EMPTY_STAR,
    fattree: FatTreeRoutes = EMPTY_FATTREE,
    dragonfly: DragonflyRoutes = EMPTY_DRAGONFLY,
    torus: TorusRoutes = EMPTY_TORUS,
) -> ZoneRoutes:
    """The :class:`ZoneRoutes` of kind ``kind`` (the bundles not given are empty)."""
    return ZoneRoutes(int(kind), star, fattree, dragonfly, torus)


#: The routes of a flow network routed by its topology's tables (and of other models).
EMPTY_ZONE_ROUTES = zone_routes(ZONE_TABLES)
