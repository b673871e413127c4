"""The collapsed reference of experiments/checks/spread_reference.py against quadrature.

That reference integrates the discrepancy spreads out on a fixed grid, samples the model
parameters on the collapsed posterior and gives the spreads' marginals by
Rao-Blackwellisation. Here its pieces are checked against the known-answer posterior of
experiments/checks/known_answer.py, whose quadrature uses its own grids (linear in the
model parameters, log-spaced in the spread over 24 e-folds), and against 2-D quadrature
of the one-parameter funnel of tests/test_calibration_spreads.py.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy.special import logsumexp

CHECKS = Path(__file__).resolve().parents[1] / "experiments" / "checks"


def _module(name: str) -> ModuleType:
    sys.path.insert(0, str(CHECKS))
    try:
        spec = importlib.util.spec_from_file_location(name, CHECKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve their module's names
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(CHECKS))


@pytest.fixture(scope="module")
def ka() -> ModuleType:
    return _module("known_answer")


@pytest.fixture(scope="module")
def sr() -> ModuleType:
    return _module("spread_reference")


def test_collapsed_density_matches_an_independent_integral(ka: ModuleType, sr: ModuleType) -> None:
    # log int_0^S p(y | a, b, s) ds / S by a trapezoid rule on 60,000 nodes over 40 e-folds
    # (plus the piece next to 0), written out here with known_answer's likelihood
    prob = ka.problem()
    col = sr.Collapsed.of(prob.log_posterior(), list(prob.names))
    mean, var = ka.data()
    u = np.linspace(math.log(ka.SPREAD_MAX) - 40.0, math.log(ka.SPREAD_MAX), 60000)
    w = np.full(u.size, u[1] - u[0])
    w[[0, -1]] *= 0.5
    theta = np.array([[1.3, 0.25], [1.25, 0.26], [1.4, 0.2], [0.9, 0.4]])
    got = col.log_density(theta)
    for (a, b), g in zip(theta, got, strict=True):
        s_all = np.exp(u)[:, None]
        ll = ka._loglik(np.full(u.size, a), np.full(u.size, b), s_all, mean, var)
        wb = w * np.exp(u)  # ds = s du
        near0 = float(ka._loglik(np.array(a), np.array(b), 0.0, mean, var)) + u[0]
        want = float(logsumexp(np.append(ll + np.log(wb), near0))) - math.log(ka.SPREAD_MAX)
        assert g == pytest.approx(want, abs=2e-3)
    # outside the prior box: -inf
    assert col.log_density(np.array([[0.1, 0.25]]))[0] == -np.inf


def test_rao_blackwellised_spread_matches_quadrature(ka: ModuleType, sr: ModuleType) -> None:
    # exact (a, b) draws (known_answer's own 2-D grids) -> the spread's marginal mean and
    # sd by Rao-Blackwellisation; the quadrature's are exact. Tolerances: the Monte Carlo
    # error of 4,000 independent draws of E[s | a, b] (whose sd is at most the spread's
    # posterior sd) is < 1/sqrt(4000) = 0.016 sd; 0.05 sd / 5% is 3 of those
    truth = ka.quadrature(200, 150, 24.0)["sd_rel_r"]
    prob = ka.problem()
    col = sr.Collapsed.of(prob.log_posterior(), list(prob.names))
    x = ka.exact_draws(4000, np.random.default_rng(1), s_nodes=200, ab_nodes=150)
    stats, one = sr.rao_blackwell(col, x[:, :2], np.random.default_rng(2), per_draw=5)
    s = stats["0"]
    assert abs(s["mean"] - truth["mean"]) / truth["sd"] < 0.05
    assert abs(s["sd"] / truth["sd"] - 1.0) < 0.05
    # the one conditional draw per (a, b) draw is a joint posterior draw: its mean too
    assert abs(one[:, 0].mean() - truth["mean"]) / truth["sd"] < 0.1
    assert s["quantiles"]["50"] == pytest.approx(truth["quantiles"]["50"], rel=0.05)


def test_conditional_moments_are_exact_for_the_drawn_density(
    sr: ModuleType, ka: ModuleType
) -> None:
    # the_moments (closed form per cell) against the mean of many draws from the same masses
    prob = ka.problem()
    col = sr.Collapsed.of(prob.log_posterior(), list(prob.names))
    p = col.conditionals(np.array([[1.3, 0.25]]))[:, 0]
    m1, m2 = col.the_moments(p)
    d = col.draw(np.repeat(p, 20000, axis=0), np.random.default_rng(0))
    sd = math.sqrt(m2[0] - m1[0] ** 2)
    assert abs(d.mean() - m1[0]) < 4 * sd / math.sqrt(d.size)
    assert d.std() == pytest.approx(sd, rel=0.03)  # se of an sd from 20,000 draws: < 1%
