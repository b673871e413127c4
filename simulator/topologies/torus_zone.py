"""SimGrid's torus zone: hosts on a torus of ``dims`` (the first dimension varies fastest).

As SimGrid 3.32 builds it (``TorusZone.cpp``): the hosts are the torus's vertices; every
host owns, per dimension, the link to its successor in that dimension (wrapping
around), with the cluster's bandwidth and latency (``SPLITDUPLEX``: an up link host ->
successor and a down link successor -> host; else one link both ways). A dimension of
size 1 or 2 still gets its own link per host, as in SimGrid. Routing, dimension by
dimension: :func:`~.zone_routing.torus_route`.
"""

from __future__ import annotations

import math

import numpy as np

from mpiuq.simulator.codes import ZONE_TORUS
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology
from mpiuq.simulator.topologies.zone import Zone
from mpiuq.simulator.topologies.zone_options import (
    DEFAULT_ZONE_OPTIONS,
    ZoneOptions,
    check_counts,
    check_size,
    spec_options,
    spec_values,
    whole_numbers,
)
from mpiuq.simulator.topologies.zone_routes import TorusRoutes, zone_routes

#: Most hosts of a torus built here.
MAX_HOSTS = 1 << 20


def build_torus_zone(dims: tuple[int, ...], options: ZoneOptions = DEFAULT_ZONE_OPTIONS) -> Zone:
    """SimGrid's torus of ``dims`` (see the module docstring) with ``options``' links.

    Raises
    ------
    SettingError
        For no dimension, a size below 1, or more than :data:`MAX_HOSTS` hosts.
    """
    check_counts("torus", dims=dims)
    n_hosts = math.prod(dims)
    check_size("torus", n_hosts, "hosts", MAX_HOSTS)
    n_dims = len(dims)
    per = 2 if options.split_duplex else 1
    ids = np.arange(n_hosts * n_dims, dtype=np.int32).reshape(n_hosts, n_dims) * per
    up = ids
    down = ids + 1 if options.split_duplex else ids
    n_links = n_hosts * n_dims * per
    max_route = sum(d // 2 for d in dims)
    return options.zone(
        "torus",
        {"dims": "x".join(map(str, dims))},
        n_hosts,
        np.ones(n_links),
        zone_routes(ZONE_TORUS, torus=TorusRoutes(np.asarray(dims, np.int64), up, down)),
        max(max_route, 1),
        (
            f"{n_links} links, routes of at most {max_route} hops",
            "route: dimension by dimension, the shorter way round from the source's "
            "coordinates (SimGrid 3.32 TorusZone)",
        ),
    )


TORUS = register_topology(
    TopologyEntry(
        "torus",
        "SimGrid's torus zone of `dims` hosts (first dimension fastest); `shared=1`: one "
        "link both ways per cable",
        "torus:dims=8x8x16",
        lambda p: build_torus_zone(p["dims"], spec_options(p)),
        options=("dims", "shared"),
        required=("dims",),
        value=spec_values(lists=("dims",)),
        zone=True,
        simgrid_topology="TORUS",
        from_platform=lambda text, options: build_torus_zone(
            whole_numbers(text, ",", "torus dimensions"), options
        ),
    )
)
