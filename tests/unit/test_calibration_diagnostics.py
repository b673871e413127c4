"""Diagnostics: R-hat across ensembles, ESS from autocorrelation times, HDI."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from mpiuq.calibration.reporting.summaries import hdi, marginal
from mpiuq.calibration.sampling.diagnostics import (
    autocorr_time,
    ensemble_rhat,
    ess_bulk,
    ess_mean,
    ess_tail,
    rank_rhat,
)


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


def test_ess_of_short_chains_is_not_optimistic() -> None:
    """Walkers only ~10 autocorrelation times long (as a run stopped at its ESS target):
    the ESS must not exceed the exact ESS of the grand mean.

    AR(1) walkers with phi = 0.9 (tau = 19 steps), 200 steps, 4 ensembles of 16 walkers,
    started in the stationary distribution. Exact: Var(mean of one walker's n steps) =
    sum_{i,j} phi^|i-j| / n^2 (unit marginal variance), so ESS = 64 n^2 / sum_{i,j}
    phi^|i-j| = 707. The former estimate (tau from the walker-averaged autocorrelation,
    every walker centred on its own mean) gave 1,314 on average here (1.86x), and on the
    known-answer posterior the means of 40 independent sampler runs scattered 1.7x more in
    variance than it implied (experiments/checks/ess_check.py). ArviZ's multi-chain ESS
    is conservative on chains this short (about 0.75x here, converging to the exact value
    for long chains: test above), so the bound is 1.2x the exact value, far below 1.86x;
    the average over 20 replications has a Monte Carlo error of about 3%.
    """
    rng = np.random.default_rng(7)
    phi, n = 0.9, 200
    i = np.arange(n)
    exact = 64 * n**2 / np.sum(phi ** np.abs(i[:, None] - i[None, :]))
    est = []
    for _ in range(20):
        t = _ar1(rng, phi, (64, n, 1)).reshape(4, 16, n).transpose(0, 2, 1)
        est.append((ess_bulk(t), ess_tail(t), ess_mean(t)))
    bulk, tail, mean = np.mean(est, axis=0)
    assert 0.6 * exact < bulk < 1.2 * exact
    assert 0.6 * exact < mean < 1.2 * exact
    # the tail ESS is that of quantile indicators, not of the mean: only its sanity here
    assert 0.0 < tail < 64 * n


def test_constant_trace_has_infinite_tau() -> None:
    assert autocorr_time(np.ones((50, 4))) == float("inf")
    assert ess_bulk(np.ones((2, 50, 4))) == 0.0


def test_hdi_of_normal_samples_matches_quantiles_and_arviz() -> None:
    x = np.random.default_rng(3).normal(size=200_000)
    lo, hi = hdi(x, 0.9)
    # symmetric unimodal: HDI = central interval +-1.6449 (normal 95% quantile)
    assert lo == pytest.approx(-1.6449, abs=0.02) and hi == pytest.approx(1.6449, abs=0.02)
    np.testing.assert_allclose([lo, hi], az.hdi(x, hdi_prob=0.9), atol=1e-9)
    m = marginal(x)
    assert m.mean == pytest.approx(0.0, abs=0.01) and m.sd == pytest.approx(1.0, abs=0.01)
