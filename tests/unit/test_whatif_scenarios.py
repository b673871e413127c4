"""What-if scenarios: parsing, typed errors naming the bad part, applying them."""

from __future__ import annotations

import pytest

from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.run import ReplaySetup
from mpiuq.simulator.replay.scenarios import ScenarioError, parse_scenario


def test_parameter_edits_scale_divide_and_set() -> None:
    s = parse_scenario("mix: link_bw_GBps*=2, post_header_delay_us/=4, hop_latency_ns=50")
    p = s.apply_params(SimParams())
    base = SimParams()
    assert p.link_bw_GBps == 2 * base.link_bw_GBps
    assert p.post_header_delay_us == base.post_header_delay_us / 4
    assert p.hop_latency_ns == 50.0
    assert p.injection_bw_GBps == base.injection_bw_GBps


def test_settings_topology_keeps_its_commas_and_model_replaces_the_models() -> None:
    s = parse_scenario("fat=topology=fattree:k=4,levels=3, model=packet, allreduce=ring, hops=3")
    assert s.name == "fat"
    assert dict(s.settings)["topology"] == "fattree:k=4,levels=3"
    setup = s.apply_setup(ReplaySetup(models=("analytic",), algorithms=(("barrier", "linear"),)))
    assert setup.models == ("packet",) and setup.topology == "fattree:k=4,levels=3"
    assert dict(setup.algorithms) == {"allreduce": "ring", "barrier": "linear"}
    assert setup.hops == 3


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("net2x", r"scenario 'net2x': 'net2x' is invalid: expected NAME: ITEM"),
        ("n: link_bw*=2", r"'link_bw\*=2' is invalid: expected NAME\*=F.*a parameter"),
        ("n: link_bw_GBps*=-1", r"'link_bw_GBps\*=-1' is invalid: expected a positive finite"),
        ("n: link_bw_GBps*=x", r"'link_bw_GBps\*=x' is invalid"),
        ("n: model=ethernet", r"'model=ethernet' is invalid: expected model one of"),
        ("n: topology=torus:k=2", r"'topology=torus:k=2' is invalid: expected a topology spec"),
        ("n: allreduce=bogus", r"'allreduce=bogus' is invalid: expected algorithm 'bogus'"),
        ("n: hops*=2", r"'hops\*=2' is invalid: expected hops=VALUE"),
        ("n: placement=diagonal", r"expected placement one of"),
        ("n: link_bw_GBps*=2,,", r"expected no empty item"),
        ("bad name!: link_bw_GBps*=2", r"'bad name!' is invalid: expected a name"),
        ("n: model=packet, model=analytic", r"expected model set once"),
    ],
)
def test_bad_scenarios_name_the_text_the_part_and_what_is_expected(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_scenario(text)


def test_an_edit_giving_an_invalid_parameter_is_refused_when_applied() -> None:
    s = parse_scenario("odd: eager_max_bytes*=0.3333")
    with pytest.raises(ScenarioError, match=r"eager_max_bytes\*=0.3333.*whole number"):
        s.apply_params(SimParams())


def test_regime_costs_are_scaled_like_parameters() -> None:
    """A stack halved in every receive overhead: ``regime<k>_<cost>`` edits the regime
    table of every parameter set (the former name ``latency_us`` is read too)."""
    from mpiuq.simulator.regimes import Regime

    p = SimParams(
        regimes=(
            Regime("mailbox", 4096, recv_overhead_us=0.8, send_overhead_us=0.2),
            Regime("rendezvous", recv_overhead_us=2.0),
        )
    )
    s = parse_scenario(
        "stack/2: post_header_delay_us*=0.5, regime0_recv_overhead_us*=0.5, "
        "regime1_recv_overhead_us/=2, regime0_latency_us*=0.5"
    )
    q = s.apply_params(p)
    assert [r.recv_overhead_us for r in q.regimes] == [0.4, 1.0]
    assert q.regimes[0].send_overhead_us == 0.1
    assert q.post_header_delay_us == p.post_header_delay_us / 2
    with pytest.raises(ScenarioError, match=r"regime5_recv_overhead_us.*one of the 2 regimes"):
        parse_scenario("x: regime5_recv_overhead_us*=2").apply_params(p)


def test_regime_slots_are_edited_like_param_and_keep_the_table_names() -> None:
    from mpiuq.simulator.regimes import Regime

    table = (
        Regime("mailbox", 128, name="inline"),
        Regime("mailbox", 8192, name="bcopy", send_overhead_us=0.75),
        Regime("rendezvous"),
    )
    s = parse_scenario("lat: regime1_latency_us*=2, regime0_max_bytes=256")
    p = s.apply_params(SimParams(regimes=table))
    assert [r.label for r in p.regimes] == ["inline", "bcopy", "rendezvous"]
    assert p.regimes[1].send_overhead_us == 1.5 and p.regimes[0].max_bytes == 256
    assert (
        parse_scenario("z: regime1_latency_us=0")
        .apply_params(SimParams(regimes=table))
        .regimes[1]
        .send_overhead_us
        == 0.0
    )
    with pytest.raises(ScenarioError, match=r"regime5_latency_us.*a slot of one of the 3 regimes"):
        parse_scenario("far: regime5_latency_us=1").apply_params(SimParams(regimes=table))


@pytest.mark.parametrize(
    "text", ["t: link_bw_GBps=1_0", "t: link_bw_GBps*=0x10", "t: link_bw_GBps=nan"]
)
def test_numbers_are_plain_decimals(text: str) -> None:
    """``1_0`` is not read as 10 (Python's float() would), nor hex or nan."""
    with pytest.raises(ScenarioError, match=r"plain decimal number"):
        parse_scenario(text)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "tiny: injection_bw_GBps*=1e-300",
            r"injection_bw_GBps=.* is invalid: expected a number in \[1e-06, 1e\+06\] GB/s",
        ),
        (
            "huge: eager_max_bytes*=1e9",
            r"eager_max_bytes=.* is invalid: expected a number in \[1, 1\.09951e\+12\] B",
        ),
        (
            "slot: regime1_latency_us=1e7",
            r"regime1_latency_us=1e\+?0?7.* is invalid: expected a number in \[0, 1e\+06\] us",
        ),
    ],
)
def test_edits_giving_absurd_values_are_refused_by_the_range_check(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_scenario(text).apply_params(SimParams())
