"""The topology and collective-algorithm registries and what is derived from them.

The spec parser, sizing, the SimGrid cluster mapping, the ``--topology`` help and the
docs' tables follow the topology entries; a malformed entry is refused; an entry
registered by a call is built, sized and refused like a built-in. The collective
algorithms, their named sets and :func:`schedule` follow the algorithm entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.collectives import (
    ALGORITHM_REGISTRY,
    ALGORITHM_SETS,
    ALGORITHMS,
    CollectiveAlgorithm,
    CollectiveError,
    CollSizes,
    algorithm_set,
    register_algorithm,
    schedule,
)
from mpiuq.simulator.collectives.registry import algorithm_table
from mpiuq.simulator.collectives.rooted import bcast_linear
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.platform.cluster import simgrid_topologies
from mpiuq.simulator.topologies import (
    TOPOLOGY_REGISTRY,
    TopologyEntry,
    build_crossbar,
    make_topology,
    register_topology,
    topology_for_ranks,
    topology_names,
)
from mpiuq.simulator.topologies.registry import topology_table
from mpiuq.simulator.topologies.spec import is_zone_spec, make_zone

DOCS = Path(__file__).resolve().parents[2] / "docs" / "extending-simulator.md"


def test_the_builtin_topologies_are_registered_by_their_modules() -> None:
    assert set(topology_names(zone=False)) == {"dragonfly", "fattree", "crossbar"}
    assert set(topology_names(zone=True)) == {"cluster", "torus", "sgfattree", "sgdragonfly"}
    for entry in TOPOLOGY_REGISTRY:
        assert entry.build.__module__.startswith("mpiuq.simulator.topologies.")
        built = (make_zone if entry.zone else make_topology)(entry.example)
        assert built.n_nodes >= 1  # every documented example builds
    assert set(simgrid_topologies()) == {"FLAT", "FAT_TREE", "DRAGONFLY", "TORUS"}


def test_the_docs_tables_are_the_registries() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert f"<!-- BEGIN topologies -->\n\n{topology_table()}\n\n<!-- END topologies -->" in text
    table = algorithm_table()
    assert f"<!-- BEGIN collective algorithms -->\n\n{table}\n\n<!-- END" in text
    assert table.count("\n") == len(ALGORITHM_REGISTRY) + 1


def test_a_malformed_topology_entry_is_refused() -> None:
    with pytest.raises(SettingError, match=r"required key\(s\) \['n'\] are not among"):
        TopologyEntry("x", "", "x:n=1", make_topology, options=("m",), required=("n",))
    with pytest.raises(SettingError, match="both or neither of simgrid_topology"):
        TopologyEntry("x", "", "x", make_topology, simgrid_topology="RING")
    with pytest.raises(SettingError, match="topology 'dragonfly' is registered already"):
        register_topology(TOPOLOGY_REGISTRY.get("dragonfly"))


@pytest.fixture
def star() -> Iterator[TopologyEntry]:
    entry = register_topology(
        TopologyEntry(
            "star",
            "test: a crossbar under another name",
            "star:leaves=4",
            lambda p: build_crossbar(p["leaves"]),
            options=("leaves",),
            required=("leaves",),
            size_for=lambda n, p: {"leaves": n, **p},
            node_count=lambda p: int(p["leaves"]),
        )
    )
    yield entry
    TOPOLOGY_REGISTRY.unregister("star")


def test_a_registered_topology_is_parsed_built_sized_and_checked(star: TopologyEntry) -> None:
    topo, ref = make_topology("star:leaves=6"), make_topology("crossbar:nodes=6")
    np.testing.assert_array_equal(topo.link_src, ref.link_src)
    assert topology_for_ranks("star", 9).n_nodes == 9
    assert not is_zone_spec("star:leaves=2")
    with pytest.raises(SettingError, match=r"star needs parameter\(s\) \['leaves'\]: e.g. star"):
        make_topology("star:")
    with pytest.raises(SettingError, match="star parameter leaves='x' is invalid: expected a"):
        make_topology("star:leaves=x")
    with pytest.raises(SettingError, match=r"star:leaves=\d+ is too large"):
        make_topology("star:leaves=1000000000")
    with pytest.raises(SettingError, match=r"zone 'star' is unknown: expected one of \("):
        make_zone("star:leaves=2")
    assert "`star`" in topology_table()


@pytest.fixture
def broadcast_twice() -> Iterator[CollectiveAlgorithm]:
    def twice(me: int, p: int, root: int, sizes: CollSizes):  # type: ignore[no-untyped-def]
        """Two linear broadcasts."""
        return bcast_linear(me, p, root, sizes) * 2

    entry = register_algorithm(CollectiveAlgorithm("bcast", "twice", twice, ("test-set",)))
    yield entry
    ALGORITHM_REGISTRY.unregister(entry.name)


def test_a_registered_algorithm_is_scheduled_and_selected(
    broadcast_twice: CollectiveAlgorithm,
) -> None:
    assert broadcast_twice.name == "bcast-twice"
    assert broadcast_twice.description == "Two linear broadcasts."
    assert "twice" in ALGORITHMS["bcast"]
    assert algorithm_set("test-set") == {"bcast": "twice"} == dict(ALGORITHM_SETS["test-set"])
    steps = schedule("bcast", "twice", 0, 3, 0, CollSizes(8))
    assert steps == bcast_linear(0, 3, 0, CollSizes(8)) * 2


def test_the_named_sets_follow_the_entries() -> None:
    assert set(ALGORITHM_SETS) == {"mpich", "simgrid"}
    assert algorithm_set("mpich") == {}
    chosen = {e.collective: e.algorithm for e in ALGORITHM_REGISTRY if "simgrid" in e.selected_by}
    assert algorithm_set("simgrid") == chosen and chosen["alltoall"] == "ompi"
    with pytest.raises(CollectiveError, match="collective 'allscatter' is unknown"):
        CollectiveAlgorithm("allscatter", "ring", bcast_linear)
    twin = register_algorithm(CollectiveAlgorithm("bcast", "other", bcast_linear, ("simgrid",)))
    try:
        with pytest.raises(CollectiveError, match="selects two bcast algorithms"):
            algorithm_set("simgrid")
    finally:
        ALGORITHM_REGISTRY.unregister(twin.name)
