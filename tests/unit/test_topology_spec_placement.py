"""Topology specs (parsing, validation, sizing for a rank count), crossbar and placements."""

from __future__ import annotations

import numpy as np
import pytest

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.placement import place_ranks
from mpiuq.simulator.topologies import (
    LINK_NETWORK,
    make_topology,
    parse_topology_spec,
    topology_for_ranks,
    valiant_intermediate,
)


def test_parse_spec() -> None:
    assert parse_topology_spec(" Dragonfly:groups=86, switches=48,nodes=4,global=8") == (
        "dragonfly",
        {"groups": 86, "switches": 48, "nodes": 4, "global": 8},
    )
    assert parse_topology_spec("fattree:k=4") == ("fattree", {"k": 4})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("torus:dims=4", r"topology 'torus' is unknown: expected one of \('crossbar', 'dragonfly', 'fattree'\)"),
        (
            "crossbar:nodes=8,radix=4",
            r"crossbar parameter 'radix' is unknown: expected one of \('nodes',\)",
        ),
        (
            "crossbar:nodes=eight",
            r"crossbar parameter nodes='eight' is invalid: expected a whole number",
        ),
        ("crossbar:nodes=4.5", r"nodes='4.5' is invalid"),
        ("crossbar:nodes", r"'nodes' is malformed: expected key=value"),
        ("crossbar:nodes=2,nodes=3", r"'nodes' is given twice"),
        ("crossbar", r"crossbar needs parameter\(s\) \['nodes'\]"),
        ("crossbar:nodes=0", r"nodes=0 is invalid: expected a whole number >= 1"),
        # absurd magnitudes are refused before anything is allocated
        ("fattree:k=100000", r"fattree:k=100000 is too large: .* more than 16,777,216"),
        ("fattree:k=2,levels=1000000000", r"levels=1000000000 is too large"),
        ("dragonfly:groups=100000,switches=48", r"groups=100000,switches=48 is too large"),
        ("crossbar:nodes=99999999999", r"crossbar:nodes=99999999999 is too large"),
    ],
)
def test_bad_specs_are_rejected_with_the_key_and_value(spec: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        make_topology(spec)


def test_dragonfly_defaults_are_the_papers() -> None:
    topo = make_topology("dragonfly:groups=12")
    assert topo.params == {"groups": 12, "switches": 48, "nodes": 4, "global": 8}


def test_crossbar_routes_are_two_hops() -> None:
    topo = make_topology("crossbar:nodes=5")
    assert (topo.n_nodes, topo.n_switches, topo.count_links(LINK_NETWORK)) == (5, 1, 0)
    assert topo.route(1, 3).tolist() == [1, 8]
    assert topo.next_link.tolist() == [[-1]]
    with pytest.raises(SettingError, match="valiant routing does not apply to a crossbar"):
        valiant_intermediate(topo, 0, 1, request=0)


def test_route_argument_errors() -> None:
    topo = make_topology("crossbar:nodes=5")
    with pytest.raises(SettingError, match=r"dst_node=5 is not a node: expected 0\.\.4"):
        topo.route(0, 5)
    with pytest.raises(SettingError, match=r"routing='adaptive' is unknown"):
        topo.route(0, 1, "adaptive")
    with pytest.raises(SettingError, match="valiant routing does not apply to a crossbar"):
        topo.route(0, 1, "valiant")
    fat = make_topology("fattree:k=2,levels=2")
    with pytest.raises(SettingError, match=r"intermediate=9 is not a switch: expected 0\.\.3"):
        fat.route(0, 1, "valiant", intermediate=9)
    with pytest.raises(SettingError, match="request=-1 is invalid"):
        fat.route(0, 3, "valiant", request=-1)
    with pytest.raises(SettingError, match="only meaningful with routing='valiant'"):
        topo.route(0, 1, intermediate=0)


@pytest.mark.parametrize("n", [1, 8, 100, 383, 384, 1024, 16384])
def test_dragonfly_for_ranks_is_smallest_sensible(n: int) -> None:
    topo = topology_for_ranks("dragonfly", n)
    prm = topo.params
    assert topo.n_nodes >= n
    assert prm["nodes"] == 4
    # one group fewer would not hold n ranks
    assert (prm["groups"] - 1) * prm["switches"] * prm["nodes"] < n
    if n >= 384:
        assert prm["switches"] == 48 and prm["global"] == min(8, prm["groups"] - 1)


def test_dragonfly_for_ranks_paper_sizes() -> None:
    topo = topology_for_ranks("dragonfly", 16384)
    assert topo.params == {"nodes": 4, "switches": 48, "groups": 86, "global": 8}


@pytest.mark.parametrize("n", [1, 16, 17, 1000, 4096])
def test_fattree_and_crossbar_for_ranks(n: int) -> None:
    tree = topology_for_ranks("fattree", n)
    k, levels = tree.params["k"], tree.params["levels"]
    assert k**levels >= n and (k == 2 or (k - 1) ** levels < n)
    assert topology_for_ranks("crossbar", n).n_nodes == n


def test_for_ranks_overrides_and_errors() -> None:
    topo = topology_for_ranks("dragonfly", 1000, switches=16)
    assert topo.params["switches"] == 16 and topo.n_nodes >= 1000
    with pytest.raises(SettingError, match=r"parameter 'radix' is unknown"):
        topology_for_ranks("fattree", 10, radix=4)
    with pytest.raises(SettingError, match=r"has 8 nodes: expected >= n_ranks=100"):
        topology_for_ranks("fattree", 100, k=2, levels=3)
    with pytest.raises(SettingError, match="n_ranks=0 is invalid"):
        topology_for_ranks("crossbar", 0)


@pytest.mark.parametrize("placement", ["linear", "round-robin", "random"])
@pytest.mark.parametrize("n_ranks", [1, 7, 24])
def test_placements_are_injective(placement: str, n_ranks: int) -> None:
    topo = make_topology("dragonfly:groups=3,switches=2,nodes=4,global=1")
    nodes = place_ranks(n_ranks, topo, placement, seed=4)
    assert nodes.dtype == np.int64 and nodes.shape == (n_ranks,)
    assert np.unique(nodes).size == n_ranks
    assert nodes.min() >= 0 and nodes.max() < topo.n_nodes
    if n_ranks == topo.n_nodes:
        assert sorted(nodes.tolist()) == list(range(topo.n_nodes))


def test_placement_rules() -> None:
    topo = make_topology("dragonfly:groups=3,switches=2,nodes=2,global=1")
    assert place_ranks(5, topo, "linear").tolist() == [0, 1, 2, 3, 4]
    # six switches with two ports each: first ports of all switches, then the second ports
    assert place_ranks(8, topo, "round-robin").tolist() == [0, 2, 4, 6, 8, 10, 1, 3]
    a = place_ranks(12, topo, "random", seed=1)
    np.testing.assert_array_equal(a, place_ranks(12, topo, "random", seed=1))
    assert not np.array_equal(a, place_ranks(12, topo, "random", seed=2))


def test_placement_errors() -> None:
    topo = make_topology("crossbar:nodes=4")
    with pytest.raises(SettingError, match=r"n_ranks=5 does not fit the crossbar of 4 nodes"):
        place_ranks(5, topo)
    with pytest.raises(SettingError, match=r"placement='block' is unknown"):
        place_ranks(2, topo, "block")
