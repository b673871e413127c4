"""Dragonfly: counts against the closed forms, global arrangement, minimal and Valiant routes.

Independent reference for route lengths: the shortest switch path with at most one
global hop (the dragonfly meaning of "minimal"), enumerated from the link list, not
from the routing table under test; the plain BFS distance (scipy.sparse.csgraph) is
a lower bound (it may use two global hops through a third group).
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
from mpiuq.simulator.topologies.dragonfly import dragonfly_global_link_count

# (groups, switches, nodes, global): full rounds only, partial last round, one group
SMALL = [(3, 2, 2, 1), (5, 4, 2, 2), (6, 3, 1, 2), (10, 4, 1, 3), (1, 3, 2, 0), (4, 3, 2, 3)]


def build(g: int, a: int, p: int, h: int) -> Topology:
    return make_topology(f"dragonfly:groups={g},switches={a},nodes={p},global={h}")


def check_route(topo: Topology, src: int, dst: int, path: np.ndarray) -> None:
    """Consecutive links connect; injection of src first, ejection of dst last."""
    assert path[0] == topo.inj_link[src] and topo.link_class[path[0]] == LINK_INJECTION
    assert path[-1] == topo.ej_link[dst] and topo.link_class[path[-1]] == LINK_EJECTION
    assert topo.link_src[path[0]] == src and topo.link_dst[path[-1]] == dst
    assert np.all(topo.link_class[path[1:-1]] == LINK_NETWORK)
    np.testing.assert_array_equal(topo.link_dst[path[:-1]], topo.link_src[path[1:]])


def one_global_distances(topo: Topology, a: int) -> np.ndarray:
    """Switch hops of the shortest local*-global-local* path (local graph is complete)."""
    n = topo.n_switches
    grp = np.arange(n) // a
    dist = np.where(grp[:, None] == grp[None, :], 1.0, np.inf)
    net = topo.link_class == LINK_NETWORK
    for u, v in zip(topo.link_src[net], topo.link_dst[net], strict=True):
        if grp[u] == grp[v]:
            continue
        cost = (
            1
            + (np.arange(n) != u)[grp == grp[u]][:, None]
            + (np.arange(n) != v)[grp == grp[v]][None, :]
        )
        block = np.ix_(np.flatnonzero(grp == grp[u]), np.flatnonzero(grp == grp[v]))
        dist[block] = np.minimum(dist[block], cost)
    np.fill_diagonal(dist, 0.0)
    return dist


def switch_distances(topo: Topology) -> np.ndarray:
    net = topo.link_class == LINK_NETWORK
    graph = csr_matrix(
        (np.ones(int(net.sum())), (topo.link_src[net], topo.link_dst[net])),
        shape=(topo.n_switches, topo.n_switches),
    )
    return shortest_path(graph, method="D", unweighted=True)


@pytest.mark.parametrize(("g", "a", "p", "h"), SMALL)
def test_counts_match_formulas(g: int, a: int, p: int, h: int) -> None:
    topo = build(g, a, p, h)
    assert topo.n_nodes == g * a * p
    assert topo.n_switches == g * a
    assert topo.count_links(LINK_INJECTION) + topo.count_links(LINK_EJECTION) == 2 * g * a * p
    net = topo.link_class == LINK_NETWORK
    src_grp = topo.link_src[net] // a
    dst_grp = topo.link_dst[net] // a
    assert np.count_nonzero(src_grp == dst_grp) == g * a * (a - 1)
    assert np.count_nonzero(src_grp != dst_grp) == dragonfly_global_link_count(g, a, h)
    assert topo.next_link.shape == (g * a, g * a) and topo.next_link.dtype == np.int32
    assert np.all(np.diag(topo.next_link) == -1)


def test_global_link_count_closed_form_by_hand() -> None:
    # 10 groups, 4 switches, 3 global ports each: 12 ports per group, 9 other groups:
    # one full round (45 pairs) + the 3 remaining ports pair (0,1),(0,2),(1,2),(0,3),(1,3),(2,3)
    assert dragonfly_global_link_count(10, 4, 3) == 2 * (45 + 6)
    assert dragonfly_global_link_count(1, 48, 8) == 0


@pytest.mark.parametrize(("g", "a", "p", "h"), SMALL)
def test_global_arrangement(g: int, a: int, p: int, h: int) -> None:
    topo = build(g, a, p, h)
    net = topo.link_class == LINK_NETWORK
    src, dst = topo.link_src[net], topo.link_dst[net]
    glob = src // a != dst // a
    src, dst = src[glob], dst[glob]
    # every link has its reverse
    pairs = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert all((d, s) in pairs for s, d in pairs)
    # at most h global links per switch, at most one per destination group
    assert np.bincount(src, minlength=topo.n_switches).max(initial=0) <= h
    per_group = {(s, d // a) for s, d in pairs}
    assert len(per_group) == len(pairs)
    # every pair of groups connected, the parallel links spread evenly (differ by <= 1)
    counts = np.zeros((g, g), dtype=int)
    np.add.at(counts, (src // a, dst // a), 1)
    off = ~np.eye(g, dtype=bool)
    if g >= 2:
        assert counts[off].min() >= 1
        assert counts[off].max() - counts[off].min() <= 1


@pytest.mark.parametrize(("g", "a", "p", "h"), SMALL)
def test_every_minimal_route_is_valid_and_shortest(g: int, a: int, p: int, h: int) -> None:
    topo = build(g, a, p, h)
    dist = one_global_distances(topo, a)
    bfs = switch_distances(topo)
    assert np.all(bfs <= dist)
    for src in range(topo.n_nodes):
        for dst in range(topo.n_nodes):
            path = topo.route(src, dst)
            check_route(topo, src, dst, path)
            hops = path[1:-1]
            kinds = topo.link_src[hops] // a != topo.link_dst[hops] // a  # True = global
            assert kinds.sum() <= 1 and (~kinds).sum() <= 2 and hops.size <= 3
            if kinds.any():  # local hops only before and after the global one
                assert kinds.tolist() in (
                    [True],
                    [False, True],
                    [True, False],
                    [False, True, False],
                )
            s, d = topo.node_switch[src], topo.node_switch[dst]
            assert hops.size == dist[s, d]


def test_paper_dragonfly_counts_and_routes() -> None:
    topo = make_topology("dragonfly:groups=86,switches=48,nodes=4,global=8")
    assert (topo.n_nodes, topo.n_switches) == (16512, 4128)
    assert topo.count_links(LINK_NETWORK) == 4128 * 47 + dragonfly_global_link_count(86, 48, 8)
    rng = np.random.default_rng(5)
    for src, dst in rng.integers(0, topo.n_nodes, size=(200, 2)):
        path = topo.route(int(src), int(dst))
        check_route(topo, int(src), int(dst), path)
        assert path.size <= 5


@pytest.mark.parametrize(("g", "a", "p", "h"), [(5, 4, 2, 2), (10, 4, 1, 3), (3, 2, 2, 1)])
def test_valiant_passes_through_another_group(g: int, a: int, p: int, h: int) -> None:
    topo = build(g, a, p, h)
    rng = np.random.default_rng(11)
    seen = set()
    for request, (src, dst) in enumerate(rng.integers(0, topo.n_nodes, size=(300, 2))):
        s, d = int(topo.node_switch[src]), int(topo.node_switch[dst])
        mid = valiant_intermediate(topo, int(src), int(dst), request=request, seed=7)
        path = topo.route(int(src), int(dst), "valiant", request=request, seed=7)
        check_route(topo, int(src), int(dst), path)
        if s == d:  # nodes of one switch: no detour
            assert mid == -1 and path.size == 2
            continue
        assert mid // a not in (s // a, d // a)
        seen.add(mid // a)
        np.testing.assert_array_equal(path, topo.route(int(src), int(dst), "valiant", mid))
        assert mid in topo.link_dst[path[:-1]]
        assert path.size - 2 <= 6  # two minimal segments of <= 3 switch hops
    assert seen == set(range(g))  # every group serves as an intermediate for someone


def test_valiant_intermediate_is_a_function_of_request_and_seed() -> None:
    topo = build(5, 4, 2, 2)
    mids = [valiant_intermediate(topo, 0, 39, request=r, seed=1) for r in range(200)]
    assert mids == [valiant_intermediate(topo, 0, 39, request=r, seed=1) for r in range(200)]
    other_seed = [valiant_intermediate(topo, 0, 39, request=r, seed=2) for r in range(200)]
    assert mids != other_seed
    # groups 1..3 (not 0, the source's, nor 4, the destination's), 4 switches each:
    # a uniform choice puts about 200/12 = 17 messages on each switch
    counts = np.bincount(mids, minlength=topo.n_switches)
    assert counts[:4].sum() == 0 and counts[16:].sum() == 0
    assert counts[4:16].min() >= 5


def test_valiant_needs_three_groups() -> None:
    topo = build(2, 2, 1, 1)
    with pytest.raises(SettingError, match="groups=2, expected >= 3"):
        valiant_intermediate(topo, 0, 3, request=0)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("dragonfly:groups=5,switches=4,nodes=2,global=5", r"global=5 is invalid: expected 1\.\.4"),
        ("dragonfly:groups=20,switches=2,nodes=2,global=3", r"groups=20 is invalid: expected <= "),
        ("dragonfly:groups=0", r"groups=0 is invalid"),
        ("dragonfly:groups=3,nodes=0", r"nodes=0 is invalid"),
    ],
)
def test_invalid_parameters_are_named(spec: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        make_topology(spec)
