"""A small campaign of an external simulator on synthetic Laplace data, its data table
using the Laplace family of ``docs/extending-calibration.md`` registered from a temporary
folder: the registered family carries the campaign to the truth."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from extending_family import TRUTH, laplace_family, write_folder

from mpiuq.calibration.config import load_campaign
from mpiuq.main import main


@pytest.fixture
def laplace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The guide's Laplace module, imported from a temporary folder and registered."""
    yield from laplace_family(tmp_path, monkeypatch)


@pytest.mark.slow
def test_a_campaign_with_the_registered_family_recovers_the_truth(
    laplace: ModuleType, tmp_path: Path
) -> None:
    toml = write_folder(tmp_path)
    assert load_campaign(toml).datasets[0].likelihood == "laplace"
    out = tmp_path / "results"
    assert main(["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["noise"]["likelihoods"] == {"pingpong_half_rtt": "laplace"}
    for name, truth in TRUTH.items():
        lo, hi = s["parameters"][name]["hdi90"]
        assert lo <= truth <= hi, (name, truth, (lo, hi))
