"""The contributor guide's claim that a likelihood family is one module plus its
registration: the Laplace family of ``docs/extending-calibration.md`` (read from the page),
written to a temporary folder outside the package and registered there, has the density of
``scipy.stats.laplace``, is accepted by the validator only once registered, and carries a
small campaign of an external simulator on synthetic Laplace data to the truth."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy import stats

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.families.registry import (
    likelihood_names,
    register_likelihood,
    unregister_likelihood,
)
from mpiuq.calibration.model.noise import noise_model
from mpiuq.main import main

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "extending-calibration.md"
TRUTH = {"lat_us": 2.0, "bw_GBps": 5.0}
SIZES = (1, 64, 512, 4096, 16384, 65536, 262144, 1048576)

SIMULATOR = """
import numpy as np
SIZES = np.array({sizes}, dtype=float)
def simulate(x):
    return x[:, :1] + SIZES / (1e3 * x[:, 1:2])
"""

CAMPAIGN = """
name = "laplace-toy"
seed = 5
[simulator]
callable = "toy_sim:simulate"
output_sizes = [{sizes}]
max_simulator_runs = 400
[parameters]
lat_us = [0.5, 5.0]
bw_GBps = [3.0, 8.0]
[data]
path = "data.csv"
benchmark = "pingpong_half_rtt"
likelihood = "laplace"
[surrogate]
level = 3
order = 3
[calibration]
walkers = 8
steps = 150
burn = 100
max_steps = 2000
[refinement]
rounds = 1
error_draws = 30
[exact]
draws = 104
proposal_draws = 200
move_steps = 2
[posterior]
target_rhat = 1.1
"""


def _family_source() -> str:
    """The first Python block of the guide: the Laplace family module."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert blocks and "LAPLACE = LikelihoodFamily(" in blocks[0]
    return blocks[0]


@pytest.fixture
def laplace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The guide's module, imported from a temporary folder and registered."""
    (tmp_path / "laplace_family.py").write_text(_family_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("laplace_family")
    register_likelihood(module.LAPLACE)
    yield module
    unregister_likelihood("laplace")
    monkeypatch.delitem(__import__("sys").modules, "laplace_family")


def _write_folder(folder: Path) -> Path:
    """Synthetic data at TRUTH with Laplace noise (scale 2% of the time), 20 replicas."""
    rng = np.random.default_rng(11)
    s = np.array(SIZES, dtype=float)
    mean = TRUTH["lat_us"] + s / (1e3 * TRUTH["bw_GBps"])
    lines = ["run,msg_size_bytes,value,unit,benchmark"]
    for size, m in zip(SIZES, mean, strict=True):
        for r in range(20):
            lines.append(f"{r},{size},{m + rng.laplace(0.0, 0.02 * m):.7g},us,pingpong_half_rtt")
    (folder / "data.csv").write_text("\n".join(lines) + "\n")
    sizes = ", ".join(map(str, SIZES))
    (folder / "toy_sim.py").write_text(SIMULATOR.format(sizes=list(SIZES)))
    (folder / "laplace.toml").write_text(CAMPAIGN.format(sizes=sizes))
    return folder / "laplace.toml"


def test_an_unregistered_family_is_refused(tmp_path: Path) -> None:
    assert "laplace" not in likelihood_names()
    with pytest.raises(CampaignError, match=r"data.likelihood' = 'laplace'.*one of \['gaussian'"):
        load_campaign(_write_folder(tmp_path))


def test_the_registered_family_has_the_laplace_density(laplace: ModuleType) -> None:
    assert likelihood_names()[-1] == "laplace"
    y = np.array([2.5, 18.0, 230.0])
    f = np.array([[2.0, 20.0, 200.0]])
    v = np.array([0.04, 1.0, 100.0])
    noise = noise_model(("laplace", "gaussian"), [0, 0, 1], ("a", "b"), ((1, 30),) * 2,
                        np.zeros(3), np.zeros(3))  # fmt: skip
    assert noise.dim == 0  # no shape parameter
    got = noise.loglik(f, np.zeros_like(f), f, y, v, np.zeros(3), np.zeros((1, 0)), (0, 1, 2))
    b = np.sqrt(v / 2.0)
    want = [*stats.laplace.logpdf(y[:2], f[0, :2], b[:2]), stats.norm.logpdf(y[2], 200.0, 10.0)]
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    # predictive draws: positive, with the Laplace variance where truncation is nil
    rng = np.random.default_rng(0)
    m = np.full((200_000, 1), 50.0)
    sub = noise_model(("laplace",), [0], ("a",), ((1, 30),), [0.0], [0.0])
    draws = sub.draw(m, np.zeros_like(m), m, np.array([4.0]), np.zeros(1), np.zeros((1, 0)), rng)
    assert draws.min() > 0.0
    assert abs(draws.var() - 4.0) < 0.1 and abs(np.median(draws) - 50.0) < 0.05


@pytest.mark.slow
def test_a_campaign_with_the_registered_family_recovers_the_truth(
    laplace: ModuleType, tmp_path: Path
) -> None:
    toml = _write_folder(tmp_path)
    assert load_campaign(toml).datasets[0].likelihood == "laplace"
    out = tmp_path / "results"
    assert main(["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["noise"]["likelihoods"] == {"pingpong_half_rtt": "laplace"}
    for name, truth in TRUTH.items():
        lo, hi = s["parameters"][name]["hdi90"]
        assert lo <= truth <= hi, (name, truth, (lo, hi))
