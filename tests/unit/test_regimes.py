"""Protocol regimes as data: the default table is the two-threshold model, tables round-trip
through the parameter vector and --param slots, and bad tables (unordered thresholds,
unknown protocols, a regime missing a parameter it needs) name key, value and what is
allowed, in SimParams and in campaign files."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.config import parse_campaign, read_toml
from mpiuq.calibration.errors import CampaignError
from mpiuq.simulator.benchmarks.run import BenchmarkModel, simulate_benchmark
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import SimParams, params_matrix
from mpiuq.simulator.regimes import Regime, default_regimes, flatten

SIZES = (1, 150, 151, 4096, 17408, 17409, 1 << 20)


def test_default_table_is_the_two_threshold_model() -> None:
    p = SimParams(small_max_bytes=150, eager_max_bytes=17408)
    assert p.regime_table() == default_regimes(150, 17408)
    assert [p.protocol_of(s) for s in SIZES] == [
        "small",
        "small",
        "eager",
        "eager",
        "eager",
        "rendezvous",
        "rendezvous",
    ]
    explicit = SimParams(
        regimes=(Regime("mailbox", 150), Regime("eager", 17408), Regime("rendezvous"))
    )
    assert (explicit.small_max_bytes, explicit.eager_max_bytes) == (150, 17408)
    a = simulate_benchmark("pingpong", SIZES, p).time_us
    b = simulate_benchmark("pingpong", SIZES, explicit).time_us
    np.testing.assert_array_equal(a, b)  # bit for bit


def test_table_round_trips_through_the_vector_and_slots() -> None:
    table = (
        Regime("mailbox", 136, name="inline"),
        Regime("eager", 12288, send_overhead_us=0.4, copy_bw_GBps=6.0),
        Regime("stream_rendezvous", 262144, segment_us=0.0),
        Regime("rendezvous"),
    )
    p = SimParams(regimes=table)
    d = p.as_dict()
    assert d["regime1_send_overhead_us"] == 0.4 and d["regime3_max_bytes"] == math.inf
    assert d["regime2_protocol"] == 4.0  # the protocol's code
    # the vector carries every number of the table; names are report labels only
    unnamed = tuple(replace(r, name="") for r in p.regimes)
    assert SimParams.from_mapping(d) == replace(p, regimes=unnamed)
    q = SimParams.from_mapping({"regime1_send_overhead_us": 0.7}, base=p)
    assert q.regimes[1].send_overhead_us == 0.7 and q.regimes[0].label == "inline"
    assert [q.protocol_of(s) for s in (100, 200, 20000, 300000)] == [
        "inline",
        "eager",
        "stream_rendezvous",
        "rendezvous",
    ]
    m = params_matrix(p, ("regime1_send_overhead_us", "link_bw_GBps"), [[0.1, 5.0], [0.2, 6.0]])
    names = list(d)
    assert m[:, names.index("regime1_send_overhead_us")].tolist() == [0.1, 0.2]
    assert flatten(p.regimes)["regime0_max_bytes"] == 136.0


@pytest.mark.parametrize(
    ("regimes", "name", "match"),
    [
        (
            (Regime("mailbox", 4096), Regime("eager", 1024), Regime("rendezvous")),
            "regime1_max_bytes",
            r"above the previous regime's 4096 \(thresholds strictly increasing\)",
        ),
        ((Regime("udp", 4096), Regime("rendezvous")), "regime0_protocol", "one of \\['mailbox'"),
        ((Regime("mailbox", 4096), Regime("eager", 8192)), "regime1_max_bytes", "no bound"),
        (
            (Regime("mailbox", 4096, send_overhead_us=-1.0), Regime("eager")),
            "regime0_send_overhead_us",
            r"in \[0, 1e\+06\]",
        ),
        (
            (Regime("eager", 4096), Regime("eager")),
            "regime1_name",
            "a name not used by another regime",
        ),
    ],
)
def test_bad_tables_name_the_slot_value_and_what_is_allowed(
    regimes: tuple[Regime, ...], name: str, match: str
) -> None:
    with pytest.raises(ParameterError, match=match) as err:
        SimParams(regimes=regimes)
    assert err.value.name == name


def test_slots_of_missing_regimes_and_contradicting_thresholds_are_refused() -> None:
    with pytest.raises(ParameterError, match="a slot of one of the 3 regimes"):
        SimParams.from_mapping({"regime4_send_overhead_us": 0.1})
    p = SimParams(regimes=(Regime("mailbox", 150), Regime("eager", 17408), Regime("rendezvous")))
    with pytest.raises(ParameterError, match="the explicit regime table sets the thresholds"):
        SimParams.from_mapping({"small_max_bytes": 1024}, base=p)
    with pytest.raises(ParameterError, match="regime0_max_bytes"):
        BenchmarkModel("pingpong", (1,), ("regime0_max_bytes",), base=p)(np.array([[100.0]]))


CAMPAIGN = """
name = "regimes"
seed = 1
[simulator]
{regimes}
[parameters]
{parameters}
[data]
path = "d.csv"
benchmark = "pingpong_half_rtt"
sizes = [1, 1000]
"""


def _campaign(tmp_path: Path, regimes: str, parameters: str = "link_bw_GBps = [1.0, 10.0]"):  # type: ignore[no-untyped-def]
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(regimes=regimes, parameters=parameters))
    return parse_campaign(read_toml(path), base_dir=tmp_path)


def test_campaign_regimes_fixed_and_calibrated(tmp_path: Path) -> None:
    c = _campaign(
        tmp_path,
        """
[[simulator.regimes]]
protocol = "stream"
max_bytes = 65536
segment_us = [0.05, 2.0]
send_overhead_us = 1.5
[[simulator.regimes]]
protocol = "stream_rendezvous"
segment_us = [0.05, 2.0]
""",
    )
    assert c.parameters.names == ("link_bw_GBps", "regime0_segment_us", "regime1_segment_us")
    assert c.parameters.lower[1:] == (0.05, 0.05)
    table = c.simulator.base_params().regime_table()
    assert [r.protocol for r in table] == ["stream", "stream_rendezvous"]
    assert table[0].send_overhead_us == 1.5 and table[0].segment_bytes == 1448


@pytest.mark.parametrize(
    ("regimes", "parameters", "key", "match"),
    [
        (
            '[[simulator.regimes]]\nprotocol = "mailbox"\nmax_bytes = 9000\n'
            '[[simulator.regimes]]\nprotocol = "eager"\nmax_bytes = 100\n'
            '[[simulator.regimes]]\nprotocol = "rendezvous"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.regimes[1].max_bytes",
            "thresholds strictly increasing",
        ),
        (
            '[[simulator.regimes]]\nprotocol = "infiniband"\nmax_bytes = 9000\n'
            '[[simulator.regimes]]\nprotocol = "rendezvous"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.regimes[0].protocol",
            "one of \\['mailbox', 'eager', 'rendezvous', 'stream', 'stream_rendezvous', 'detached'\\]",
        ),
        (
            '[[simulator.regimes]]\nprotocol = "stream"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.regimes[0].segment_us",
            "host cost per segment, which no global parameter provides",
        ),
        (
            '[[simulator.regimes]]\nprotocol = "stream"\nmax_bytes = 100\nsegment_us = 0.2\n'
            '[[simulator.regimes]]\nprotocol = "stream_rendezvous"\nsegment_us = 0.2\n',
            "rdma_pin_latency_us = [1.0, 10.0]",
            "parameters.rdma_pin_latency_us",
            "a parameter some regime uses",
        ),
        (
            '[[simulator.regimes]]\nprotocol = "mailbox"\n'
            '[[simulator.regimes]]\nprotocol = "rendezvous"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.regimes[0].max_bytes",
            "the regime's largest message size",
        ),
        (
            '[[simulator.regimes]]\nprotocol = "mailbox"\nmax_bytes = 64\nsend_overhead_us = [2.0, 1.0]\n'
            '[[simulator.regimes]]\nprotocol = "rendezvous"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.regimes[0].send_overhead_us",
            "0 <= low < high",
        ),
        (
            "[simulator.fixed]\nsmall_max_bytes = 100\n"
            '[[simulator.regimes]]\nprotocol = "mailbox"\nmax_bytes = 64\n'
            '[[simulator.regimes]]\nprotocol = "rendezvous"\n',
            "link_bw_GBps = [1.0, 10.0]",
            "simulator.fixed.small_max_bytes",
            "no value with \\[\\[simulator.regimes\\]\\]",
        ),
    ],
)
def test_bad_campaign_regimes_name_key_value_and_what_is_allowed(
    tmp_path: Path, regimes: str, parameters: str, key: str, match: str
) -> None:
    with pytest.raises(CampaignError, match=match) as err:
        _campaign(tmp_path, regimes, parameters)
    assert err.value.key == key


def test_parameter_files_and_param_assignments_carry_the_regimes(tmp_path: Path) -> None:
    from mpiuq.calibration.config import load_parameter_file
    from mpiuq.commands.arguments import parse_assignments

    path = tmp_path / "c.toml"
    path.write_text(
        '[simulator]\n[[simulator.regimes]]\nprotocol = "mailbox"\nmax_bytes = 150\n'
        '[[simulator.regimes]]\nprotocol = "eager"\nmax_bytes = 17408\nsend_overhead_us = 0.25\n'
        '[[simulator.regimes]]\nprotocol = "rendezvous"\n'
    )
    values = dict(load_parameter_file(path).values)
    values.update(parse_assignments(["regime1_copy_bw_GBps=4", "regime2_protocol=rendezvous"]))
    p = SimParams.from_mapping(values)
    assert [r.protocol for r in p.regimes] == ["mailbox", "eager", "rendezvous"]
    assert p.regimes[1].send_overhead_us == 0.25 and p.regimes[1].copy_bw_GBps == 4.0
    path.write_text(
        path.read_text().replace("send_overhead_us = 0.25", "send_overhead_us = [0.1, 0.5]")
    )
    with pytest.raises(CampaignError, match="pass --param regime1_send_overhead_us=VALUE"):
        load_parameter_file(path)


def test_a_table_from_slots_names_a_second_regime_of_a_protocol_by_its_index() -> None:
    """Slots (a posterior's draws, --param) carry no names: two eager regimes are
    'eager' and 'eager_1' (by index), not a duplicate name."""
    p = SimParams.from_mapping(
        {
            "regime0_protocol": 1,
            "regime0_max_bytes": 5000,
            "regime1_protocol": 1,
            "regime1_max_bytes": 17408,
            "regime2_protocol": 2,
        }
    )
    assert [r.label for r in p.regime_table()] == ["eager", "eager_1", "rendezvous"]
