"""The file edges of the calibration layer: parameter files, benchmark CSV, calibrated values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from shared_data import COMMITTED_CAMPAIGNS

from mpiuq.calibration.config import load_parameter_file
from mpiuq.calibration.data.benchmark_csv import (
    Measurements,
    read_benchmark_csv,
    write_benchmark_csv,
)
from mpiuq.calibration.data.synthetic_data import synthetic_measurements
from mpiuq.calibration.errors import CampaignError, DataError
from mpiuq.calibration.reporting.calibrated import (
    CalibratedParametersError,
    load_calibrated,
    load_posterior_draws,
)
from mpiuq.simulator.benchmarks.run import simulate_benchmark
from mpiuq.simulator.parameters import SimParams

ROOT = Path(__file__).resolve().parents[2]


def test_parameter_file_reads_a_campaign_simulator_table() -> None:
    f = load_parameter_file(ROOT / "experiments" / "stampede-ib.toml")
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


def _summary(tmp_path: Path, files: tuple[str, ...] = (), **over: object) -> Path:
    """A summary written as ``mpiuq campaign run`` writes it (with its hand-off record,
    listing the posterior ``files`` of the folder)."""
    from mpiuq.calibration.reporting.artefacts import write_summary

    data: dict[str, object] = {
        "name": "demo",
        "fixed": {"eager_max_bytes": 17408},
        "parameters": {"link_bw_GBps": {"median": 5.2, "map": 5.0, "mean": 5.5}},
        "map": {"unique": True, "reason": "6 starts agree"},
        "regimes": [],
    }
    data.update(over)
    write_summary(
        data, tmp_path, [tmp_path / f for f in files], fingerprint="fp-" + str(data["name"])
    )
    return tmp_path


def _edit_summary(folder: Path, change, reseal: bool = True) -> None:  # type: ignore[no-untyped-def]
    """Change a summary; ``reseal``: record the changed hand-off's own SHA-256 again (as a
    program rewriting it would), so the checks behind that digest are reached."""
    from mpiuq.calibration.reporting.handoff import _record_digest

    doc = json.loads((folder / "summary.json").read_text())
    change(doc)
    record = doc.get("handoff")
    if reseal and isinstance(record, dict):
        record["sha256"] = _record_digest({k: v for k, v in record.items() if k != "sha256"})
    (folder / "summary.json").write_text(json.dumps(doc))


def test_load_calibrated_median_by_default_mean_and_unique_map(tmp_path: Path) -> None:
    folder = _summary(tmp_path)
    c = load_calibrated(folder)
    assert c.values() == {"eager_max_bytes": 17408.0, "link_bw_GBps": 5.2}
    assert c.campaign == "demo" and c.estimate == "median"
    assert load_calibrated(folder / "summary.json", "mean").values()["link_bw_GBps"] == 5.5
    assert load_calibrated(folder, "map").values()["link_bw_GBps"] == 5.0
    assert c.params().link_bw_GBps == 5.2 and c.params().eager_max_bytes == 17408


def test_load_calibrated_refuses_a_map_that_is_not_unique(tmp_path: Path) -> None:
    folder = _summary(
        tmp_path,
        map={"unique": False, "reason": "disagree in link_bw_GBps"},
        parameters={"link_bw_GBps": {"median": 5.2, "map": None, "mean": 5.5}},
    )
    with pytest.raises(CalibratedParametersError, match=r"MAP is not unique \(disagree in link"):
        load_calibrated(folder, "map")


def _posterior_nc(path: Path, n: int = 50, scale: float = 1.0) -> Path:
    import arviz as az

    draws = np.arange(2.0 * n).reshape(2, n) * scale + 1.0
    idata = az.from_dict(posterior={"link_bw_GBps": draws[:1], "sd_rel_eager": draws[1:]})
    idata.posterior.attrs["model_parameters"] = json.dumps(["link_bw_GBps"])
    idata.posterior.attrs["fixed"] = json.dumps({"eager_max_bytes": 17408})
    idata.to_netcdf(str(path / "posterior.nc"))
    return path


def _with_draws(folder: Path, n: int = 50, scale: float = 1.0) -> Path:
    _posterior_nc(folder, n, scale)
    return _summary(folder, ("posterior.nc",))


def test_load_posterior_draws_picks_seeded_draws_of_model_parameters(tmp_path: Path) -> None:
    folder = _with_draws(tmp_path)
    d = load_posterior_draws(folder, 10, seed=3)
    assert d.names == ("link_bw_GBps",) and d.values.shape == (10, 1)
    assert set(d.values[:, 0]) <= set(np.arange(50.0) + 1)  # the model parameter only
    assert len(set(d.values[:, 0])) == 10  # without replacement
    again = load_posterior_draws(folder / "posterior.nc", 10, seed=3)
    assert np.array_equal(d.values, again.values)
    assert d.mapping(0) == {"eager_max_bytes": 17408.0, "link_bw_GBps": float(d.values[0, 0])}
    assert d.params(0).link_bw_GBps == float(d.values[0, 0])
    more = load_posterior_draws(folder, 120, seed=1)
    assert more.values.shape == (120, 1) and set(more.values[:, 0]) == set(np.arange(50.0) + 1)


def test_load_posterior_draws_errors(tmp_path: Path) -> None:
    with pytest.raises(CalibratedParametersError, match=r"does not exist.*--estimate median"):
        load_posterior_draws(tmp_path, 5)
    with pytest.raises(CalibratedParametersError, match="n_draws=0 is invalid"):
        load_posterior_draws(_with_draws(tmp_path), 0)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "posterior.nc").write_text("not netcdf")
    _summary(bad, ("posterior.nc",))
    with pytest.raises(CalibratedParametersError, match="is not a campaign posterior"):
        load_posterior_draws(bad, 5)


def test_load_posterior_draws_refuses_draws_changed_since_their_run(tmp_path: Path) -> None:
    folder = _with_draws(tmp_path)
    load_posterior_draws(folder, 5)  # the draws the summary records
    _posterior_nc(folder, n=60)  # another run's draws under the same summary
    with pytest.raises(CalibratedParametersError, match=r"posterior.nc has changed since the run"):
        load_posterior_draws(folder, 5)


def test_no_folder_state_skips_the_hand_off_check(tmp_path: Path) -> None:
    """Issue reproducers: the SHA-256 check was skipped when summary.json did not list the
    draws file or had no ``run`` key; a recorded hash of 12345 passed; another campaign's
    summary.json beside the draws was replayed."""
    folder = _summary(tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path)
    _posterior_nc(folder)  # draws the record does not list
    with pytest.raises(CalibratedParametersError, match=r"is not part of .*hand-off"):
        load_posterior_draws(folder, 5)
    listed = _with_draws(tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path)
    _edit_summary(listed, lambda d: d.pop("run"))
    with pytest.raises(CalibratedParametersError, match=r"record and the summary are of different"):
        load_posterior_draws(listed, 5)
    _with_draws(listed)
    _edit_summary(listed, lambda d: d["handoff"]["files"][0].update(sha256="12345"))
    with pytest.raises(CalibratedParametersError, match=r"handoff\.files\[0\].*64 hex digits"):
        load_posterior_draws(listed, 5)
    _edit_summary(listed, lambda d: d.pop("handoff"))
    with pytest.raises(CalibratedParametersError, match=r"handoff = None is invalid"):
        load_calibrated(listed)
    # another campaign's summary beside these draws
    other = tmp_path / "other"
    other.mkdir()
    _posterior_nc(other, n=40)
    _summary(other, ("posterior.nc",), name="other")
    _with_draws(listed)
    (listed / "summary.json").write_bytes((other / "summary.json").read_bytes())
    with pytest.raises(CalibratedParametersError, match=r"posterior.nc has changed since the run"):
        load_posterior_draws(listed, 5)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "summary.json").write_text(
        json.dumps({"parameters": {"link_bw_GBps": {"median": 5}}})
    )
    with pytest.raises(CalibratedParametersError, match=r"not a version 1 campaign summary"):
        load_calibrated(legacy)


def test_empty_and_absurd_draws_are_refused(tmp_path: Path) -> None:
    """Issue reproducers: a draws file with 0 draws gave NumPy's "a must be a positive
    integer"; draws scaled by 1e300 (hash re-recorded) were replayed."""
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CalibratedParametersError, match=r"holds 0 posterior draws"):
        load_posterior_draws(_with_draws(empty, n=0), 5)
    huge = tmp_path / "huge"
    huge.mkdir()
    with pytest.raises(
        CalibratedParametersError,
        match=r"draw \d+ of link_bw_GBps = .*e\+30\d is invalid: expected a number in \[1e-06",
    ):
        load_posterior_draws(_with_draws(huge, scale=1e300), 5)


def test_regime_names_round_trip_through_the_hand_off(tmp_path: Path) -> None:
    """Issue reproducer: results/openmpi-ucx-ib-regimes failed with "regime1_name='small' is
    invalid" (two mailbox regimes rebuilt from their slots were both "small")."""
    regimes = [
        {
            "name": "inline",
            "protocol": "mailbox",
            "max_bytes": 128,
            "latency_us": 0.0,
            "copy_bw_GBps": 0.0,
            "segment_bytes": 1448,
            "segment_us": 0.0,
        },
        {
            "name": "bcopy",
            "protocol": "mailbox",
            "max_bytes": 8192,
            "latency_us": 0.75,
            "copy_bw_GBps": 15.5,
            "segment_bytes": 1448,
            "segment_us": 0.0,
        },
        {
            "name": "rendezvous",
            "protocol": "rendezvous",
            "max_bytes": None,
            "latency_us": 0.0,
            "copy_bw_GBps": 0.0,
            "segment_bytes": 1448,
            "segment_us": 0.0,
        },
    ]
    folder = _summary(
        tmp_path,
        regimes=regimes,
        fixed={"injection_bw_GBps": 25.0, "regime0_max_bytes": 128.0, "regime1_protocol": 0.0},
        parameters={"regime1_latency_us": {"median": 0.5, "mean": 0.6, "map": None}},
        map={"unique": False, "reason": "ridge"},
    )
    p = load_calibrated(folder).params({"regime2_latency_us": 1.0})
    assert [r.label for r in p.regimes] == ["inline", "bcopy", "rendezvous"]
    # records written before the field's rename (latency_us) read as send_overhead_us
    assert p.regimes[1].send_overhead_us == 0.5 and p.regimes[1].copy_bw_GBps == 15.5
    assert p.regimes[2].send_overhead_us == 1.0 and p.injection_bw_GBps == 25.0


#: Folders without posterior draws (none today: every committed campaign result carries
#: them). ``--params`` refuses such a folder with a one-line error naming
#: ``--estimate median``; list it here to check that.
WITHOUT_DRAWS: set[str] = set()


@pytest.mark.parametrize("name", COMMITTED_CAMPAIGNS)
def test_every_committed_result_loads(name: str, committed_results: Path) -> None:
    """What ``--params results/NAME`` reads (as the last commit holds it): the draws
    (checked against the hand-off record, each range-checked) and the point estimates
    (each the summary's, carried by the parameter set), regime names round-tripped; an
    external simulator's calibration is refused by name."""
    from mpiuq.calibration.reporting.handoff import external_simulator

    folder = committed_results / name
    doc = json.loads((folder / "summary.json").read_text())
    if external_simulator(doc) is not None:
        with pytest.raises(CalibratedParametersError, match="external simulator"):
            load_calibrated(folder)
        return
    for estimate in ("median", "mean"):
        c = load_calibrated(folder, estimate)
        assert dict(c.calibrated) == {n: v[estimate] for n, v in doc["parameters"].items()}
        p = c.params()
        assert isinstance(p, SimParams)
        plain = {n: v for n, v in c.values().items() if hasattr(p, n)}  # not regime slots
        assert {n: getattr(p, n) for n in plain} == plain
        assert set(dict(c.calibrated)) & set(plain)
    assert [r.label for r in p.regime_table()] == [r["name"] for r in doc["regimes"]]
    if name in WITHOUT_DRAWS:
        assert not list(folder.glob("posterior*.nc")), f"{name} has draws again: list it no more"
        with pytest.raises(CalibratedParametersError, match=r"--estimate median"):
            load_posterior_draws(folder, 4)
        pytest.xfail(f"results/{name} has no posterior draws: re-run its campaign file")
    draws = load_posterior_draws(folder, 8, seed=0)
    assert draws.values.shape[0] == 8
    assert isinstance(draws.params(0), SimParams)


def test_committed_stampede_draws_match_its_summary(committed_results: Path) -> None:
    """The committed draws file is the posterior the committed summary describes."""
    folder = committed_results / "stampede-ib"
    d = load_posterior_draws(folder, 2000, seed=0)
    assert d.source.name in ("posterior.nc", "posterior_draws.nc")
    c = load_calibrated(folder)
    assert d.fixed == c.fixed
    for j, name in enumerate(d.names):
        # the summary's median is the median of these 2000 draws, to rounding
        assert np.median(d.values[:, j]) == pytest.approx(dict(c.calibrated)[name], rel=1e-12)
    d.params(0)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("not json", "is not a campaign summary"),
        ('{"name": "x"}', "not a version 1 campaign summary"),
        ('{"a": NaN}', "NaN is not a JSON number"),
    ],
)
def test_load_calibrated_errors(tmp_path: Path, content: str, match: str) -> None:
    (tmp_path / "summary.json").write_text(content)
    with pytest.raises(CalibratedParametersError, match=match):
        load_calibrated(tmp_path)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            lambda h: h["estimates"]["link_bw_GBps"].update(median=None),
            r"estimates\.link_bw_GBps\.median = None",
        ),
        (lambda h: h["fixed"].update(hop_latency_ns="x"), r"fixed\.hop_latency_ns = 'x'"),
        (
            lambda h: h["fixed"].update(hop_latency_ns=1e300),
            r"fixed\.hop_latency_ns = 1e\+300 .*\[1e-06",
        ),
        (lambda h: h.update(version=7), r"handoff\.version = 7 is invalid: expected 1"),
        (lambda h: h.update(campaign="other"), r"of campaign 'other'"),
    ],
)
def test_malformed_hand_off_records_name_the_key(tmp_path: Path, change, match: str) -> None:  # type: ignore[no-untyped-def]
    folder = _summary(tmp_path)
    _edit_summary(folder, lambda d: change(d["handoff"]))
    with pytest.raises(CalibratedParametersError, match=match):
        load_calibrated(folder)


def test_a_value_changed_in_the_record_is_recognised(tmp_path: Path) -> None:
    folder = _summary(tmp_path)
    _edit_summary(
        folder, lambda d: d["handoff"]["estimates"]["link_bw_GBps"].update(median=5.3), reseal=False
    )
    with pytest.raises(CalibratedParametersError, match=r"does not match its sha256"):
        load_calibrated(folder)


def test_load_calibrated_missing_and_unknown_estimate(tmp_path: Path) -> None:
    with pytest.raises(CalibratedParametersError, match="does not exist"):
        load_calibrated(tmp_path)
    with pytest.raises(CalibratedParametersError, match="estimate 'mode' is unknown"):
        load_calibrated(_summary(tmp_path), "mode")
