"""The :class:`Topology` arrays shared by every network topology, and their routing rules.

A topology is a directed graph of links between nodes (network endpoints, one MPI
rank each) and switches. Links are numbered so that the compiled engine can keep one
queue per link; each has a class (injection node->switch, network switch->switch,
ejection switch->node), a source and a destination.

Minimal routing is a table ``next_link[a, b]``: the link a packet at switch ``a``
takes towards switch ``b``. Topologies whose minimal routing also depends on the
destination *node* (the fat-tree's d-mod-k up-port choice) add ``up_links`` and
``up_radix``: when ``next_link[a, b]`` is an up-link, the packet for node ``d`` takes
``up_links[a, (d // up_radix ** switch_level[a]) % up_radix]`` instead (see
:meth:`Topology.next_hop`). The rule holds only while heading for ``d``'s own switch
(``b == node_switch[d]``): on the first leg of a Valiant route, towards an
intermediate switch, use ``next_link`` alone, or the packet may never reach the
intermediate. Engines that ignore the rule still get valid minimal routes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mpiuq.simulator.codes import (
    LINK_EJECTION,
    LINK_INJECTION,
    LINK_NETWORK,
    ROUTE_VALIANT,
    ROUTINGS,
    VALIANT_NONE,
)
from mpiuq.simulator.errors import SettingError

if TYPE_CHECKING:  # the routing loops (numba) load when a route is first asked for
    import mpiuq.simulator.topologies.routing as rt

__all__ = [
    "LINK_EJECTION",
    "LINK_INJECTION",
    "LINK_NETWORK",
    "ROUTINGS",
    "Topology",
    "endpoint_links",
]


@dataclass(frozen=True, slots=True, eq=False)
class Topology:
    """Nodes, switches, links and minimal routing of one network.

    Attributes
    ----------
    name : str
        ``"dragonfly"``, ``"fattree"`` or ``"crossbar"``.
    params : dict
        The parameters it was built from (e.g. ``{"groups": 86, "switches": 48, ...}``).
    n_nodes, n_switches : int
        Number of network endpoints and of switches.
    link_class : ndarray of int8, shape (n_links,)
        ``LINK_INJECTION`` (node -> switch), ``LINK_NETWORK`` (switch -> switch) or
        ``LINK_EJECTION`` (switch -> node).
    link_src, link_dst : ndarray of int32, shape (n_links,)
        Source node (injection) or switch; destination switch, or node (ejection).
    node_switch : ndarray of int32, shape (n_nodes,)
        Switch each node hangs off.
    inj_link, ej_link : ndarray of int32, shape (n_nodes,)
        Injection and ejection link of each node.
    next_link : ndarray of int32, shape (n_switches, n_switches)
        Minimal-routing next link from switch ``a`` towards switch ``b``; -1 on the
        diagonal. Deterministic tie-breaks (documented by each topology).
    switch_level : ndarray of int32, shape (n_switches,)
        Fat-tree level of each switch (0 = leaf); 0 for other topologies.
    up_links : ndarray of int32, shape (n_switches, up_radix)
        Fat-tree: the up-link of each switch to the parent reached by port ``u``
        (-1 at the top level); shape ``(n_switches, 0)`` for other topologies.
    up_radix : int
        Fat-tree arity ``k``; 0 when routing does not depend on the destination node.
    valiant : tuple of int
        ``(rule, a, b)`` of the Valiant intermediates (:data:`~mpiuq.simulator.codes.VALIANT_RULES`):
        ``(VALIANT_OTHER_GROUP, switches per group, groups)`` for a dragonfly of at
        least three groups, ``(VALIANT_TOP_LEVEL, first top-level switch, their
        number)`` for a fat-tree, ``(VALIANT_NONE, 0, 0)`` without alternative paths.
    notes : tuple of str
        Arrangement and tie-break rules, shown by :meth:`describe`.
    """

    name: str
    params: dict[str, int]
    n_nodes: int
    n_switches: int
    link_class: np.ndarray
    link_src: np.ndarray
    link_dst: np.ndarray
    node_switch: np.ndarray
    inj_link: np.ndarray
    ej_link: np.ndarray
    next_link: np.ndarray
    switch_level: np.ndarray
    up_links: np.ndarray
    up_radix: int = 0
    valiant: tuple[int, int, int] = (VALIANT_NONE, 0, 0)
    notes: tuple[str, ...] = field(default=())

    @property
    def n_links(self) -> int:
        """Number of directed links (injection + network + ejection)."""
        return int(self.link_class.shape[0])

    def count_links(self, link_class: int) -> int:
        """Number of links of one class (``LINK_INJECTION``, ``LINK_NETWORK``, ``LINK_EJECTION``)."""
        return int(np.count_nonzero(self.link_class == link_class))

    def _check_node(self, name: str, node: int) -> None:
        if not 0 <= node < self.n_nodes:
            raise SettingError(f"{name}={node} is not a node: expected 0..{self.n_nodes - 1}")

    def _check_switch(self, name: str, switch: int) -> None:
        if not 0 <= switch < self.n_switches:
            raise SettingError(
                f"{name}={switch} is not a switch: expected 0..{self.n_switches - 1}"
            )

    def routing_tables(self) -> rt.RoutingTables:
        """The arrays the compiled routing reads (shared with the engine)."""
        import mpiuq.simulator.topologies.routing as rt

        rule, a, b = self.valiant
        return rt.RoutingTables(
            np.ascontiguousarray(self.link_class, dtype=np.int8),
            np.ascontiguousarray(self.link_dst, dtype=np.int32),
            np.ascontiguousarray(self.node_switch, dtype=np.int32),
            np.ascontiguousarray(self.inj_link, dtype=np.int32),
            np.ascontiguousarray(self.ej_link, dtype=np.int32),
            np.ascontiguousarray(self.next_link, dtype=np.int32),
            np.ascontiguousarray(self.switch_level, dtype=np.int32),
            np.ascontiguousarray(self.up_links, dtype=np.int32),
            int(self.up_radix),
            int(rule),
            int(a),
            int(b),
        )

    def next_hop(self, switch: int, dst_switch: int, dst_node: int | None = None) -> int:
        """Link taken at ``switch`` towards ``dst_switch`` (and node ``dst_node``).

        Applies the node-dependent up-port rule of topologies with ``up_radix > 0``
        when ``dst_node`` is given; pass it only when ``dst_switch`` is that node's
        switch (see the module docstring). -1 when ``switch == dst_switch``.
        """
        self._check_switch("switch", switch)
        self._check_switch("dst_switch", dst_switch)
        links = self.switch_path(switch, dst_switch, dst_node)
        return int(links[0]) if links else -1

    def switch_path(
        self, src_switch: int, dst_switch: int, dst_node: int | None = None
    ) -> list[int]:
        """Network links of the minimal route between two switches (empty if equal)."""
        self._check_switch("src_switch", src_switch)
        self._check_switch("dst_switch", dst_switch)
        if dst_node is not None:
            self._check_node("dst_node", dst_node)
        node = -1 if dst_node is None else dst_node
        import mpiuq.simulator.topologies.routing as rt

        links = rt.switch_path(self.routing_tables(), src_switch, dst_switch, node)
        if links.size and links[-1] < 0:
            raise RuntimeError(  # pragma: no cover - a broken table is a bug
                f"routing table of {self.name} has no route from switch {src_switch} "
                f"to switch {dst_switch}"
            )
        return [int(x) for x in links]

    def check_valiant(self) -> None:
        """Raise unless Valiant routing applies (it needs alternative paths).

        Raises
        ------
        SettingError
            For a crossbar, or a dragonfly of fewer than three groups.
        """
        if self.valiant[0] != VALIANT_NONE:
            return
        if self.name == "dragonfly":
            raise SettingError(
                "valiant routing needs a group other than the source and destination groups: "
                f"dragonfly has groups={self.params.get('groups')}, expected >= 3"
            )
        raise SettingError(
            f"valiant routing does not apply to a {self.name}: expected dragonfly or fattree"
        )

    def valiant_intermediate(
        self, src_node: int, dst_node: int, request: int, seed: int = 0
    ) -> int:
        """The engine's Valiant intermediate switch for a message (see :mod:`.routing`).

        Parameters
        ----------
        src_node, dst_node : int
            Node ids.
        request : int
            Program request id of the message's send (>= 0).
        seed : int
            Route seed of the packet network (>= 0).

        Returns
        -------
        int
            The switch, or -1 when both nodes hang off the same switch (no detour).

        Raises
        ------
        SettingError
            If the topology has no Valiant intermediates, or a node, ``request`` or
            ``seed`` is out of range.
        """
        self.check_valiant()
        self._check_node("src_node", src_node)
        self._check_node("dst_node", dst_node)
        for name, value in (("request", request), ("seed", seed)):
            if not 0 <= value < 2**63:
                raise SettingError(f"{name}={value} is invalid: expected a whole number >= 0")
        import mpiuq.simulator.topologies.routing as rt

        return int(
            rt.intermediate(self.routing_tables(), ROUTE_VALIANT, src_node, dst_node, request, seed)
        )

    def route(
        self,
        src_node: int,
        dst_node: int,
        routing: str = "minimal",
        intermediate: int | None = None,
        *,
        request: int = 0,
        seed: int = 0,
    ) -> np.ndarray:
        """Link ids of the path from ``src_node`` to ``dst_node``, as the engine routes it.

        Parameters
        ----------
        src_node, dst_node : int
            Node ids.
        routing : {"minimal", "valiant"}
            ``"valiant"``: minimal to an intermediate switch, then minimal to the
            destination (Valiant's randomised routing).
        intermediate : int, optional
            Switch the Valiant route passes through; default: the engine's choice for
            ``request`` and ``seed`` (:meth:`valiant_intermediate`).
        request, seed : int
            Program request id of the message and route seed (Valiant only).

        Returns
        -------
        ndarray of int32
            Injection link, network links, ejection link.
        """
        self._check_node("src_node", src_node)
        self._check_node("dst_node", dst_node)
        if routing == "minimal":
            if intermediate is not None:
                raise SettingError(
                    f"intermediate={intermediate} is only meaningful with routing='valiant'"
                )
            mid = -1
        elif routing == "valiant":
            if intermediate is None:
                mid = self.valiant_intermediate(src_node, dst_node, request, seed)
            else:
                self._check_switch("intermediate", intermediate)
                mid = intermediate
        else:
            raise SettingError(f"routing={routing!r} is unknown: expected one of {ROUTINGS}")
        import mpiuq.simulator.topologies.routing as rt

        path = rt.route_path(self.routing_tables(), src_node, dst_node, mid)
        if path.size == 0:
            raise RuntimeError(  # pragma: no cover - a broken table is a bug
                f"routing table of {self.name} has no route from node {src_node} to {dst_node}"
            )
        return np.asarray(path, dtype=np.int32)

    def describe(self) -> str:
        """One paragraph: name, parameters, counts of nodes, switches and links, rules."""
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        lines = [
            f"{self.name}({params}): {self.n_nodes} nodes, {self.n_switches} switches, "
            f"{self.n_links} links ({self.count_links(LINK_INJECTION)} injection, "
            f"{self.count_links(LINK_NETWORK)} network, "
            f"{self.count_links(LINK_EJECTION)} ejection)"
        ]
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


def endpoint_links(
    node_switch: np.ndarray, n_network: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Link arrays with injection links ``0..n-1`` and ejection links ``n..2n-1`` first.

    Parameters
    ----------
    node_switch : ndarray of int32
        Switch of each node.
    n_network : int
        Number of network links that follow (ids ``2n..2n+n_network-1``, filled by the caller).

    Returns
    -------
    link_class, link_src, link_dst, inj_link, ej_link
    """
    n = int(node_switch.shape[0])
    total = 2 * n + n_network
    link_class = np.full(total, LINK_NETWORK, dtype=np.int8)
    link_src = np.zeros(total, dtype=np.int32)
    link_dst = np.zeros(total, dtype=np.int32)
    nodes = np.arange(n, dtype=np.int32)
    link_class[:n] = LINK_INJECTION
    link_src[:n] = nodes
    link_dst[:n] = node_switch
    link_class[n : 2 * n] = LINK_EJECTION
    link_src[n : 2 * n] = node_switch
    link_dst[n : 2 * n] = nodes
    return link_class, link_src, link_dst, nodes.copy(), nodes + np.int32(n)
