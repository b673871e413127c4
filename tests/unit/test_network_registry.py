"""The network-model registry and what is generated from it.

The checked-in generated texts (the codes block, the compiled dispatch, the docs'
table) must equal what the registry generates; the names, codes, platform models and
cost order other modules read must follow the entries; a model registered after the
generation works in Python but is refused by the kernel with a message saying what to
run; a generated dispatch of an added model calls its unit under its new code.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mpiuq.simulator import codes
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks import network_arrays, network_by_name
from mpiuq.simulator.networks.generate import (
    codes_block,
    collect,
    dispatch_source,
    docs_table,
    generated_files,
    stale_files,
)
from mpiuq.simulator.networks.registry import (
    NETWORK_REGISTRY,
    NetworkModelEntry,
    model_code,
    register_network,
)
from mpiuq.simulator.replay.run import COST_ORDER
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies import make_topology
from mpiuq.simulator.topologies.zone import crossbar_zone

ROOT = Path(__file__).resolve().parents[2]


def test_generated_texts_are_up_to_date() -> None:
    files = generated_files(collect(), ROOT / "simulator", ROOT / "docs")
    assert {p.name for p in files} == {"codes.py", "_dispatch.py", "extending-simulator.md"}
    stale = stale_files(files)
    assert not stale, f"{stale} out of date: run python -m mpiuq.generate_networks"


def test_codes_follow_the_entries() -> None:
    entries = collect()
    assert tuple(e.name for e in entries) == codes.NETWORK_MODELS
    assert tuple(e.model.__module__ for e in entries) == codes.NETWORK_MODULES
    assert set(codes.PLATFORM_MODELS) == {e.name for e in entries if e.on_platform}
    ranks = [NETWORK_REGISTRY.get(n).cost_rank for n in COST_ORDER]
    assert COST_ORDER == codes.NETWORK_COST_ORDER and ranks == sorted(ranks)
    assert (model_code("packet"), model_code("flow")) == (codes.NET_PACKET, codes.NET_FLOW)
    topo = make_topology("crossbar:nodes=2")
    for e in entries:
        model = network_by_name(e.name, topology=topo)
        assert isinstance(model, e.model)
        assert model.name == e.name and model.kind == codes.NETWORK_MODELS.index(e.name)
        assert network_arrays(model, 2).kind == model.kind
        assert (e.start is None) == e.kernel_events


def test_network_by_name_validates_names_options_and_topologies() -> None:
    with pytest.raises(SettingError, match=r"network model 'torus' is unknown: expected one of"):
        network_by_name("torus")
    with pytest.raises(SettingError, match=r"options \['bogus'\] are unknown.*'analytic' \[\]"):
        network_by_name("analytic", bogus=1)
    # another model's option is ignored (a replay passes the flow options to every model)
    assert network_by_name("analytic", hops=3, zero_overhead=True).hops == 3
    with pytest.raises(SettingError, match="packet_bytes=0 is invalid"):
        network_by_name("packet", topology=make_topology("crossbar:nodes=2"), packet_bytes=0)
    zone = crossbar_zone(4, 2)
    for name in ("analytic", "packet"):
        with pytest.raises(SettingError, match=f"'{name}' runs on mpiuq topologies"):
            network_by_name(name, topology=zone)
    for name in codes.PLATFORM_MODELS:  # the models that run on a platform take its zone
        assert network_by_name(name, topology=zone).name == name


def test_an_entry_has_a_unit_or_kernel_events() -> None:
    with pytest.raises(SettingError, match="exactly one of a compiled start unit"):
        NetworkModelEntry("x", "x", object, lambda h, t, o: None)  # type: ignore[arg-type,return-value]


@dataclass(frozen=True, slots=True)
class _Late:
    hops: int = 2

    @property
    def name(self) -> str:
        return "late-wire"

    @property
    def kind(self) -> int:
        return model_code("late-wire")

    @property
    def zero_overhead(self) -> bool:
        return False


@njit(inline="always", error_model="numpy")
def late_arrival(t, a, b, nbytes, flow, state, rates, tables):  # type: ignore[no-untyped-def]
    return t + rates.alpha + nbytes * rates.inv_min


def _build_late(hops: int, topology: object, options: Mapping[str, Any]) -> _Late:
    return _Late(hops=hops)


@pytest.fixture
def late() -> Iterator[NetworkModelEntry]:
    entry = register_network(
        NetworkModelEntry("late-wire", "registered late", _Late, _build_late, start=late_arrival)
    )
    try:
        yield entry
    finally:
        NETWORK_REGISTRY.unregister("late-wire")


def test_a_model_registered_late_is_refused_by_the_kernel(late: NetworkModelEntry) -> None:
    model = network_by_name("late-wire", hops=3)
    assert model == _Late(hops=3)
    with pytest.raises(SettingError, match=r"'late-wire' is not compiled.*generate_networks"):
        network_arrays(model, 2)


def test_generating_with_an_added_model(late: NetworkModelEntry) -> None:
    entries = collect()
    assert [e.name for e in entries] == [*codes.NETWORK_MODELS, "late-wire"]
    block = codes_block(entries)
    assert '"flow", "late-wire")' in block and "test_network_registry" in block
    source = dispatch_source(entries)
    assert f"from {__name__} import late_arrival as _start_4" in source
    # every unit but the last is one `if` on its code; flow (kernel events) has none
    assert "if kind == 2:  # packet" in source and "kind == 3" not in source
    assert source.rstrip().endswith(
        "return _start_4(t, a, b, nbytes, flow, state, rates, net.tables)  # late-wire"
    )
    compile(source, "_dispatch.py", "exec")
    assert "| `late-wire` | 4 |" in docs_table(entries)
