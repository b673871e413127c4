"""SimGrid's fat-tree zone: a generalised fat-tree ``levels;down;up;parallel``.

As SimGrid 3.32 builds it (``FatTreeZone.cpp``): ``levels`` levels of switches above the
hosts; a switch of level ``l + 1`` has ``down[l]`` children, a vertex of level ``l`` has
``up[l]`` parents, joined by ``parallel[l]`` links each. Hosts (level 0) number
``prod(down)``; level ``l + 1`` holds ``prod(up[:l+1]) * prod(down[l+1:])`` switches.
Every vertex gets SimGrid's label (a mixed-radix counter, position order); a parent and
a child are related when their labels agree but for digit ``child level``; child port
``label_child[l] + j * down[l]`` of the parent and parent port ``label_parent[l] + j * up[l]``
of the child hold their ``j``-th parallel link. Every link has the cluster's bandwidth
and latency (``SPLITDUPLEX``: an up and a down link; else one link both ways). Routing:
:func:`~.zone_routing.fattree_route`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mpiuq.simulator.codes import ZONE_FATTREE
from mpiuq.simulator.errors import SettingError
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
from mpiuq.simulator.topologies.zone_routes import FatTreeRoutes, zone_routes


def _labels(n_at: list[int], down: list[int], up: list[int]) -> list[np.ndarray]:
    """SimGrid's labels of every level's vertices (``generate_labels``)."""
    levels = len(down)
    out = []
    for i in range(levels + 1):
        radix = [down[j] if j + 1 > i else up[j] for j in range(levels)]
        idx = np.arange(n_at[i])
        cols = []
        for r in radix:
            cols.append(idx % r)
            idx = idx // r
        out.append(np.stack(cols, axis=1).astype(np.int32) if levels else np.zeros((n_at[i], 0)))
    return out


def build_fattree_zone(
    down: tuple[int, ...],
    up: tuple[int, ...],
    parallel: tuple[int, ...],
    options: ZoneOptions = DEFAULT_ZONE_OPTIONS,
) -> Zone:
    """SimGrid's fat-tree with ``len(down)`` levels (see the module docstring) with
    ``options``' links.

    Raises
    ------
    SettingError
        If the three vectors differ in length, are empty or hold a value < 1.
    """
    levels = len(down)
    if levels == 0 or len(up) != levels or len(parallel) != levels:
        raise SettingError(
            f"fat-tree down={list(down)}, up={list(up)}, parallel={list(parallel)}: expected "
            "three vectors of one value per level (at least one level)"
        )
    check_counts("fat-tree", down=down, up=up, parallel=parallel)
    n_at = [math.prod(down)] + [
        math.prod(up[: i + 1]) * math.prod(down[i + 1 :]) for i in range(levels)
    ]
    check_size("fat-tree", sum(n_at), "vertices", 1 << 22)
    first = np.cumsum([0, *n_at])  # first vertex id of each level
    n_vertices = int(first[-1])
    labels = _labels(n_at, list(down), list(up))
    max_up = max(up[i] * parallel[i] for i in range(levels))
    max_down = max(down[i] * parallel[i] for i in range(levels))
    parent_link = np.full((n_vertices, max_up), -1, np.int32)
    parent_node = np.full((n_vertices, max_up), -1, np.int32)
    child_link = np.full((n_vertices, max_down), -1, np.int32)
    child_node = np.full((n_vertices, max_down), -1, np.int32)
    n_children = np.zeros(n_vertices, np.int32)
    n_links = 0
    for lv in range(levels):  # links between level lv and lv + 1
        n_children[first[lv + 1] : first[lv + 2]] = down[lv] * parallel[lv]
        # a parent is related to a child when their labels agree but for digit lv
        key_of: dict[bytes, list[int]] = {}
        masked = labels[lv + 1].copy()
        masked[:, lv] = 0
        for p in range(n_at[lv + 1]):
            key_of.setdefault(masked[p].tobytes(), []).append(p)
        child_keys = labels[lv].copy()
        child_keys[:, lv] = 0
        for c in range(n_at[lv]):
            for p in key_of.get(child_keys[c].tobytes(), []):
                for j in range(parallel[lv]):
                    up_id = n_links
                    down_id = n_links + 1 if options.split_duplex else n_links
                    n_links = down_id + 1
                    pv, cv = first[lv + 1] + p, first[lv] + c
                    cport = labels[lv][c, lv] + j * down[lv]
                    pport = labels[lv + 1][p, lv] + j * up[lv]
                    child_link[pv, cport], child_node[pv, cport] = down_id, cv
                    parent_link[cv, pport], parent_node[cv, pport] = up_id, pv
    level = np.repeat(np.arange(levels + 1, dtype=np.int32), n_at)
    position = np.concatenate([np.arange(k, dtype=np.int32) for k in n_at])
    routes = FatTreeRoutes(
        np.asarray(down, np.int64),
        np.asarray(up, np.int64),
        np.asarray(parallel, np.int64),
        level,
        position,
        np.concatenate(labels).astype(np.int32),
        parent_link,
        parent_node,
        n_children,
        child_link,
        child_node,
    )
    spec = ";".join([str(levels), *(",".join(map(str, v)) for v in (down, up, parallel))])
    return options.zone(
        "fattree",
        {"topo_parameters": spec},
        n_at[0],
        np.ones(n_links),
        zone_routes(ZONE_FATTREE, fattree=routes),
        2 * levels,
        (
            f"{' + '.join(map(str, n_at[1:]))} switches on {levels} level(s), {n_links} links",
            "route: up by d-mod-k on the destination's position, down by its label "
            "(SimGrid 3.32 FatTreeZone)",
        ),
    )


def _from_spec(p: Mapping[str, Any]) -> Zone:
    down = p["down"]
    return build_fattree_zone(down, p["up"], p.get("parallel", (1,) * len(down)), spec_options(p))


def _from_platform(params: str, options: ZoneOptions) -> Zone:
    """The zone of ``topo_parameters`` ``levels;down,...;up,...;parallel,...``."""
    parts = params.split(";")
    if len(parts) != 4:
        raise ValueError(
            f"topo_parameters {params!r}: a fat-tree is 'levels;down,...;up,...;parallel,...'"
        )
    (levels,) = whole_numbers(parts[0], ",", "fat-tree levels")
    vectors = [whole_numbers(p, ",", "fat-tree vector") for p in parts[1:]]
    if any(len(v) != levels for v in vectors):
        raise ValueError(
            f"topo_parameters {params!r}: {levels} level(s) need three vectors of {levels}"
        )
    down, up, parallel = vectors
    return build_fattree_zone(down, up, parallel, options)


SGFATTREE = register_topology(
    TopologyEntry(
        "sgfattree",
        "SimGrid's generalised fat-tree zone: `down` children and `up` parents a level, "
        "`parallel` links each (default 1)",
        "sgfattree:down=8x8x16,up=1x8x8",
        _from_spec,
        options=("down", "up", "parallel", "shared"),
        required=("down", "up"),
        value=spec_values(lists=("down", "up", "parallel")),
        zone=True,
        simgrid_topology="FAT_TREE",
        from_platform=_from_platform,
    )
)
