"""The discrepancy spreads drawn from their conditional inside the direct sampler's
proposals (:mod:`mpiuq.calibration.sampling.spreads`): the proposal weights are unbiased for the
collapsed posterior whatever the grid, carried values move with their walker, and the
direct sampler recovers a funnel-shaped posterior against 2-D quadrature."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.special import logsumexp

from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.likelihood import ModelPredictor
from mpiuq.calibration.sampling.direct import direct_posterior
from mpiuq.calibration.sampling.population import PopulationSettings, run_populations
from mpiuq.calibration.sampling.posterior import Problem
from mpiuq.calibration.sampling.spreads import SpreadGrid, spread_density, spread_layout

#: One regime of four sizes: outputs ``a x_i``, a 1% replica spread, a misfit of 0.5-1.6%
#: the model cannot follow, and a relative spread ``s`` on [0, 0.2]: the posterior of ``s``
#: has a long upper tail and ``a`` widens with it (a funnel).
SIZES = np.array([1.0, 2.0, 4.0, 8.0])
MEAN = 0.4 * SIZES * (1.0 + np.array([0.006, -0.014, 0.016, -0.005]))
VAR = (0.01 * 0.4 * SIZES) ** 2
A_BOX = (0.1, 1.0)
S_MAX = 0.2


def _model(x: np.ndarray) -> np.ndarray:
    return x[:, :1] * SIZES[None, :]


def _funnel_problem() -> Problem:
    return Problem(
        predictor=ModelPredictor(_model),
        names=("a", "sd_rel_r"),
        lower=np.array([A_BOX[0], 0.0]),
        upper=np.array([A_BOX[1], S_MAX]),
        nominal=np.array([0.4, 0.0]),
        data_mean=MEAN,
        data_var=VAR,
        loo_rmse=np.zeros(4),
        discrepancy=Discrepancy(("r",), (0, 0, 0, 0), 0.0, S_MAX),
    )


def _loglik(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    f = a[..., None] * SIZES
    v = VAR + (s[..., None] * f) ** 2
    return np.asarray(-0.5 * np.sum((MEAN - f) ** 2 / v + np.log(2 * np.pi * v), axis=-1))


def _log_collapsed(a: float) -> float:
    """``log int_0^S p(y | a, s) ds / S`` by a trapezoid rule on ``log s`` (40 e-folds,
    12,000 nodes) plus the piece next to 0: independent of the grid under test."""
    u = np.linspace(math.log(S_MAX) - 40.0, math.log(S_MAX), 12000)
    w = np.full(u.size, u[1] - u[0])
    w[[0, -1]] *= 0.5
    ll = _loglik(np.full(u.size, a), np.exp(u)) + u + np.log(w)
    near0 = float(_loglik(np.array([a]), np.array([0.0]))[0]) + u[0]
    return float(logsumexp(np.append(ll, near0))) - math.log(S_MAX)


def _quadrature_moments() -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of ``(a, s)`` on a 3,000 x 1,200 grid (uniform in ``a``,
    log-spaced in ``s`` over 30 e-folds)."""
    a = np.linspace(0.3, 0.5, 3000)  # +-0.1: beyond 50 posterior sd of a
    u = np.linspace(math.log(S_MAX) - 30.0, math.log(S_MAX), 1200)
    s = np.exp(u)
    lp = _loglik(a[:, None], s[None, :]) + u[None, :]  # ds = s du
    p = np.exp(lp - lp.max())
    p /= p.sum()
    mean = np.array([np.sum(p.sum(axis=1) * a), np.sum(p.sum(axis=0) * s)])
    var = np.array(
        [np.sum(p.sum(axis=1) * (a - mean[0]) ** 2), np.sum(p.sum(axis=0) * (s - mean[1]) ** 2)]
    )
    return mean, np.sqrt(var)


def _everywhere(x: np.ndarray) -> np.ndarray:
    return np.all((x >= [A_BOX[0], 0.0]) & (x <= [A_BOX[1], S_MAX]), axis=1)


@pytest.mark.parametrize("cell_log_s", [None, 1.5])
def test_spread_weights_average_to_the_collapsed_posterior(cell_log_s: float | None) -> None:
    # E_{s ~ g}[w(a, s)] = p(a) = int p(a, s) ds whatever the grid: the sampler's target is
    # the exact posterior; a fine grid only makes w nearly constant (efficiency)
    target = _funnel_problem().log_posterior()
    layout = spread_layout(target)
    assert layout is not None and layout.columns == (1,) and layout.rest == (0,)
    grid = SpreadGrid.for_data(S_MAX, MEAN, VAR, layout.outputs, cell_log_s=cell_log_s)
    rng = np.random.default_rng(3)
    density = spread_density(target, layout, grid, _everywhere, rng)
    for a in (0.398, 0.41, 0.45):
        log_w, s = density(np.full((20000, 1), a))
        assert np.all((s >= 0.0) & (s <= S_MAX))
        w = np.exp(log_w - log_w.max())
        mean_w, se_w = w.mean(), w.std() / math.sqrt(w.size)
        got = math.log(mean_w) + log_w.max()
        # 4 standard errors of the Monte Carlo mean (relative)
        assert abs(got - _log_collapsed(a)) < 4 * se_w / mean_w + 1e-9
        if cell_log_s is None:
            assert np.std(log_w) < 0.15  # the default grid: w within a few % of p(a)
        else:
            assert np.std(log_w) > 0.3  # coarse: w varies, and still averages to p(a)


def test_spread_density_outside_the_box_and_for_a_failed_run() -> None:
    target = _funnel_problem().log_posterior()
    layout = spread_layout(target)
    assert layout is not None
    grid = SpreadGrid.for_data(S_MAX, MEAN, VAR, layout.outputs)
    density = spread_density(target, layout, grid, _everywhere, np.random.default_rng(0))
    log_w, _ = density(np.array([[0.05], [0.4]]))
    assert log_w[0] == -np.inf and np.isfinite(log_w[1])
    nan_model = ModelPredictor(lambda x: _model(x) * np.nan)
    nan_target = replace(_funnel_problem(), predictor=nan_model).log_posterior()
    nan_density = spread_density(nan_target, layout, grid, _everywhere, np.random.default_rng(0))
    assert np.isnan(nan_density(np.array([[0.4]]))[0][0])


def test_carried_values_move_with_their_walker() -> None:
    # carried value = a function of the position: it must match in every stored state
    def density(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return -0.5 * np.sum(x**2, axis=1), np.column_stack([x[:, 0] ** 3 + x[:, 1]])

    rng = np.random.default_rng(2)
    settings = PopulationSettings(walkers=8, populations=2, burn=50, steps=100, max_steps=150)
    run = run_populations(density, rng.standard_normal((2, 8, 2)), settings, rng)
    c = run.chain
    assert c.shape[-1] == 3
    np.testing.assert_array_equal(c[..., 2], c[..., 0] ** 3 + c[..., 1])


@pytest.mark.parametrize("seed", [11, 13])
def test_direct_sampler_recovers_a_funnel_against_quadrature(seed: int) -> None:
    # round 1's sampler (a and s moved jointly, s on the log scale) "converged" by R-hat and
    # ESS on these seeds with the sd of a off by -14% and +40% (rare excursions into the
    # funnel's neck); with s drawn from its conditional in every proposal it is within 8%
    problem = _funnel_problem()
    mean, sd = _quadrature_moments()
    rng = np.random.default_rng(seed)
    start = rng.uniform(problem.lower, problem.upper, (2000, 2))
    settings = PopulationSettings(walkers=8, target_ess=2000, max_steps=20000)
    ex, stats = direct_posterior(problem.log_posterior(), start, settings, (), 8000, rng)
    assert stats.passed
    x = ex.draws
    # ESS >= 2000: means within 0.1 sd (4.5 standard errors), sds within 10% (the rule)
    assert np.max(np.abs(x.mean(axis=0) - mean) / sd) < 0.1
    assert np.max(np.abs(x.std(axis=0) / sd - 1.0)) < 0.1
