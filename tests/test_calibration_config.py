"""Campaign file validation: every bad key or value names the key, the value and what is allowed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mpiuq.calibration.config import load_campaign, parse_campaign
from mpiuq.calibration.errors import CampaignError

GOOD: dict[str, Any] = {
    "name": "t",
    "seed": 3,
    "simulator": {"benchmark": "pingpong", "fixed": {"eager_max_bytes": 17408}},
    "parameters": {"post_header_delay_us": [0.1, 1.5], "memory_bw_GBps": [2.0, 12.0]},
    "data": {"path": "data.csv", "benchmark": "pingpong_half_rtt", "sizes": [1, 1024]},
    "surrogate": {"level": 3, "order": 3},
    "calibration": {"walkers": 8, "nominal": {"memory_bw_GBps": 5.0}},
}


def _with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(GOOD)
    t = raw
    for k in path[:-1]:
        t = t.setdefault(k, {})
    if value is _DELETE:
        del t[path[-1]]
    else:
        t[path[-1]] = value
    return raw


_DELETE = object()


def test_good_campaign_loads_with_defaults_and_nominal(tmp_path: Path) -> None:
    c = parse_campaign(GOOD, tmp_path)
    assert c.parameters.names == ("post_header_delay_us", "memory_bw_GBps")
    assert c.parameters.nominal == (0.8, 5.0)  # prior midpoint, then configured nominal
    assert c.data.path == (tmp_path / "data.csv").resolve()
    assert c.simulator.base_params().eager_max_bytes == 17408
    assert c.calibration.grouping == "sobol"
    assert c.calibration.target_rhat == 1.01
    assert c.executor.workers == 0


def test_load_from_file_resolves_data_relative_to_campaign(tmp_path: Path) -> None:
    f = tmp_path / "sub" / "c.toml"
    f.parent.mkdir()
    f.write_text(
        'name = "x"\nseed = 1\n[simulator]\nbenchmark = "stream"\n'
        "[parameters]\nlink_bw_GBps = [1.0, 9.0]\n"
        '[data]\npath = "../d.csv"\nbenchmark = "stream_bw"\nsizes_per_protocol = 3\n'
    )
    c = load_campaign(f)
    assert c.data.path == (tmp_path / "d.csv").resolve()
    assert c.data.sizes_per_protocol == 3 and c.data.sizes is None
    assert c.simulator.benchmark == "stream"


@pytest.mark.parametrize(
    ("path", "value", "pattern"),
    [
        (("simulator", "benchmark"), "allreduce", r"'simulator.benchmark' = 'allreduce'.*pingpong"),
        (("parameters", "bogus_bw"), [1.0, 2.0], r"'parameters.bogus_bw'.*one of"),
        (("parameters", "memory_bw_GBps"), [5.0, 2.0], r"'parameters.memory_bw_GBps'.*low < high"),
        (("parameters", "memory_bw_GBps"), [5.0], r"\[low, high\]"),
        (("simulator", "fixed", "eager_max_bytes"), -3, r"'simulator.fixed.eager_max_bytes' = -3"),
        (("simulator", "fixed", "nonsense"), 1, r"'simulator.fixed.nonsense'"),
        (("simulator", "fixed", "memory_bw_GBps"), 3.0, r"not also listed"),
        (("data", "observable"), "latency", r"'data.observable' = 'latency'.*time_us"),
        (("data", "sizes"), [1, -5], r"'data.sizes'.*positive integers"),
        (("data", "sizes_per_protocol"), 3, r"exactly one of"),
        (("data", "path"), _DELETE, r"'data.path' = '\(missing\)'"),
        (("calibration", "walkers"), 3, r"'calibration.walkers' = 3.*>= 4"),
        (("calibration", "grouping"), "magic", r"'calibration.grouping' = 'magic'"),
        (("calibration", "target_rhat"), 0.9, r"'calibration.target_rhat' = 0.9.*\[1.0, 2.0\]"),
        (("calibration", "nominal", "memory_bw_GBps"), 50.0, r"within the prior \[2.0, 12.0\]"),
        (("calibration", "steps_typo"), 5, r"'calibration.steps_typo'.*one of the keys"),
        (("surrogate", "level"), 0, r"'surrogate.level' = 0"),
        (("executor", "workers"), -1, r"'executor.workers' = -1"),
        (("seed",), "one", r"'seed' = 'one'"),
        (("name",), "a/b", r"'name' = 'a/b'"),
        (("extra",), 1, r"'extra'.*one of the keys"),
    ],
)
def test_bad_values_name_key_value_and_allowed(
    tmp_path: Path, path: tuple[str, ...], value: Any, pattern: str
) -> None:
    with pytest.raises(CampaignError, match=pattern):
        parse_campaign(_with(path, value), tmp_path)


def test_invalid_toml_is_a_campaign_error(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("name = \n")
    with pytest.raises(CampaignError, match="valid TOML"):
        load_campaign(f)


def test_campaign_is_immutable(tmp_path: Path) -> None:
    c = parse_campaign(GOOD, tmp_path)
    with pytest.raises(AttributeError):
        c.seed = 5  # type: ignore[misc]
