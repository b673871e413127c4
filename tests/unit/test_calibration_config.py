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
    assert c.datasets[0].path == (tmp_path / "data.csv").resolve()
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
    assert c.datasets[0].path == (tmp_path / "d.csv").resolve()
    assert c.datasets[0].sizes_per_protocol == 3 and c.datasets[0].sizes is None
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


def test_honest_sections_default_and_parse(tmp_path: Path) -> None:
    c = parse_campaign(GOOD, tmp_path)
    assert (c.refinement.rounds, c.refinement.target_rhat) == (2, 1.05)
    assert (c.exact.draws, c.exact.move_steps) == (2000, 20)
    assert c.discrepancy.model == "none" and c.checks.max_khat == 0.7
    raw = copy.deepcopy(GOOD)
    raw["refinement"] = {"rounds": 0, "level": 2, "order": 2, "max_steps": 5000}
    raw["exact"] = {"draws": 500, "proposal_draws": 800, "move_steps": 0}
    raw["discrepancy"] = {"model": "regime", "sd_rel": 0.1, "bias_rel": 0.05, "compare": False}
    raw["checks"] = {"max_surrogate_error_sd": 0.5, "coverage_alpha": 0.05}
    c = parse_campaign(raw, tmp_path)
    assert (c.refinement.rounds, c.refinement.level, c.refinement.max_steps) == (0, 2, 5000)
    assert (c.exact.draws, c.exact.proposal_draws) == (500, 800)
    assert (c.discrepancy.sd_rel, c.discrepancy.bias_rel, c.discrepancy.compare) == (
        0.1,
        0.05,
        False,
    )
    assert c.checks.max_surrogate_error_sd == 0.5 and c.checks.coverage_alpha == 0.05


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        (
            ("discrepancy", "model"),
            "gp",
            r"'discrepancy\.model' = 'gp'.*one of \['none', 'regime'\]",
        ),
        (("discrepancy", "sd_rel"), 0.0, r"'discrepancy\.sd_rel' = 0\.0.*bias_rel > 0"),
        (("discrepancy", "bias_rel"), -0.1, r"'discrepancy\.bias_rel' = -0\.1.*in \[0\.0, 1\.0\]"),
        (("refinement", "max_steps"), 10, r"'refinement\.max_steps' = 10.*integer >= 800"),
        (("refinement", "rounds"), -1, r"'refinement\.rounds' = -1"),
        (("refinement", "width"), 1, r"'refinement\.width'.*one of the keys"),
        (("exact", "proposal_draws"), 50, r"'exact\.proposal_draws' = 50.*integer >= 2000"),
        (("checks", "max_khat"), -0.5, r"'checks\.max_khat' = -0\.5"),
        (("calibration", "compare_joint"), True, r"'calibration\.compare_joint'.*one of the keys"),
    ],
)
def test_honest_section_errors_name_the_key(
    tmp_path: Path, path: tuple[str, ...], value: Any, match: str
) -> None:
    raw = _with(path, value)
    if path[0] == "discrepancy" and path[1] != "model":
        raw["discrepancy"]["model"] = "regime"
    with pytest.raises(CampaignError, match=match):
        parse_campaign(raw, tmp_path)


def test_posterior_section_defaults_and_exchangeable_groups(tmp_path: Path) -> None:
    c = parse_campaign(GOOD, tmp_path)
    assert (c.posterior.sampler, c.posterior.exchangeable) == ("auto", ())
    raw = copy.deepcopy(GOOD)
    raw["parameters"] = {"injection_bw_GBps": [3.0, 8.0], "link_bw_GBps": [3.0, 8.0]}
    raw["calibration"] = {"walkers": 8}
    raw["posterior"] = {
        "sampler": "direct",
        "exchangeable": [["injection_bw_GBps", "link_bw_GBps"]],
    }
    c = parse_campaign(raw, tmp_path)
    assert c.posterior.sampler == "direct"
    assert c.posterior.exchangeable == (("injection_bw_GBps", "link_bw_GBps"),)


@pytest.mark.parametrize(
    ("table", "match"),
    [
        (
            {"sampler": "smc"},
            r"'posterior\.sampler' = 'smc'.*one of \['auto', 'direct', 'surrogate'\]",
        ),
        ({"walkers": 7}, r"'posterior\.walkers' = 7.*even number"),
        ({"populations": 1}, r"'posterior\.populations' = 1.*integer >= 2"),
        ({"exchangeable": ["a", "b"]}, r"'posterior\.exchangeable'.*list of lists"),
        ({"exchangeable": [["memory_bw_GBps"]]}, r"exchangeable\[0\]'.*at least two distinct"),
        ({"exchangeable": [["memory_bw_GBps", "x"]]}, r"exchangeable\[0\]' = 'x'.*one of"),
        (
            {"exchangeable": [["memory_bw_GBps", "post_header_delay_us"]]},
            r"exchangeable\[0\]'.*same prior range",
        ),
        ({"max_steps": 10**7, "walkers": 10**5}, r"'posterior\.max_steps'.*stored chains"),
    ],
)
def test_posterior_section_errors_name_the_key(
    tmp_path: Path, table: dict[str, Any], match: str
) -> None:
    raw = copy.deepcopy(GOOD)
    raw["posterior"] = table
    with pytest.raises(CampaignError, match=match):
        parse_campaign(raw, tmp_path)
