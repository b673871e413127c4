"""``mpiuq replay/whatif/simulate --params results/stampede-ib``: posterior draws end to end.

Uses the committed calibration (results/stampede-ib with its posterior_draws.nc, as the last
commit holds it: the ``committed_results`` copy) and a small shared trace (skipped when
../shared/data is absent); few draws keep it fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_data import TRACES, needs_traces

from mpiuq.main import main

TRACE = TRACES / "gen_ti_lulesh_8r"


@pytest.fixture
def campaign(committed_results: Path) -> Path:
    """The committed calibration the draws come from."""
    return committed_results / "stampede-ib"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@needs_traces
def test_replay_of_draws_writes_intervals_and_is_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    argv = ["replay", str(TRACE), "--params", str(campaign), "--draws", "6", "--seed", "3"]
    code, text, _ = _run([*argv, "--out", str(tmp_path / "a")], capsys)
    assert code == 0
    assert "6 posterior draws of stampede-ib" in text and "[" in text
    data = json.loads((tmp_path / "a" / "replay.json").read_text())
    assert (tmp_path / "a" / "decomposition.png").stat().st_size > 1000
    report = (tmp_path / "a" / "report.html").read_text()
    assert "6 posterior draws of stampede-ib" in report and "data:image/png;base64," in report
    assert data["calibration"]["draws"] == 6 and data["calibration"]["seed"] == 3
    for model in ("analytic", "compute-only"):
        m = data["models"][model]
        for s in [m["simulated_time_s"], *m["decomposition"].values()]:
            assert set(s) == {"mean", "sd", "hdi90", "draws"} and len(s["draws"]) == 6
            assert s["hdi90"][0] <= s["mean"] <= s["hdi90"][1]
        assert m["per_call"] and all(
            set(parts) == {"compute_s", "network_s", "mpi_stack_s", "sync_s"}
            for parts in m["per_call"].values()
        )
    assert data["models"]["analytic"]["decomposition"]["network_s"]["sd"] > 0
    code, _, _ = _run([*argv, "--out", str(tmp_path / "b")], capsys)
    again = json.loads((tmp_path / "b" / "replay.json").read_text())
    for d in (data, again):
        d.pop("wall_s"), d.pop("lowering_s")
        for m in d["models"].values():
            m.pop("wall_s")
    assert data == again


@needs_traces
def test_estimate_keeps_the_single_point_path(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    code, text, _ = _run(
        ["replay", str(TRACE), "--params", str(campaign), "--estimate", "median"], capsys
    )
    assert code == 0 and "posterior median of stampede-ib" in text and "MPI stack s" in text


@needs_traces
def test_whatif_answers_with_speedup_intervals_and_refuses_bad_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    argv = [
        "whatif",
        str(TRACE),
        "--params",
        str(campaign),
        "--draws",
        "4",
        "--scenario",
        "net2x: link_bw_GBps*=2, injection_bw_GBps*=2",
        "--scenario",
        "stack/2: post_header_delay_us*=0.5, post_rdma_delay_us*=0.5, rdma_pin_latency_us*=0.5",
        "--out",
        str(tmp_path),
    ]
    code, text, _ = _run(argv, capsys)
    assert code == 0 and "net2x" in text and "P(>5%)" in text
    data = json.loads((tmp_path / "whatif.json").read_text())
    assert (tmp_path / "whatif.png").stat().st_size > 1000
    report = (tmp_path / "report.html").read_text()
    assert "stack/2" in report and report.count("data:image/png;base64,") == 1
    for name in ("net2x", "stack/2"):
        s = data["scenarios"][name]
        assert len(s["speedup"]["draws"]) == 4
        assert s["speedup"]["mean"] > 1.0  # a faster network or stack never slows this trace
        assert 0.0 <= s["probability"]["speedup>1.05"] <= 1.0
        assert sum(s["moves"].values()) == pytest.approx(1.0)
    assert data["scenarios"]["stack/2"]["moves"]["mpi_stack"] > 0.5
    code, _, err = _run(
        ["whatif", str(TRACE), "--params", str(campaign), "--scenario", "n: link_bw*=2"], capsys
    )
    assert code == 2 and "scenario 'n: link_bw*=2': 'link_bw*=2' is invalid" in err


def test_simulate_at_the_posterior_draws(
    capsys: pytest.CaptureFixture[str], campaign: Path
) -> None:
    argv = ["simulate", "--sizes", "1,100000", "--params", str(campaign), "--draws", "5"]
    code, text, _ = _run([*argv, "--json"], capsys)
    assert code == 0
    data = json.loads(text)
    assert [r["protocol"] for r in data["results"]] == ["small", "rendezvous"]
    t = data["results"][1]["time_us"]
    assert len(t["draws"]) == 5 and t["sd"] > 0
    code, _, err = _run(["simulate", "--sizes", "1", "--draws", "5"], capsys)
    assert code == 2 and "--params" in err
    code, _, err = _run([*argv, "--estimate", "median"], capsys)
    assert code == 2 and "either --draws or --estimate" in err
