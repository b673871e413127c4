"""Diagnostics: R-hat across ensembles, ESS from autocorrelation times, HDI."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from mpiuq.calibration.reporting.summaries import hdi, marginal
from mpiuq.calibration.sampling.diagnostics import autocorr_time, ensemble_rhat, ess_bulk, rank_rhat


def _ar1(rng: np.random.Generator, phi: float, shape: tuple[int, int, int]) -> np.ndarray:
    e = rng.normal(size=shape)
    x = np.zeros(shape)
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
    for i in range(1, shape[1]):
        x[:, i] = phi * x[:, i - 1] + e[:, i]
    return x


def test_rhat_near_one_for_chains_from_one_distribution() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 2000))
    assert rank_rhat(x) < 1.01
    # independent reference: ArviZ's rank-normalized split R-hat (same definition)
    assert rank_rhat(x) == pytest.approx(float(az.rhat(x)), rel=1e-10)


def test_rhat_flags_chains_with_different_means() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 1000))
    x[2] += 1.0
    assert rank_rhat(x) > 1.1
    traces = rng.normal(size=(4, 300, 16))
    traces[0] += 1.0
    assert ensemble_rhat(traces) > 1.1
    assert ensemble_rhat(rng.normal(size=(4, 300, 16))) < 1.01


def test_ess_of_ar1_matches_theory() -> None:
    """AR(1) with coefficient phi has tau = (1 + phi) / (1 - phi) (standard result)."""
    rng = np.random.default_rng(2)
    phi = 0.8
    t = _ar1(rng, phi, (4, 4000, 8)).transpose(0, 1, 2)
    tau_true = (1 + phi) / (1 - phi)
    # Sokal window with c = 5 is biased low by a few % for tau ~ 9; allow 15 %
    assert autocorr_time(t[0]) == pytest.approx(tau_true, rel=0.15)
    assert ess_bulk(t) == pytest.approx(4 * 4000 * 8 / tau_true, rel=0.15)


def test_constant_trace_has_infinite_tau() -> None:
    assert autocorr_time(np.ones((50, 4))) == float("inf")


def test_hdi_of_normal_samples_matches_quantiles_and_arviz() -> None:
    x = np.random.default_rng(3).normal(size=200_000)
    lo, hi = hdi(x, 0.9)
    # symmetric unimodal: HDI = central interval +-1.6449 (normal 95% quantile)
    assert lo == pytest.approx(-1.6449, abs=0.02) and hi == pytest.approx(1.6449, abs=0.02)
    np.testing.assert_allclose([lo, hi], az.hdi(x, hdi_prob=0.9), atol=1e-9)
    m = marginal(x)
    assert m.mean == pytest.approx(0.0, abs=0.01) and m.sd == pytest.approx(1.0, abs=0.01)
