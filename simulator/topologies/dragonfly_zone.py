"""SimGrid's dragonfly zone: ``groups,blue;chassis,black;routers,green;nodes``.

As SimGrid 3.32 builds it (``DragonflyZone.cpp``), which differs from mpiuq's dragonfly
(:mod:`.dragonfly`): groups of ``chassis`` chassis of ``routers`` routers (blades), each
router with ``nodes`` hosts on local links. The routers of one chassis are joined all to
all by green links (``green`` parallel cables: one link of ``green`` times the
bandwidth), the routers of one blade position across a group's chassis by black links
(``black`` times), and the groups pairwise by one blue link (``blue`` times) between
router ``j`` of group ``i`` and router ``i`` of group ``j``. Every link has the
cluster's latency. ``SPLITDUPLEX`` makes an up and a down link of every cable, other
policies one link both ways. SimGrid routes to another group through the router whose
index in the group is the target group, which must therefore be a router of the
source's chassis: ``groups <= routers`` (SimGrid reads past its tables otherwise).
Routing: :func:`~.zone_routing.dragonfly_route`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mpiuq.simulator.codes import ZONE_DRAGONFLY
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_options import (
    DEFAULT_ZONE_OPTIONS,
    ZoneOptions,
    check_counts,
    check_size,
    spec_options,
    whole_numbers,
)
from mpiuq.simulator.topologies.zone_routes import DragonflyRoutes, zone_routes

#: Most hosts of a SimGrid dragonfly zone built here.
MAX_HOSTS = 1 << 20


class _Links:
    """Link ids in creation order, each with its bandwidth multiple."""

    def __init__(self, split: bool) -> None:
        self.split = split
        self.bw: list[float] = []

    def cable(self, count: int) -> tuple[int, int]:
        """A cable of ``count`` parallel links: (up, down) link ids."""
        up = len(self.bw)
        self.bw += [float(count)] * (2 if self.split else 1)
        return up, (up + 1 if self.split else up)


def build_dragonfly_zone(
    groups: int,
    blue: int,
    chassis: int,
    black: int,
    routers: int,
    green: int,
    nodes: int,
    options: ZoneOptions = DEFAULT_ZONE_OPTIONS,
) -> Zone:
    """SimGrid's dragonfly (see the module docstring) with ``options``' links.

    Raises
    ------
    SettingError
        For a count below 1, more groups than routers per chassis, or more than
        :data:`MAX_HOSTS` hosts.
    """
    check_counts(
        "dragonfly", groups=groups, blue=blue, chassis=chassis, black=black, routers=routers,
        green=green, nodes=nodes,
    )  # fmt: skip
    if groups > routers:
        raise SettingError(
            f"dragonfly groups={groups} is invalid with routers={routers}: SimGrid reaches "
            "another group through the router of that group's index in the source's chassis, "
            "so expected groups <= routers"
        )
    n_routers = groups * chassis * routers
    n_hosts = n_routers * nodes
    check_size("dragonfly", n_hosts, "hosts", MAX_HOSTS)
    links = _Links(options.split_duplex)
    node_up = np.full((n_routers, nodes), -1, np.int32)
    node_down = np.full((n_routers, nodes), -1, np.int32)
    green_of = np.full((n_routers, routers), -1, np.int32)
    black_of = np.full((n_routers, chassis), -1, np.int32)
    blue_of = np.full(n_routers, -1, np.int32)
    for r in range(n_routers):
        for n in range(nodes):
            node_up[r, n], node_down[r, n] = links.cable(1)
    for c in range(groups * chassis):  # green: routers of one chassis, all to all
        for j in range(routers):
            for k in range(j + 1, routers):
                up, down = links.cable(green)
                green_of[c * routers + j, k] = up
                green_of[c * routers + k, j] = down
    per_group = chassis * routers
    for g in range(groups):  # black: one blade position across a group's chassis
        for j in range(chassis):
            for k in range(j + 1, chassis):
                for b in range(routers):
                    up, down = links.cable(black)
                    black_of[g * per_group + j * routers + b, k] = up
                    black_of[g * per_group + k * routers + b, j] = down
    for i in range(groups):  # blue: router j of group i <-> router i of group j
        for j in range(i + 1, groups):
            up, down = links.cable(blue)
            blue_of[i * per_group + j] = up
            blue_of[j * per_group + i] = down
    routes = DragonflyRoutes(
        chassis, routers, nodes, node_up, node_down, green_of, black_of, blue_of
    )
    spec = f"{groups},{blue};{chassis},{black};{routers},{green};{nodes}"
    return options.zone(
        "dragonfly",
        {"topo_parameters": spec},
        n_hosts,
        links.bw,
        zone_routes(ZONE_DRAGONFLY, dragonfly=routes),
        7,
        (
            f"{n_routers} routers, {len(links.bw)} links (green x{green}, black x{black}, "
            f"blue x{blue} bandwidth)",
            "route: green to the target group's router index, black to chassis 0, blue, "
            "green, black (SimGrid 3.32 DragonflyZone, its chassis quirk included)",
        ),
    )


_COUNTS = ("groups", "blue", "chassis", "black", "routers", "green", "nodes")


def _from_spec(p: Mapping[str, Any]) -> Zone:
    g, blue, c, black, r, green, n = (int(p.get(k, 1)) for k in _COUNTS)
    return build_dragonfly_zone(g, blue, c, black, r, green, n, spec_options(p))


def _from_platform(params: str, options: ZoneOptions) -> Zone:
    """The zone of ``topo_parameters`` ``groups,blue;chassis,black;routers,green;nodes``."""
    parts = params.split(";")
    if len(parts) != 4:
        raise ValueError(
            f"topo_parameters {params!r}: a dragonfly is "
            "'groups,blue;chassis,black;routers,green;nodes'"
        )
    pairs = [whole_numbers(p, ",", "dragonfly pair") for p in parts[:3]]
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"topo_parameters {params!r}: the first three parts are pairs N,M")
    (nodes,) = whole_numbers(parts[3], ",", "dragonfly nodes")
    (g, blue), (c, black), (r, green) = pairs
    return build_dragonfly_zone(g, blue, c, black, r, green, nodes, options)


SGDRAGONFLY = register_topology(
    TopologyEntry(
        "sgdragonfly",
        "SimGrid's dragonfly zone: `groups` of `chassis` chassis of `routers` routers with "
        "`nodes` hosts each; `blue`, `black`, `green` parallel cables (default 1)",
        "sgdragonfly:groups=2,chassis=2,routers=2,nodes=2",
        _from_spec,
        options=(*_COUNTS, "shared"),
        required=("groups", "chassis", "routers", "nodes"),
        zone=True,
        simgrid_topology="DRAGONFLY",
        from_platform=_from_platform,
    )
)
