"""The Laplace likelihood family of ``docs/extending-calibration.md`` (read from the page)
and a small external-simulator campaign whose data table uses it, for the tests of
adding a family in a temporary folder outside the package."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from mpiuq.calibration.model.families.registry import register_likelihood, unregister_likelihood

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


def family_source() -> str:
    """The first Python block of the guide: the Laplace family module."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert blocks and "LAPLACE = LikelihoodFamily(" in blocks[0]
    return blocks[0]


def laplace_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The guide's module, imported from a temporary folder and registered."""
    (tmp_path / "laplace_family.py").write_text(family_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("laplace_family")
    register_likelihood(module.LAPLACE)
    yield module
    unregister_likelihood("laplace")
    monkeypatch.delitem(sys.modules, "laplace_family")


def write_folder(folder: Path) -> Path:
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


