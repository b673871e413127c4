"""Campaigns around a user's own simulator refuse bad [simulator] tables, data sizes the
simulator does not output and run budgets too small for their plan, with typed errors
naming the key; a stage beyond the budget runs nothing (the end-to-end runs:
``tests/e2e/test_external_campaign.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from external_user import SIZES, make_user_folder

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.errors import CampaignError, RunBudgetError


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder outside the repository: model, command, data and campaigns."""
    return make_user_folder(tmp_path_factory.mktemp("user_model"))


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
