"""Campaigns around a user's own simulator, kept outside the repository (a temporary
folder): a Python callable and a command recover a synthetic truth inside their 90% HDIs
on a run budget, report the runs spent per stage, resume from their checkpoints, and
refuse bad [simulator] tables and budgets with typed errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.errors import CampaignError, RunBudgetError
from mpiuq.main import main

TRUTH = {"lat_us": 2.0, "bw_GBps": 5.0, "rndv_us": 4.0}
SIZES = (1, 64, 512, 4096, 8192, 16384, 65536, 262144, 1048576)

# t(s) = lat + s / (1e3 bw) + rndv [s > 8192]: microseconds for s bytes at bw GB/s
MODEL = """
import numpy as np
SIZES = np.array({sizes}, dtype=float)
def simulate(x):
    lat, bw, rndv = x[:, :1], x[:, 1:2], x[:, 2:3]
    return lat + SIZES / (1e3 * bw) + rndv * (SIZES > 8192)
"""

COMMAND = """
import csv, sys
SIZES = {sizes}
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write(",".join(map(str, SIZES)) + "\\n")
    for r in rows:
        lat, bw, rndv = float(r["lat_us"]), float(r["bw_GBps"]), float(r["rndv_us"])
        f.write(",".join(repr(lat + s / (1e3 * bw) + (rndv if s > 8192 else 0.0))
                         for s in SIZES) + "\\n")
"""

CAMPAIGN = """
name = "{name}"
seed = 3
[simulator]
{simulator}
output_sizes = [{sizes}]
regime_max_bytes = [8192]
regime_names = ["eager", "rendezvous"]
max_simulator_runs = 600
[parameters]
lat_us = [0.5, 5.0]
bw_GBps = [3.0, 8.0]
rndv_us = [0.0, 10.0]
[data]
path = "data.csv"
benchmark = "pingpong_half_rtt"
[surrogate]
level = 3
order = 3
[calibration]
walkers = 12
steps = 200
burn = 150
max_steps = 3000
[refinement]
rounds = 1
error_draws = 50
[exact]
draws = 104
proposal_draws = 300
move_steps = 5
[posterior]
target_rhat = 1.1
"""


def write_data(folder: Path) -> None:
    """Synthetic ping-pong data at TRUTH: 30 replicas per size, 3% Gaussian noise."""
    rng = np.random.default_rng(3)
    s = np.array(SIZES, dtype=float)
    mean = TRUTH["lat_us"] + s / (1e3 * TRUTH["bw_GBps"]) + TRUTH["rndv_us"] * (s > 8192)
    lines = ["run,msg_size_bytes,value,unit,benchmark"]
    for size, m in zip(SIZES, mean, strict=True):
        for r in range(30):
            value = m * (1 + 0.03 * rng.standard_normal())
            lines.append(f"{r},{size},{value:.7g},us,pingpong_half_rtt")
    (folder / "data.csv").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder outside the repository: model, command, data and campaigns."""
    d = tmp_path_factory.mktemp("user_model")
    sizes = ", ".join(map(str, SIZES))
    (d / "my_sim.py").write_text(MODEL.format(sizes=list(SIZES)))
    (d / "my_sim_cmd.py").write_text(COMMAND.format(sizes=list(SIZES)))
    write_data(d)
    callable_toml = CAMPAIGN.format(
        name="toy-callable", simulator='callable = "my_sim:simulate"', sizes=sizes
    )
    command = json.dumps([sys.executable, "my_sim_cmd.py", "{input}", "{output}"])
    command_toml = CAMPAIGN.format(
        name="toy-command", simulator=f"command = {command}\nbatch_size = 8", sizes=sizes
    )
    (d / "callable.toml").write_text(callable_toml)
    (d / "command.toml").write_text(command_toml)
    return d


@pytest.fixture(scope="module")
def runs(user_folder: Path) -> dict[str, Path]:
    out = {}
    for kind in ("callable", "command"):
        res = user_folder / f"results-{kind}"
        args = ["campaign", "run", str(user_folder / f"{kind}.toml"), "--out", str(res)]
        assert main([*args, "--quiet", "--no-plots"]) == 0, kind
        out[kind] = res
    return out


@pytest.mark.slow
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


@pytest.mark.slow
def test_callable_and_command_agree(runs: dict[str, Path]) -> None:
    a = json.loads((runs["callable"] / "summary.json").read_text())
    b = json.loads((runs["command"] / "summary.json").read_text())
    for name in TRUTH:  # the CSV round trip keeps every bit (repr of floats)
        assert a["parameters"][name]["median"] == b["parameters"][name]["median"]


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_the_run_plan_must_fit_the_budget(user_folder: Path, tmp_path: Path) -> None:
    text = (user_folder / "callable.toml").read_text().replace("= 600", "= 400")
    (tmp_path / "c.toml").write_text(text)
    from mpiuq.calibration.pipeline.budget import check_campaign_budget

    with pytest.raises(
        CampaignError,
        match=r"max_simulator_runs' = 400 .* at least 488 runs for design 69 \+ refinement "
        r"1 x \(69 \+ 50\) \+ importance 300 = 488",
    ):
        check_campaign_budget(load_campaign(tmp_path / "c.toml"))


def test_the_direct_sampler_must_fit_the_budget(user_folder: Path, tmp_path: Path) -> None:
    text = (user_folder / "callable.toml").read_text()
    direct = 'sampler = "direct"\nwalkers = 8\npopulations = 2\nburn = 20\n'
    (tmp_path / "c.toml").write_text(text + direct + "steps = 20\n")
    from mpiuq.calibration.pipeline.budget import check_campaign_budget

    # every direct proposal is a run: 8 walkers x 2 populations x (20 + 20) steps = 640
    with pytest.raises(
        CampaignError,
        match=r"max_simulator_runs' = 600 .* at least 709 runs for design 69 \+ direct "
        r"sampler 640 = 709 \(lower posterior.walkers.* posterior.sampler = 'surrogate'\)",
    ):
        check_campaign_budget(load_campaign(tmp_path / "c.toml"))
    (tmp_path / "c.toml").write_text(text + direct + "steps = 10\n")  # 69 + 480 fits
    check_campaign_budget(load_campaign(tmp_path / "c.toml"))


@pytest.mark.slow
def test_no_handoff_to_replay_but_a_report_with_the_runs(runs: dict[str, Path]) -> None:
    from mpiuq.calibration.reporting.calibrated import CalibratedParametersError, load_calibrated
    from mpiuq.report_cmd import report_html

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


def test_a_stage_beyond_the_budget_runs_nothing(user_folder: Path, tmp_path: Path) -> None:
    from mpiuq.calibration.data.observations import load_observations
    from mpiuq.calibration.pipeline.external import simulator_runs_for

    campaign = load_campaign(user_folder / "callable.toml")
    obs = load_observations(campaign.datasets, campaign.simulator.thresholds())
    door = simulator_runs_for(campaign, obs, tmp_path, None)
    x = np.tile([[2.0, 5.0, 4.0]], (3, 1))
    assert door.run(x, "design").shape == (3, len(SIZES))  # three equal sets: one run
    assert door.spent == 1
    with pytest.raises(RunBudgetError, match=r"exact stage needs 600 simulator runs but .* 599"):
        door.run(
            np.column_stack([np.linspace(1, 4, 600), np.full(600, 5.0), np.zeros(600)]), "exact"
        )
    assert door.spent == 1 and not (tmp_path / "runs" / "0002-exact.h5").exists()


BAD_TABLES = [
    ('callable = "my_sim:simulate"\ncommand = "x {output}"', "exactly one of callable or command"),
    ('callable = "my_sim"', r"'module:function'"),
    ('command = "sim {input}"', r"an \{output\} argument"),
    ('callable = "my_sim:simulate"\nbenchmark = "pingpong"', "with an external simulator"),
    ('callable = "my_sim:simulate"\ntimeout_s = 5', "only a command can be stopped"),
    ('callable = "my_sim:simulate"\nmax_simulator_runs = 0', "an integer from 1"),
    ('callable = "my_sim:simulate"\nregime_max_bytes = [9000, 100]', "ascending sizes"),
]


@pytest.mark.parametrize(("table", "message"), BAD_TABLES)
def test_bad_simulator_tables_name_the_key(
    user_folder: Path, tmp_path: Path, table: str, message: str
) -> None:
    text = (user_folder / "callable.toml").read_text()
    head, rest = text.split("[simulator]\n", 1)
    rest = rest.split("[parameters]", 1)[1]
    sizes = ", ".join(map(str, SIZES))
    simulator = f"[simulator]\n{table}\noutput_sizes = [{sizes}]\n"
    (tmp_path / "c.toml").write_text(f"{head}{simulator}[parameters]{rest}")
    (tmp_path / "data.csv").write_text((user_folder / "data.csv").read_text())
    with pytest.raises(CampaignError, match=message):
        load_campaign(tmp_path / "c.toml")


def test_data_sizes_must_be_simulator_outputs(user_folder: Path, tmp_path: Path) -> None:
    text = (user_folder / "callable.toml").read_text()
    text = text.replace(
        'benchmark = "pingpong_half_rtt"', 'benchmark = "pingpong_half_rtt"\nsizes = [1, 100]'
    )
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(CampaignError, match=r"data\.sizes.*\[100\] are not"):
        load_campaign(tmp_path / "c.toml")


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_documented_example_recovers_its_truth(tmp_path: Path) -> None:
    """docs/external_simulators.md, as written: its model file and campaign file, in a
    folder outside the repository, with synthetic data at lat_us = 1.7, bw_GBps = 6.2
    (after the toy campaigns, whose my_sim is another module of the same name)."""
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "external_simulators.md").read_text()
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
