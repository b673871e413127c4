"""Rank-to-node placement: which network endpoint each MPI rank runs on.

* ``linear`` -- rank ``r`` on node ``r`` (consecutive ranks share a switch).
* ``round-robin`` -- ranks dealt over switches: rank ``r`` on the ``r // S``-th free
  port of the ``r % S``-th switch (``S`` = number of switches with nodes), so
  consecutive ranks sit on different switches.
* ``random`` -- a uniformly random injective map drawn from ``seed``.

Examples
--------
>>> from mpiuq.simulator.topologies import make_topology
>>> topo = make_topology("crossbar:nodes=4")
>>> place_ranks(3, topo, "linear").tolist()
[0, 1, 2]
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies.base import Topology

__all__ = ["PLACEMENTS", "place_ranks"]

PLACEMENTS = ("linear", "round-robin", "random")


def _round_robin_order(node_switch: np.ndarray) -> np.ndarray:
    """Nodes sorted by (port index on their switch, switch)."""
    order = np.argsort(node_switch, kind="stable")
    sorted_sw = node_switch[order]
    starts = np.flatnonzero(np.r_[True, sorted_sw[1:] != sorted_sw[:-1]])
    counts = np.diff(np.r_[starts, sorted_sw.size])
    port = np.empty(node_switch.size, dtype=np.int64)
    port[order] = np.arange(sorted_sw.size) - np.repeat(starts, counts)
    return np.lexsort((node_switch, port))


def place_ranks(
    n_ranks: int, topology: Topology, placement: str = "linear", seed: int = 0
) -> np.ndarray:
    """Node of every rank.

    Parameters
    ----------
    n_ranks : int
        Number of MPI ranks (1..n_nodes).
    topology : Topology
        The network.
    placement : {"linear", "round-robin", "random"}
        Strategy (see the module docstring).
    seed : int
        Seed of the ``random`` placement (same seed, same placement).

    Returns
    -------
    ndarray of int64, shape (n_ranks,)
        Distinct node ids.

    Raises
    ------
    SettingError
        Unknown placement, ``n_ranks`` < 1 or larger than the number of nodes.
    """
    if not 1 <= n_ranks <= topology.n_nodes:
        raise SettingError(
            f"n_ranks={n_ranks} does not fit the {topology.name} of {topology.n_nodes} nodes: "
            f"expected 1..{topology.n_nodes}"
        )
    if placement == "linear":
        nodes = np.arange(n_ranks)
    elif placement == "round-robin":
        nodes = _round_robin_order(topology.node_switch)[:n_ranks]
    elif placement == "random":
        nodes = np.random.default_rng(seed).permutation(topology.n_nodes)[:n_ranks]
    else:
        raise SettingError(f"placement={placement!r} is unknown: expected one of {PLACEMENTS}")
    return nodes.astype(np.int64)
