"""k-ary n-tree: counts, up/down minimal routes, d-mod-k contention freedom, Valiant.

References: node/switch/port counts of the k-ary n-tree (Petrini and Vanneschi 1997);
switch-to-switch distances by breadth-first search (scipy.sparse.csgraph), independent
of the routing table; the shift permutation d -> d + s mod k**n is contention-free
under d-mod-k routing (each down link serves one destination, each up link one
(low destination digits, high source digits) class).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.topologies import (
    LINK_EJECTION,
    LINK_INJECTION,
    LINK_NETWORK,
    Topology,
    make_topology,
    valiant_intermediate,
)

SHAPES = [(2, 1), (2, 2), (2, 3), (3, 3), (2, 4), (4, 2)]


def build(k: int, levels: int) -> Topology:
    return make_topology(f"fattree:k={k},levels={levels}")


def check_route(topo: Topology, src: int, dst: int, path: np.ndarray) -> None:
    assert path[0] == topo.inj_link[src] and topo.link_class[path[0]] == LINK_INJECTION
    assert path[-1] == topo.ej_link[dst] and topo.link_class[path[-1]] == LINK_EJECTION
    assert topo.link_src[path[0]] == src and topo.link_dst[path[-1]] == dst
    assert np.all(topo.link_class[path[1:-1]] == LINK_NETWORK)
    np.testing.assert_array_equal(topo.link_dst[path[:-1]], topo.link_src[path[1:]])


def lca_level(k: int, src: int, dst: int) -> int:
    """Lowest level whose switches cover both nodes: leaf labels agree above it."""
    level = 0
    while src // k ** (level + 1) != dst // k ** (level + 1):
        level += 1
    return level


@pytest.mark.parametrize(("k", "levels"), SHAPES)
def test_counts_and_ports(k: int, levels: int) -> None:
    topo = build(k, levels)
    assert topo.n_nodes == k**levels
    assert topo.n_switches == levels * k ** (levels - 1)
    assert topo.count_links(LINK_INJECTION) + topo.count_links(LINK_EJECTION) == 2 * k**levels
    assert topo.count_links(LINK_NETWORK) == 2 * (levels - 1) * k**levels
    net = topo.link_class == LINK_NETWORK
    level = topo.switch_level
    src, dst = topo.link_src[net], topo.link_dst[net]
    up = level[dst] > level[src]
    down_ports = np.bincount(src[~up], minlength=topo.n_switches)
    up_ports = np.bincount(src[up], minlength=topo.n_switches)
    top = level == levels - 1
    assert np.all(up_ports[~top] == k) and np.all(up_ports[top] == 0)
    assert np.all(down_ports[level > 0] == k) and np.all(down_ports[level == 0] == 0)
    assert np.all(np.bincount(topo.node_switch) == k)
    # every link joins adjacent levels, and has its reverse
    assert np.all(np.abs(level[src] - level[dst]) == 1)
    pairs = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert all((d, s) in pairs for s, d in pairs)


@pytest.mark.parametrize(("k", "levels"), SHAPES)
def test_node_routes_go_up_to_the_common_ancestor_and_down(k: int, levels: int) -> None:
    topo = build(k, levels)
    level = topo.switch_level
    for src in range(topo.n_nodes):
        for dst in range(topo.n_nodes):
            path = topo.route(src, dst)
            check_route(topo, src, dst, path)
            top = lca_level(k, src, dst)
            assert path.size - 2 == 2 * top
            climbs = level[topo.link_dst[path[1:-1]]] - level[topo.link_src[path[1:-1]]]
            assert climbs.tolist() == [1] * top + [-1] * top


@pytest.mark.parametrize(("k", "levels"), [(2, 3), (3, 3), (2, 4), (3, 2)])
def test_switch_table_routes_are_shortest(k: int, levels: int) -> None:
    topo = build(k, levels)
    net = topo.link_class == LINK_NETWORK
    graph = csr_matrix(
        (np.ones(int(net.sum())), (topo.link_src[net], topo.link_dst[net])),
        shape=(topo.n_switches, topo.n_switches),
    )
    dist = shortest_path(graph, method="D", unweighted=True)
    for a in range(topo.n_switches):
        for b in range(topo.n_switches):
            links = topo.switch_path(a, b)
            assert len(links) == dist[a, b]
            if links:
                assert topo.link_src[links[0]] == a and topo.link_dst[links[-1]] == b


def max_link_load(topo: Topology, pairs: list[tuple[int, int]], node_aware: bool) -> int:
    used: list[int] = []
    for src, dst in pairs:
        if node_aware:
            used += topo.route(src, dst).tolist()
        else:
            a, b = int(topo.node_switch[src]), int(topo.node_switch[dst])
            used += [int(topo.inj_link[src]), *topo.switch_path(a, b), int(topo.ej_link[dst])]
    return int(np.bincount(used).max())


@pytest.mark.parametrize(("k", "levels"), [(2, 3), (3, 3), (4, 3), (2, 4)])
def test_shift_permutations_are_contention_free(k: int, levels: int) -> None:
    topo = build(k, levels)
    n = topo.n_nodes
    for shift in range(1, n):
        pairs = [(d, (d + shift) % n) for d in range(n)]
        assert max_link_load(topo, pairs, node_aware=True) == 1, shift
    # the test can fail: switch-level routing (no destination-node digit) funnels the
    # k flows between two leaves onto one path
    pairs = [(d, (d + k ** (levels - 1)) % n) for d in range(n)]
    assert max_link_load(topo, pairs, node_aware=False) == k


def test_valiant_passes_through_a_top_switch() -> None:
    topo = build(3, 3)
    rng = np.random.default_rng(3)
    top = set(np.flatnonzero(topo.switch_level == 2).tolist())
    seen = set()
    for request, (src, dst) in enumerate(rng.integers(0, topo.n_nodes, size=(200, 2))):
        mid = valiant_intermediate(topo, int(src), int(dst), request=request, seed=5)
        path = topo.route(int(src), int(dst), "valiant", request=request, seed=5)
        check_route(topo, int(src), int(dst), path)
        if topo.node_switch[src] == topo.node_switch[dst]:
            assert mid == -1 and path.size == 2
            continue
        assert mid in top
        seen.add(mid)
        assert mid in topo.link_dst[path[:-1]]
        assert path.size - 2 == 4  # up two levels, down two levels
    assert seen == top


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("fattree:k=1", r"k=1 is invalid: expected a whole number >= 2"),
        ("fattree:k=2,levels=0", r"levels=0 is invalid"),
    ],
)
def test_invalid_parameters_are_named(spec: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        make_topology(spec)
