"""The contributor guide's claim that a likelihood family is one module plus its
registration: the Laplace family of ``docs/extending-calibration.md`` (read from the page),
written to a temporary folder outside the package and registered there, has the density of
``scipy.stats.laplace`` and is accepted by the validator only once registered (the campaign
with it: ``tests/e2e/test_extending_calibration_campaign.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from extending_family import laplace_family, write_folder
from scipy import stats

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.families.registry import likelihood_names
from mpiuq.calibration.model.noise import noise_model


@pytest.fixture
def laplace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The guide's Laplace module, imported from a temporary folder and registered."""
    yield from laplace_family(tmp_path, monkeypatch)


def test_an_unregistered_family_is_refused(tmp_path: Path) -> None:
    assert "laplace" not in likelihood_names()
    with pytest.raises(CampaignError, match=r"data.likelihood' = 'laplace'.*one of \['gaussian'"):
        load_campaign(write_folder(tmp_path))


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


