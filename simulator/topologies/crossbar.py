"""A single switch connecting every node (the two-hop network of the benchmarks)."""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology, endpoint_links
from mpiuq.simulator.topologies.registry import TopologyEntry, register_topology

__all__ = ["CROSSBAR", "build_crossbar"]


def build_crossbar(nodes: int) -> Topology:
    """Crossbar of ``nodes`` endpoints on one switch.

    Every route is injection link, switch, ejection link (two hops).

    Parameters
    ----------
    nodes : int
        Number of endpoints (>= 1).

    Raises
    ------
    SettingError
        If ``nodes < 1``.
    """
    if nodes < 1:
        raise SettingError(f"crossbar nodes={nodes!r} is invalid: expected a whole number >= 1")
    node_switch = np.zeros(nodes, dtype=np.int32)
    link_class, link_src, link_dst, inj, ej = endpoint_links(node_switch, 0)
    return Topology(
        name="crossbar",
        params={"nodes": nodes},
        n_nodes=nodes,
        n_switches=1,
        link_class=link_class,
        link_src=link_src,
        link_dst=link_dst,
        node_switch=node_switch,
        inj_link=inj,
        ej_link=ej,
        next_link=np.full((1, 1), -1, dtype=np.int32),
        switch_level=np.zeros(1, dtype=np.int32),
        up_links=np.zeros((1, 0), dtype=np.int32),
        notes=("one switch: every route is injection + ejection (2 hops)",),
    )


CROSSBAR = register_topology(
    TopologyEntry(
        "crossbar",
        "one switch: every route is injection + ejection (2 hops)",
        "crossbar:nodes=64",
        lambda p: build_crossbar(nodes=p["nodes"]),
        options=("nodes",),
        required=("nodes",),
        size_for=lambda n_ranks, params: {"nodes": n_ranks, **params},
        node_count=lambda p: int(p["nodes"]),
    )
)
