"""Campaigns around a user's own simulator, kept outside the repository (a temporary
folder): a Python callable and a command recover a synthetic truth inside their 90% HDIs
on a run budget, report the runs spent per stage and resume from their checkpoints (the
bad [simulator] tables and budgets: ``tests/integration/test_external_campaign_config.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from external_user import TRUTH, make_user_folder

from mpiuq.calibration.config import load_campaign
from mpiuq.main import main


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder outside the repository: model, command, data and campaigns."""
    return make_user_folder(tmp_path_factory.mktemp("user_model"))


@pytest.fixture(scope="module")
def runs(user_folder: Path) -> dict[str, Path]:
    out = {}
    for kind in ("callable", "command"):
        res = user_folder / f"results-{kind}"
        args = ["campaign", "run", str(user_folder / f"{kind}.toml"), "--out", str(res)]
        assert main([*args, "--quiet", "--no-plots"]) == 0, kind
        out[kind] = res
    return out


@pytest.mark.parametrize("kind", ["callable", "command"])
def test_truth_inside_the_90_hdi_with_runs_reported(runs: dict[str, Path], kind: str) -> None:
    s = json.loads((runs[kind] / "summary.json").read_text())
    assert s["checks_passed"] is True
    assert s["posterior_source"] == "simulator"  # the importance weights passed their check
    assert s["checks"]["importance_sampling"]["passed"] is True
    for name, truth in TRUTH.items():
        lo, hi = s["parameters"][name]["hdi90"]
        assert lo <= truth <= hi, (kind, name, truth, (lo, hi))
        assert hi - lo < 0.5 * np.diff(s["parameters"][name]["prior"])[0]
    r = s["simulator_runs"]
    # design: the level-3 sparse grid in 3-D (69 points); one refinement round: a local
    # level-3 grid and 50 checks; exact: 300 weighted draws, then one move step of the 104
    # resampled draws (4 populations of 26, two half-population batches of 52), paid by
    # what the budget left (600 - 488 = 112): its proposals inside the prior box ran (how
    # many of the 104 fall inside depends on the random stream)
    assert (r["stages"]["design"], r["stages"]["refinement"]) == (69, 119)
    assert 300 < r["stages"]["exact"] <= 300 + 104
    assert r["total"] == sum(r["stages"].values()) <= r["budget"] == 600
    assert s["posterior"]["moves"]["steps"] == 1
    assert s["simulator"]["kind"] == kind


def test_callable_and_command_agree(runs: dict[str, Path]) -> None:
    a = json.loads((runs["callable"] / "summary.json").read_text())
    b = json.loads((runs["command"] / "summary.json").read_text())
    for name in TRUTH:  # the CSV round trip keeps every bit (repr of floats)
        assert a["parameters"][name]["median"] == b["parameters"][name]["median"]


def test_a_rerun_resumes_every_run_from_its_checkpoint(
    runs: dict[str, Path], user_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = json.loads((runs["callable"] / "summary.json").read_text())
    args = ["campaign", "run", str(user_folder / "callable.toml"), "--out", str(runs["callable"])]
    assert main([*args, "--quiet", "--no-plots"]) == 0
    total = first["simulator_runs"]["total"]
    said = f"{total} of 600 in all (0 by this run, {total} from checkpoints)"
    assert said in capsys.readouterr().out
    again = json.loads((runs["callable"] / "summary.json").read_text())
    assert again["simulator_runs"]["computed_by_this_run"] == 0
    for name in TRUTH:
        assert again["parameters"][name]["median"] == first["parameters"][name]["median"]


def test_a_budget_without_moves_is_said(user_folder: Path, tmp_path: Path) -> None:
    """490 runs: 488 for the design, refinement and weights; the 2 left pay for no move
    step of the 104 draws."""
    text = (user_folder / "callable.toml").read_text().replace("= 600", "= 490")
    (user_folder / "no-moves.toml").write_text(text)
    args = ["campaign", "run", str(user_folder / "no-moves.toml"), "--out", str(tmp_path)]
    assert main([*args, "--quiet", "--no-plots"]) == 0
    s = json.loads((tmp_path / "summary.json").read_text())
    mixed = s["checks"]["moves_mixed"]
    assert (mixed["passed"], mixed["severity"]) == (False, "warn")
    assert "no move step" in mixed["message"]
    assert s["posterior"]["moves"]["steps"] == 0 and s["posterior_source"] == "simulator"


def test_no_handoff_to_replay_but_a_report_with_the_runs(runs: dict[str, Path]) -> None:
    from mpiuq.calibration.reporting.calibrated import CalibratedParametersError, load_calibrated
    from mpiuq.commands.report import report_html

    s = json.loads((runs["callable"] / "summary.json").read_text())
    assert "handoff" not in s  # its parameters are not mpiuq's
    with pytest.raises(
        CalibratedParametersError, match=r"external simulator 'my_sim:simulate'.* no hand-off"
    ):
        load_calibrated(runs["callable"])
    html = report_html(runs["callable"] / "summary.json")
    assert "<h3>Simulator runs</h3>" in html
    assert "<td>exact</td>" in html and "Budget: 600 runs" in html
    assert "--params" not in html


def test_runs_go_through_any_executor_with_the_same_results(
    user_folder: Path, tmp_path: Path
) -> None:
    """Local worker processes (spawned: they import the user's module from its folder)
    and a Dask cluster give the in-process outputs bit for bit."""
    from mpiuq.calibration.data.observations import load_observations
    from mpiuq.calibration.pipeline.external import simulator_runs_for
    from mpiuq.surrogate.executors import DaskExecutor, ProcessExecutor

    campaign = load_campaign(user_folder / "callable.toml")
    obs = load_observations(campaign.datasets, campaign.simulator.thresholds())
    x = np.column_stack([np.linspace(1, 4, 7), np.linspace(3, 8, 7), np.linspace(0, 9, 7)])
    ref = simulator_runs_for(campaign, obs, tmp_path / "a", None).run(x, "design")
    with ProcessExecutor(2) as pool:
        y = simulator_runs_for(campaign, obs, tmp_path / "b", pool).run(x, "design")
    np.testing.assert_array_equal(y, ref)
    with DaskExecutor(workers=1, processes=False) as dask:
        y = simulator_runs_for(campaign, obs, tmp_path / "c", dask).run(x, "design")
    np.testing.assert_array_equal(y, ref)


def test_the_documented_example_recovers_its_truth(tmp_path: Path) -> None:
    """docs/external_simulators.md, as written: its model file and campaign file, in a
    folder outside the repository, with synthetic data at lat_us = 1.7, bw_GBps = 6.2
    (after the toy campaigns, whose my_sim is another module of the same name)."""
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "external_simulators.md").read_text()
    model = re.search(r"```python\n(# my_sim\.py.*?)```", doc, re.S)
    toml = re.search(r"```toml\n(name = \"my-model\".*?)```", doc, re.S)
    assert model is not None and toml is not None
    (tmp_path / "my_sim.py").write_text(model.group(1))
    (tmp_path / "campaign.toml").write_text(toml.group(1))
    rng = np.random.default_rng(11)
    lines = ["run,msg_size_bytes,value,unit,benchmark"]
    for size in (1, 64, 4096, 65536, 1048576):
        mean = 1.7 + size / (1e3 * 6.2)
        lines += [
            f"{r},{size},{mean * (1 + 0.04 * rng.standard_normal()):.7g},us,pingpong_half_rtt"
            for r in range(25)
        ]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "results"
    args = ["campaign", "run", str(tmp_path / "campaign.toml"), "--out", str(out)]
    assert main([*args, "--quiet", "--no-plots"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["posterior_source"] == "simulator" and s["checks_passed"] is True
    for name, truth in (("lat_us", 1.7), ("bw_GBps", 6.2)):
        lo, hi = s["parameters"][name]["hdi90"]
        assert lo <= truth <= hi, (name, lo, hi)
    assert s["simulator_runs"]["total"] <= 600
