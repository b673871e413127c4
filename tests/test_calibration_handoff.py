"""The file edges of the calibration layer: parameter files, benchmark CSV, calibrated values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.benchmark_csv import Measurements, read_benchmark_csv, write_benchmark_csv
from mpiuq.calibration.calibrated import (
    CalibratedParametersError,
    load_calibrated,
    load_posterior_draws,
)
from mpiuq.calibration.config import load_parameter_file
from mpiuq.calibration.errors import CampaignError, DataError
from mpiuq.calibration.synthetic_data import synthetic_measurements
from mpiuq.simulator.benchmarks import simulate_benchmark
from mpiuq.simulator.parameters import SimParams

ROOT = Path(__file__).resolve().parents[1]


def test_parameter_file_reads_a_campaign_simulator_table() -> None:
    f = load_parameter_file(ROOT / "experiments" / "stampede-ib-pingpong.toml")
    assert f.benchmark == "pingpong"
    assert dict(f.values)["eager_max_bytes"] == 17408


def test_parameter_file_flat_table(tmp_path: Path) -> None:
    p = tmp_path / "p.toml"
    p.write_text("link_bw_GBps = 4.5\nsmall_max_bytes = 128\n")
    f = load_parameter_file(p)
    assert f.values == (("link_bw_GBps", 4.5), ("small_max_bytes", 128))
    assert f.benchmark is None and f.window is None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("link_bw = 4.5\n", "'link_bw' = 4.5 is invalid: expected a simulator parameter"),
        ("link_bw_GBps = 'fast'\n", "'link_bw_GBps' = 'fast' is invalid: expected a number"),
        ("[simulator]\nbenchmark = 'allreduce'\n", "simulator.benchmark"),
        ("[simulator.fixed]\nlink_bw_GBps = -1.0\n", "simulator.fixed.link_bw_GBps"),
        ("link_bw_GBps = \n", "valid TOML"),
    ],
)
def test_parameter_file_errors_name_the_key(tmp_path: Path, text: str, match: str) -> None:
    p = tmp_path / "p.toml"
    p.write_text(text)
    with pytest.raises(CampaignError, match=match):
        load_parameter_file(p)


def test_parameter_file_that_is_not_text(tmp_path: Path) -> None:
    p = tmp_path / "p.toml"
    p.write_bytes(b"\x89HDF\r\n\x1a\n\xff\xfe")
    with pytest.raises(CampaignError, match=r"p\.toml.*UTF-8"):
        load_parameter_file(p)


def test_benchmark_csv_round_trip(tmp_path: Path) -> None:
    m = Measurements(
        run=np.array([0, 1, 0, 1]),
        size_bytes=np.array([1, 1, 4096, 4096]),
        value=np.array([1.25, 1.5, 3.0, 3.125]),
        unit="us",
        benchmark="pingpong_half_rtt",
    )
    assert write_benchmark_csv(tmp_path / "d.csv", m) == 4
    back = read_benchmark_csv(tmp_path / "d.csv", "pingpong_half_rtt")
    for name in ("run", "size_bytes", "value"):
        np.testing.assert_array_equal(getattr(back, name), getattr(m, name))
    assert (back.unit, back.benchmark) == ("us", "pingpong_half_rtt")


def test_synthetic_measurements_have_the_requested_mean_and_cv() -> None:
    result = simulate_benchmark("pingpong", [8, 1 << 20], SimParams())
    m = synthetic_measurements(result, 20000, 0.05, np.random.default_rng(3))
    assert m.unit == "us" and m.benchmark == "pingpong_half_rtt"
    for j, size in enumerate((8, 1 << 20)):
        v = m.value[m.size_bytes == size]
        # mean-preserving log-normal noise: sample mean within 4 standard errors
        assert v.mean() == pytest.approx(result.time_us[j], abs=4 * 0.05 * result.time_us[j] / 141)
        assert v.std() / v.mean() == pytest.approx(0.05, rel=0.05)
    with pytest.raises(DataError, match="replicas=0 is invalid"):
        synthetic_measurements(result, 0, 0.05, np.random.default_rng(0))


def _summary(tmp_path: Path, **over: object) -> Path:
    data = {
        "name": "demo",
        "fixed": {"eager_max_bytes": 17408},
        "parameters": {"link_bw_GBps": {"median": 5.2, "map": 5.0, "mean": 5.5}},
        "map": {"unique": True, "reason": "6 starts agree"},
    }
    data.update(over)
    (tmp_path / "summary.json").write_text(json.dumps(data))
    return tmp_path


def test_load_calibrated_median_by_default_mean_and_unique_map(tmp_path: Path) -> None:
    folder = _summary(tmp_path)
    c = load_calibrated(folder)
    assert c.values() == {"eager_max_bytes": 17408.0, "link_bw_GBps": 5.2}
    assert c.campaign == "demo" and c.estimate == "median"
    assert load_calibrated(folder / "summary.json", "mean").values()["link_bw_GBps"] == 5.5
    assert load_calibrated(folder, "map").values()["link_bw_GBps"] == 5.0


def test_load_calibrated_refuses_a_map_that_is_not_unique(tmp_path: Path) -> None:
    folder = _summary(tmp_path, map={"unique": False, "reason": "disagree in link_bw_GBps"})
    with pytest.raises(CalibratedParametersError, match=r"MAP is not unique \(disagree in link"):
        load_calibrated(folder, "map")
    old = tmp_path / "old"
    old.mkdir()
    (old / "summary.json").write_text(json.dumps({"parameters": {"link_bw_GBps": {"map": 5.0}}}))
    with pytest.raises(CalibratedParametersError, match="not recorded"):
        load_calibrated(old, "map")


def _posterior_nc(path: Path, n: int = 50) -> Path:
    import arviz as az

    draws = np.arange(2.0 * n).reshape(2, n)
    idata = az.from_dict(posterior={"link_bw_GBps": draws[:1], "sd_rel_eager": draws[1:]})
    idata.posterior.attrs["model_parameters"] = json.dumps(["link_bw_GBps"])
    idata.posterior.attrs["fixed"] = json.dumps({"eager_max_bytes": 17408})
    idata.to_netcdf(str(path / "posterior.nc"))
    return path


def test_load_posterior_draws_picks_seeded_draws_of_model_parameters(tmp_path: Path) -> None:
    folder = _posterior_nc(tmp_path)
    d = load_posterior_draws(folder, 10, seed=3)
    assert d.names == ("link_bw_GBps",) and d.values.shape == (10, 1)
    assert set(d.values[:, 0]) <= set(np.arange(50.0))  # the model parameter, not sd_rel_eager
    assert len(set(d.values[:, 0])) == 10  # without replacement
    again = load_posterior_draws(folder / "posterior.nc", 10, seed=3)
    assert np.array_equal(d.values, again.values)
    assert d.mapping(0) == {"eager_max_bytes": 17408.0, "link_bw_GBps": float(d.values[0, 0])}
    more = load_posterior_draws(folder, 120, seed=1)
    assert more.values.shape == (120, 1) and set(more.values[:, 0]) == set(np.arange(50.0))


def test_load_posterior_draws_errors(tmp_path: Path) -> None:
    with pytest.raises(CalibratedParametersError, match="does not exist"):
        load_posterior_draws(tmp_path, 5)
    with pytest.raises(CalibratedParametersError, match="n_draws=0 is invalid"):
        load_posterior_draws(_posterior_nc(tmp_path), 0)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "posterior.nc").write_text("not netcdf")
    with pytest.raises(CalibratedParametersError, match="is not a campaign posterior"):
        load_posterior_draws(bad, 5)


def test_load_posterior_draws_refuses_draws_changed_since_their_run(tmp_path: Path) -> None:
    from mpiuq.calibration.artefacts import file_sha256

    folder = _posterior_nc(tmp_path)
    summary = {"run": {"files": {"posterior.nc": file_sha256(folder / "posterior.nc")}}}
    (folder / "summary.json").write_text(json.dumps(summary))
    load_posterior_draws(folder, 5)  # the draws the summary records
    _posterior_nc(folder, n=60)  # another run's draws under the same summary
    with pytest.raises(CalibratedParametersError, match=r"posterior.nc has changed since the run"):
        load_posterior_draws(folder, 5)


def test_committed_stampede_result_loads() -> None:
    c = load_calibrated(ROOT / "results" / "stampede-ib")
    SimParams.from_mapping(c.values())  # every value is a valid simulator parameter


def test_committed_stampede_draws_match_its_summary() -> None:
    """The committed draws file is the posterior the committed summary describes."""
    folder = ROOT / "results" / "stampede-ib"
    d = load_posterior_draws(folder, 2000, seed=0)
    assert d.source.name in ("posterior.nc", "posterior_draws.nc")
    c = load_calibrated(folder)
    assert d.fixed == c.fixed
    for j, name in enumerate(d.names):
        # the summary's median is the median of these 2000 draws, to rounding
        assert np.median(d.values[:, j]) == pytest.approx(dict(c.calibrated)[name], rel=1e-12)
    SimParams.from_mapping(d.mapping(0))


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("not json", "is not a campaign summary"),
        ('{"name": "x"}', "has no 'parameters' table"),
        ('{"parameters": {"link_bw_GBps": {"median": null}}}', r"parameters\.link_bw_GBps\.median"),
        ('{"parameters": {}, "fixed": {"hop_latency_ns": "x"}}', r"fixed\.hop_latency_ns"),
    ],
)
def test_load_calibrated_errors(tmp_path: Path, content: str, match: str) -> None:
    (tmp_path / "summary.json").write_text(content)
    with pytest.raises(CalibratedParametersError, match=match):
        load_calibrated(tmp_path)


def test_load_calibrated_missing_and_unknown_estimate(tmp_path: Path) -> None:
    with pytest.raises(CalibratedParametersError, match="does not exist"):
        load_calibrated(tmp_path)
    with pytest.raises(CalibratedParametersError, match="estimate 'mode' is unknown"):
        load_calibrated(_summary(tmp_path), "mode")
