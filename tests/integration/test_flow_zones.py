"""SimGrid cluster zones: routes link for link as SimGrid 3.32 finds them, and their shapes.

Reference: ``tests/data/simgrid_routes/*.routes``, written by SimGrid 3.32 itself
(``experiments/simgrid_refs/routes/dump_routes.cpp`` on the ``.xml`` beside each): the
route between every ordered pair of hosts as link names, and its latency. mpiuq's
routes must be the same up to renaming: one bijection between SimGrid's link names
and mpiuq's link ids maps every route onto mpiuq's route of the same pair (so links
are shared by exactly the same routes, ``SHARED`` links used both ways included), and
every route's latency must agree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.platform import read_platform
from mpiuq.simulator.topologies import make_topology
from mpiuq.simulator.topologies.cluster_zone import build_cluster_zone
from mpiuq.simulator.topologies.dragonfly_zone import build_dragonfly_zone
from mpiuq.simulator.topologies.fattree_zone import build_fattree_zone
from mpiuq.simulator.topologies.spec import is_zone_spec, make_zone, place_on_zone
from mpiuq.simulator.topologies.torus_zone import build_torus_zone
from mpiuq.simulator.topologies.zone import Zone, zone_of_topology
from mpiuq.simulator.topologies.zone_routing import zone_route

DATA = Path(__file__).resolve().parents[1] / "data" / "simgrid_routes"
PLATFORMS = sorted(p.stem for p in DATA.glob("*.xml"))


def route(zone: Zone, a: int, b: int) -> list[int]:
    out = np.zeros(zone.max_route, np.int32)
    n = zone_route(zone.routes, zone.routing_tables(), a, b, out)
    assert n >= 0, f"route {a} -> {b} longer than {zone.max_route} links"
    return [int(x) for x in out[:n]]


def test_reference_routes_are_present() -> None:
    assert len(PLATFORMS) >= 9


@pytest.mark.parametrize("name", PLATFORMS)
def test_routes_match_simgrid(name: str) -> None:
    platform = read_platform(DATA / f"{name}.xml")
    zone = platform.zone
    index = {h: i for i, h in enumerate(platform.hosts)}
    ref_lat_s = zone.reference[1] * 1e-9 if zone.reference else 1e-9
    name_of: dict[int, str] = {}
    link_of: dict[str, int] = {}
    lines = (DATA / f"{name}.routes").read_text().splitlines()
    assert len(lines) == zone.n_nodes * (zone.n_nodes - 1)
    for line in lines:
        src, dst, lat, *names = line.split()
        mine = route(zone, index[src], index[dst])
        assert len(mine) == len(names), line
        for link, sg in zip(mine, names, strict=True):
            assert link_of.setdefault(sg, link) == link, f"{line}: {sg} is not link {link}"
            assert name_of.setdefault(link, sg) == sg, f"{line}: link {link} is not {sg}"
        latency = float(zone.link_lat[mine].sum()) * ref_lat_s
        assert latency == pytest.approx(float(lat), rel=1e-9, abs=1e-15), line


def test_every_zone_link_is_on_some_route_of_the_references() -> None:
    # the fat-tree with parallel links uses every one of them from some source
    platform = read_platform(DATA / "fattree_parallel.xml")
    zone = platform.zone
    used = {x for a in range(zone.n_nodes) for b in range(zone.n_nodes) if a != b
            for x in route(zone, a, b)}  # fmt: skip
    assert used == set(range(zone.n_links))


def test_torus_routes_are_at_most_half_round_per_dimension() -> None:
    for dims in ((3,), (4, 4), (5, 3, 2), (6, 7)):
        zone = build_torus_zone(dims)
        longest = max(
            len(route(zone, a, b))
            for a in range(zone.n_nodes)
            for b in range(zone.n_nodes)
            if a != b
        )
        assert longest == sum(d // 2 for d in dims)


def test_cluster_backbone_and_sharing_policies() -> None:
    split = build_cluster_zone(4, backbone_bw=2.0)
    assert route(split, 0, 3) == [0, 8, 7]  # up link of 0, backbone, down link of 3
    shared = build_cluster_zone(4, policy="SHARED")
    assert route(shared, 0, 3) == [0, 3] and route(shared, 3, 0) == [3, 0]
    fat = build_cluster_zone(4, backbone_bw=2.0, backbone_policy="FATPIPE")
    assert bool(fat.link_fatpipe[-1]) and not fat.link_fatpipe[:-1].any()


def test_zone_of_topology_routes_minimally() -> None:
    topo = make_topology("fattree:k=2,levels=3")
    zone = zone_of_topology(topo)
    for a, b in ((0, 1), (0, 7), (5, 2)):
        assert route(zone, a, b) == [int(x) for x in topo.route(a, b)]
    assert zone.link_injection.sum() == topo.n_nodes


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: build_dragonfly_zone(4, 1, 2, 1, 3, 1, 2), "groups <= routers"),
        (lambda: build_dragonfly_zone(2, 0, 2, 1, 3, 1, 2), "blue=0"),
        (lambda: build_fattree_zone((2, 2), (1,), (1, 1)), "one value per level"),
        (lambda: build_fattree_zone((2, 0), (1, 1), (1, 1)), "down="),
        (lambda: build_torus_zone(()), "torus dims"),
        (lambda: build_cluster_zone(4, backbone_lat=1.0), "without a backbone bandwidth"),
        (lambda: build_cluster_zone(0), "hosts=0"),
    ],
)
def test_bad_zone_shapes_are_refused(build, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingError, match=match):
        build()


def test_zone_specs() -> None:
    assert make_zone("torus:dims=4x4").n_nodes == 16
    assert make_zone("cluster", n_ranks=6).n_nodes == 6
    bb = make_zone("cluster:hosts=8,backbone=2.5,backbone_lat=0.5")
    assert bb.link_bw[-1] == 2.5 and bb.link_lat[-1] == 0.5 and bb.n_links == 17
    assert make_zone("cluster:hosts=8,shared=1").n_links == 8
    ft = make_zone("sgfattree:down=4x4,up=1x2")
    assert ft.n_nodes == 16 and ft.max_route == 4
    df = make_zone("sgdragonfly:groups=2,chassis=2,routers=2,nodes=2")
    assert df.n_nodes == 16
    assert is_zone_spec("torus:dims=2") and not is_zone_spec("fattree:k=2")


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("ring:n=4", "zone 'ring' is unknown"),
        ("torus", r"needs parameter\(s\) \['dims'\]"),
        ("torus:dims=4-4", "whole numbers joined by 'x'"),
        ("cluster:hosts=4,colour=2", "parameter 'colour' is unknown"),
        ("cluster:hosts=4,backbone=-1", "backbone='-1' is invalid"),
        ("cluster:hosts=4,hosts=5", "given twice"),
        ("sgfattree:down=4x4,up=1", "one value per level"),
    ],
)
def test_bad_zone_specs(spec: str, match: str) -> None:
    with pytest.raises(SettingError, match=match):
        make_zone(spec)


def test_zone_placement() -> None:
    zone = make_zone("torus:dims=4x2")
    assert place_on_zone(3, zone, "linear").tolist() == [0, 1, 2]
    assert sorted(place_on_zone(8, zone, "random").tolist()) == list(range(8))
    with pytest.raises(SettingError, match="does not apply to the torus zone"):
        place_on_zone(3, zone, "round-robin")
    with pytest.raises(SettingError, match="n_ranks=9 does not fit the torus of 8 hosts"):
        place_on_zone(9, zone, "linear")
