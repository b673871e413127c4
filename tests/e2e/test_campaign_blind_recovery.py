"""Blind recovery on a small, fast campaign: synthetic `mpiuq simulate --replicas` data at known
parameters are calibrated by `mpiuq campaign run`; the 90% HDIs of identified parameters
contain the truth, a parameter without influence comes back with its prior, result files,
`campaign show`, determinism, and the loud failure of unconverged or failing runs.
(Stock-settings recoveries: test_campaign_blind_recovery_stock.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.pipeline.campaign import CampaignProgress, run_campaign
from mpiuq.calibration.reporting.artefacts import file_sha256
from mpiuq.main import main

TRUTH = {"post_header_delay_us": 0.8, "memory_bw_GBps": 6.0, "post_rdma_delay_us": 1.2}
SIZES = (1, 256, 2048, 4000, 6000, 12000, 24000, 48000)  # small + eager only (eager_max 65536)

CAMPAIGN = """
name = "blind"
seed = 11
[simulator]
benchmark = "pingpong"
[simulator.fixed]
hop_latency_ns = 100.0
[parameters]
post_header_delay_us = [0.2, 1.5]
memory_bw_GBps = [3.0, 12.0]
post_rdma_delay_us = [0.3, 2.0]
rdma_pin_latency_us = [1.0, 7.0]   # only rendezvous messages pin: no influence here
[data]
path = "synthetic.csv"
benchmark = "pingpong_half_rtt"
sizes = [{sizes}]
[surrogate]
level = 3
order = 3
[calibration]
walkers = 16
steps = 300
burn = 200
max_steps = 4000
ensembles = 4
target_rhat = 1.01
target_ess = 400
[refinement]
rounds = 1
level = 3
[exact]
draws = 600
proposal_draws = 1200
move_steps = 10
"""


@pytest.fixture(scope="module")
def blind_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("blind")
    params = [a for k, v in TRUTH.items() for a in ("--param", f"{k}={v}")]
    rc = main(
        [
            "simulate",
            "--benchmark",
            "pingpong",
            "--sizes",
            ",".join(map(str, SIZES)),
            *params,
            "--replicas",
            "40",
            "--noise-cv",
            "0.03",
            "--seed",
            "5",
            "--csv",
            str(d / "synthetic.csv"),
        ]
    )
    assert rc == 0
    toml = d / "blind.toml"
    toml.write_text(CAMPAIGN.format(sizes=", ".join(map(str, SIZES))))
    out = d / "results"
    assert main(["campaign", "run", str(toml), "--out", str(out), "--quiet"]) == 0
    return toml, out


def test_truth_inside_90_hdi_and_inert_parameter_at_its_prior(
    blind_run: tuple[Path, Path],
) -> None:
    _, out = blind_run
    s = json.loads((out / "summary.json").read_text())
    assert s["diagnostics"]["converged"] is True
    assert s["checks_passed"] is True
    for name, truth in TRUTH.items():
        p = s["parameters"][name]
        assert p["information"]["label"] == "identified", name
        lo, hi = p["hdi90"]
        assert lo <= truth <= hi, (name, truth, p["hdi90"])
        assert hi - lo < 0.6 * (p["prior"][1] - p["prior"][0])  # informative, not the prior
    inert = s["parameters"]["rdma_pin_latency_us"]
    assert inert["information"]["label"] == "not identified"
    assert inert["information"]["sd_ratio"] > 0.9 and inert["information"]["kl_nats"] < 0.1
    assert s["map"]["unique"] is False and inert["map"] is None  # a flat direction
    # the synthetic model is the simulator itself: the calibrated model reproduces the data
    z = np.array([p["z"] for p in s["predictive"]["sizes"]])
    assert np.all(np.abs(z) < 1.0)
    assert s["predictive"]["source"] == "simulator"
    assert s["surrogate"]["at_posterior"]["checked_by"] == "simulator"
    # the batched simulator is cheap: the posterior is sampled on it and verified exact
    assert s["posterior"]["path"] == "direct" and "automatic" in s["posterior"]["reason"]
    assert s["checks"]["posterior_converged"]["passed"] is True
    assert s["posterior"]["exact_for_simulator"] is True


def test_outputs_files_and_show(
    blind_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = blind_run
    for f in (
        "design.h5",
        "surrogate.h5",
        "surrogate_local.h5",
        "posterior.nc",
        "posterior_draws.nc",
        "summary.json",
        "sensitivity.png",
        "predictive.png",
        "marginals.png",
        "pairs.png",
    ):
        assert (out / f).is_file(), f
    import arviz as az

    idata = az.from_netcdf(out / "posterior.nc")
    for group in ("posterior", "prior", "posterior_predictive", "observed_data", "log_likelihood"):
        assert hasattr(idata, group), group
    # the direct path keeps as many final draws as its ESS target (2,000 > exact.draws = 600)
    assert idata.posterior["memory_bw_GBps"].shape == (1, 2000)
    assert idata.log_likelihood["y"].shape == (1, 2000, len(SIZES))
    assert idata.posterior.attrs["source"] == "simulator"
    assert main(["campaign", "show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "memory_bw_GBps" in text and "90% HDI" in text and "converged: yes" in text
    assert "posterior predictive (simulator)" in text and "checks passed: yes" in text
    # the run's HTML report: every figure it wrote embedded, the hand-off's hash
    report = (out / "report.html").read_text()
    figures = json.loads((out / "summary.json").read_text())["figures"]
    assert "pairs.png" in figures and report.count("data:image/png;base64,") == len(figures)
    assert file_sha256(out / "posterior.nc") in report and "Every must-pass check passed" in report


def test_rerun_is_deterministic_and_resumes_design(blind_run: tuple[Path, Path]) -> None:
    toml, out = blind_run
    first = json.loads((out / "summary.json").read_text())
    events: list[CampaignProgress] = []
    again = run_campaign(load_campaign(toml), out, on_progress=events.append)
    design = [e for e in events if e.stage == "design"]
    # design.h5 is complete: the run starts with every point done and evaluates none
    assert design and all(e.done == e.total for e in design)
    for j, name in enumerate(again.main.problem.model_names):
        assert again.estimates.median[j] == pytest.approx(
            first["parameters"][name]["median"], rel=1e-12
        )


def test_unconverged_run_says_so_loudly(
    blind_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    toml, out = blind_run
    short = toml.parent / "short.toml"
    text = toml.read_text().replace("max_steps = 4000", "max_steps = 60")
    text = text.replace("steps = 300", "steps = 20").replace("burn = 200", "burn = 40")
    # the posterior is sampled on the simulator directly: its sampler is the one cut short
    short.write_text(text + "\n[posterior]\nburn = 10\nsteps = 20\nmax_steps = 30\n")
    rc = main(
        ["campaign", "run", str(short), "--out", str(out.parent / "short"), "--quiet", "--no-plots"]
    )
    captured = capsys.readouterr()
    assert rc == 1
    assert "WARNING: MCMC did NOT converge" in captured.err
    s = json.loads((out.parent / "short" / "summary.json").read_text())
    assert s["diagnostics"]["converged"] is False
    assert s["checks"]["mcmc_converged"]["passed"] is False


def test_grouped_stage_is_compared_with_the_exact_posterior(blind_run: tuple[Path, Path]) -> None:
    _, out = blind_run
    s = json.loads((out / "summary.json").read_text())
    check = s["checks"]["grouped_vs_posterior"]
    shifts = [p["grouped"]["shift_sd"] for p in s["parameters"].values()]
    assert check["value"] == pytest.approx(max(shifts))
    assert check["severity"] == "warn" and check["passed"] == (max(shifts) <= check["threshold"])


def test_show_refuses_a_summary_without_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"name": "old", "parameters": {}}))
    assert main(["campaign", "show", str(tmp_path)]) == 2
    assert "written before the honest-calibration checks" in capsys.readouterr().err


def test_failed_checks_are_loud_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from mpiuq.commands.campaign import _warn

    def summary(passed: bool, severity: str) -> dict[str, object]:
        check = {"passed": passed, "severity": severity, "message": "inside at 9 of 18 sizes"}
        return {"diagnostics": {"converged": True}, "checks": {"predictive_coverage": check}}

    assert _warn(summary(True, "fail"), running=True) == 0
    assert _warn(summary(False, "warn"), running=True) == 0
    assert "warning: check predictive_coverage" in capsys.readouterr().err
    assert _warn(summary(False, "fail"), running=True) == 1
    assert "WARNING: check predictive_coverage FAILED: inside at 9" in capsys.readouterr().err
    assert _warn(summary(False, "fail"), running=False) == 0  # `campaign show` only warns


def test_the_surrogate_path_reports_its_corrections_and_is_not_called_exact(
    blind_run: tuple[Path, Path],
) -> None:
    toml, out = blind_run
    forced = toml.parent / "surrogate_path.toml"
    forced.write_text(toml.read_text() + '\n[posterior]\nsampler = "surrogate"\n')
    target = out.parent / "surrogate_path"
    rc = main(["campaign", "run", str(forced), "--out", str(target), "--quiet", "--no-plots"])
    s = json.loads((target / "summary.json").read_text())
    assert (
        s["posterior"]["path"] == "surrogate"
        and "posterior.sampler = 'surrogate'" in (s["posterior"]["reason"])
    )
    assert s["posterior"]["exact_for_simulator"] is False
    assert "not verified exact" in s["posterior"]["verified"]
    moves = s["checks"]["moves_mixed"]
    assert moves["severity"] == "fail" and "sub-populations" in moves["message"]
    assert s["posterior"]["importance"]["n_nonfinite"] == 0
    assert rc == (0 if s["checks_passed"] else 1)
