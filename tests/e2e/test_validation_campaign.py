"""Validation built into campaigns, end to end on synthetic data of a known machine.

* A series measured on the calibrated machine, held out, is predicted inside its band by
  a fit of the other series (leave-one-series-out, one command, the folds sharing one
  design); a series measured on another machine (half the link bandwidth) fails its
  must-pass held-out check, and the campaign exits 1.
* The results say it: ``summary.json``'s validation section, ``campaign show`` (in-sample
  apart, and said to be in-sample), ``validation.png``.
* ``simulate --params`` of the result reports the labelled posterior predictive and warns
  about benchmark kinds and sizes the calibration did not see; ``whatif --params`` warns
  about messages outside the calibrated size range.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_machine import (
    PINGPONG_DATA,
    TRUTH,
    campaign_head,
    sampling_tables,
    simulate_csv,
    stream_data,
)

from mpiuq.main import main

OTHER_MACHINE = TRUTH | {"link_bw_GBps": 2.5}
PINGPONG_SIZES = (
    1,
    16,
    64,
    256,
    512,
    1024,
    2048,
    4096,
    8192,
    16384,
    32768,
    65536,
    131072,
    262144,
    524288,
)
STREAM_SIZES = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
DISCREPANCY = """
[discrepancy]
model = "regime"
sd_rel = 0.2
compare = false
"""


def _campaign(name: str, stream: str | None) -> str:
    tables = stream_data(stream) if stream is not None else ""
    return campaign_head(name, seed=7) + PINGPONG_DATA + tables + sampling_tables(24) + DISCREPANCY


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("validation")
    simulate_csv(d, "pingpong", PINGPONG_SIZES, "pp.csv", 1)
    simulate_csv(d, "stream", STREAM_SIZES, "bw.csv", 2)
    simulate_csv(d, "stream", STREAM_SIZES, "other.csv", 3, OTHER_MACHINE)
    return d


@pytest.fixture(scope="module")
def held_out_run(data_dir: Path) -> tuple[int, Path, str]:
    """The campaign of pp + a stream series of another machine, holding that series and
    the ping-pong's sizes from 100 kB out."""
    text = _campaign("other", "other") + (
        '[validation]\nholdout = [{ series = "other" }, { series = "pp", min_bytes = 100000 }]\n'
        "draws = 400\n"
    )
    toml = data_dir / "other.toml"
    toml.write_text(text)
    out = data_dir / "out-other"
    code = main(["campaign", "run", str(toml), "--out", str(out), "--quiet"])
    return code, out, text


def test_a_series_of_another_machine_fails_its_held_out_check(
    held_out_run: tuple[int, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = held_out_run
    assert code == 1  # a must-pass check failed
    s = json.loads((out / "summary.json").read_text())
    assert [d["label"] for d in s["data_sets"]] == ["pp"]  # fitted without the held-out data
    assert max(r["size_bytes"] for r in s["predictive"]["sizes"]) < 100000
    v = s["validation"]
    groups = {g["name"]: g for g in v["groups"]}
    other, high = groups["other"], groups["pp >= 100000 B"]
    assert other["kind"] == "held-out series" and other["n_sizes"] == len(STREAM_SIZES)
    # half the link bandwidth: the large messages' throughput is far below the band
    assert not other["passed"] and other["n_inside_90"] < other["threshold"]
    assert other["median_relative_error"] > 0.2
    assert s["checks"]["heldout_coverage (other)"]["passed"] is False
    assert s["checks"]["heldout_coverage (other)"]["severity"] == "fail"
    # the same machine's ping-pong above the fitted range is predicted
    assert high["kind"] == "held-out sizes" and high["passed"]
    assert high["n_sizes"] == sum(1 for x in PINGPONG_SIZES if x >= 100000)
    assert high["n_outside_fitted_range"] == high["n_sizes"]
    assert set(high["discrepancy_sources"]) == {"fitted"}
    assert set(other["discrepancy_sources"]) <= {"other benchmarks", "none"}
    unselected = groups["pp (unselected)"]
    assert unselected["kind"] == "unselected sizes" and unselected["passed"]
    assert "discrepancy was fitted to" in s["checks"]["predictive_coverage"]["message"]
    assert "validation.png" in s["figures"] and (out / "validation.png").stat().st_size > 0
    assert main(["campaign", "show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fitted sizes: " in text
    assert "(in-sample: scored on the sizes the discrepancy was fitted to)" in text
    assert "held-out series other: " in text and ": FAILED" in text
    assert "held-out sizes pp >= 100000 B: " in text
    html = (out / "report.html").read_text()  # the run's HTML report shows the scores
    assert "Held-out validation (out-of-sample)" in html and "pp &gt;= 100000 B" in html
    assert "FAILED" in html and "validation.png" in html


def test_simulate_reports_the_predictive_and_warns_about_what_was_not_calibrated(
    held_out_run: tuple[int, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = held_out_run
    capsys.readouterr()
    argv = ["simulate", "--params", str(out), "--sizes", "64,4096,2000000", "--draws", "40"]
    assert main([*argv, "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert doc["predictive"] == "posterior predictive: parameters + discrepancy + noise"
    assert [r["discrepancy_source"] for r in doc["results"]] == ["same benchmark"] * 3
    warnings = doc["warnings"]
    assert len(warnings) == 1 and "1 of 3 sizes lie outside the range" in warnings[0]
    assert "warning: 1 of 3 sizes" in got.err
    for r in doc["results"]:  # the predictive is wider than the parameters' band alone
        t, m = r["time_us"], r["model_time_us"]
        assert t["q95"] - t["q05"] > m["hdi90"][1] - m["hdi90"][0]
    assert main([*argv[:-2], "--draws", "10", "--benchmark", "isend"]) == 0
    err = capsys.readouterr().err
    assert "benchmark 'isend' was not in the calibration data of other" in err


def test_whatif_warns_about_messages_outside_the_calibrated_range(
    held_out_run: tuple[int, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = held_out_run
    trace = tmp_path / "halo.h5"
    synth = ["trace", "synth", "halo3d", "--ranks", "8", "--iterations", "2"]
    assert main([*synth, "--bytes", "2000000", "--out", str(trace)]) == 0
    capsys.readouterr()
    argv = ["whatif", str(trace), "--params", str(out), "--draws", "4", "--json"]
    assert main([*argv, "--scenario", "net2x: link_bw_GBps*=2"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert any("lie outside the range of calibrated sizes" in w for w in doc["warnings"])
    assert "warning: " in got.err


def test_leave_one_series_out_of_one_machine_passes_and_shares_its_design(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = data_dir / "same.toml"
    toml.write_text(_campaign("same", "bw") + "[validation]\ndraws = 400\n")
    out = data_dir / "loso"
    argv = ["campaign", "validate", str(toml), "--leave-one-series-out", "--out", str(out)]
    code = main([*argv, "--quiet", "--no-plots"])
    text = capsys.readouterr().out
    doc = json.loads((out / "loso.json").read_text())
    rows = {r["series"]: r for r in doc["folds"]}
    assert set(rows) == {"pp", "bw"}
    for series, r in rows.items():
        other = "bw" if series == "pp" else "pp"
        assert r["fitted_series"] == [other]
        assert r["passed"], r  # the same machine: held-out coverage at least its threshold
        assert r["n_inside_90"] >= r["threshold"] > 0
        fold = out / f"without-{series}"
        s = json.loads((fold / "summary.json").read_text())
        assert s["checks"][f"heldout_coverage ({series})"]["passed"]
        assert not (fold / "design.h5").exists()  # the folds took the shared design's columns
    assert (out / "design.h5").is_file() and (out / "loso.txt").is_file()
    assert "held-out series" in text and "in-sample (fitted series)" in text
    assert code == 0
    assert main(["campaign", "validate", str(toml), "--out", str(out)]) == 2  # no validation named
    assert "--leave-one-series-out" in capsys.readouterr().err


def test_leave_one_series_out_needs_two_series(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _campaign("one", None)
    toml = data_dir / "one.toml"
    toml.write_text(text)
    assert main(["campaign", "validate", str(toml), "--leave-one-series-out"]) == 2
    assert "two or more fitted [[data]] tables" in capsys.readouterr().err
