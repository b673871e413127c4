"""Honest-calibration numerics against analytic references: discrepancy likelihood, importance
weights, the simulator-exact posterior, mode uniqueness, identifiability, refinement, checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mpiuq.calibration.checking.checks import coverage_threshold
from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.model.discrepancy import Discrepancy, regime_discrepancy
from mpiuq.calibration.model.likelihood import (
    ModelPredictor,
    gaussian_pointwise,
    make_log_posterior,
)
from mpiuq.calibration.reporting.identifiability import (
    analyse,
    parameter_information,
    spacing_entropy,
)
from mpiuq.calibration.sampling.exact import exact_posterior, psis_weights, systematic_resample
from mpiuq.calibration.sampling.grouping import sensitivity_grouping
from mpiuq.calibration.sampling.mode import search_mode
from mpiuq.calibration.sampling.posterior import Problem
from mpiuq.calibration.sampling.proposal import refined_proposal
from mpiuq.calibration.sampling.refinement import local_box, pressed_faces, surrogate_check
from mpiuq.calibration.sampling.sampler import SamplerSettings
from mpiuq.surrogate.chaos.pce import fit_pce
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.design.designs import sparse_grid_design


def test_discrepancy_likelihood_is_the_inflated_gaussian() -> None:
    d = regime_discrepancy(("small", "eager", "eager"), "regime", 0.1, 0.2)
    assert d.names == ("bias_rel_small", "bias_rel_eager", "sd_rel_small", "sd_rel_eager")
    assert d.lower.tolist() == [-0.1, -0.1, 0.0, 0.0]
    assert d.outputs_of(1) == (1, 2) and d.outputs_of(2) == (0,)
    f = np.array([[1.0, 10.0, 100.0]])
    delta = np.array([[0.05, -0.02, 0.1, 0.01]])
    mean, var = d.mean_and_var(f, delta)
    np.testing.assert_allclose(mean, [[1.05, 9.8, 98.0]], rtol=1e-12)
    np.testing.assert_allclose(var, [[0.01, 0.01, 1.0]], rtol=1e-12)
    lp = make_log_posterior(
        ModelPredictor(lambda x: np.tile([1.0, 10.0, 100.0], (len(x), 1)) * x[:, :1]),
        [1.0, 9.0, 101.0],
        [0.04, 0.25, 1.0],
        [0.0, 0.0, 0.0],
        [0.5, -0.1, -0.1, 0.0, 0.0],
        [2.0, 0.1, 0.1, 0.2, 0.2],
        [1.0, 0, 0, 0.1, 0.1],
        discrepancy=d,
    )
    x = np.array([[1.0, 0.05, -0.02, 0.1, 0.01]])
    expected = (
        stats.norm.logpdf(1.0, 1.05, np.sqrt(0.04 + 0.01))
        + stats.norm.logpdf(9.0, 9.8, np.sqrt(0.25 + 0.01))
        + stats.norm.logpdf(101.0, 98.0, np.sqrt(1.0 + 1.0))
    )
    assert lp(x)[0] == pytest.approx(expected, rel=1e-12)
    assert not Discrepancy().enabled and regime_discrepancy(("small",), "none", 0.1, 0.2).dim == 0


def test_gaussian_pointwise_matches_scipy() -> None:
    got = gaussian_pointwise(np.array([[1.0, 2.0]]), np.array([0.5, 2.5]), np.array([0.25, 4.0]))
    assert got[0].tolist() == pytest.approx(
        [stats.norm.logpdf(0.5, 1.0, 0.5), stats.norm.logpdf(2.5, 2.0, 2.0)]
    )


def test_importance_weights_recover_a_narrower_gaussian() -> None:
    # proposal N(0, 2^2), target N(0.5, 1): weights p/q; weighted moments match the target
    rng = np.random.default_rng(1)
    x = rng.normal(0.0, 2.0, 40000)
    w = psis_weights(stats.norm.logpdf(x, 0.5, 1.0) - stats.norm.logpdf(x, 0.0, 2.0))
    p = np.exp(w.log_weights)
    assert float(np.sum(p * x)) == pytest.approx(0.5, abs=0.03)
    assert float(np.sum(p * (x - 0.5) ** 2)) == pytest.approx(1.0, abs=0.05)
    assert w.khat < 0.5 and 0.3 * x.size < w.ess < x.size
    # a proposal much narrower than the target: heavy-tailed weights, k-hat beyond 0.7
    y = rng.normal(0.0, 0.3, 4000)
    bad = psis_weights(stats.norm.logpdf(y, 0.0, 1.5) - stats.norm.logpdf(y, 0.0, 0.3))
    assert bad.khat > 0.7


def test_systematic_resampling_keeps_proportions() -> None:
    idx = systematic_resample(np.log([0.1, 0.6, 0.3]), 1000, np.random.default_rng(0))
    assert np.bincount(idx, minlength=3).tolist() == [100, 600, 300]


def _linear_problem(data: list[float], sd: list[float], lo: float, hi: float) -> Problem:
    model = ModelPredictor(lambda x: np.column_stack([x[:, 0], 2.0 * x[:, 0]]))
    return Problem(
        model,
        ("a",),
        np.array([lo]),
        np.array([hi]),
        np.array([(lo + hi) / 2]),
        np.asarray(data),
        np.asarray(sd) ** 2,
        np.zeros(2),
    )


def test_exact_posterior_of_a_linear_model_is_the_analytic_gaussian() -> None:
    # y1 = a + e, y2 = 2a + e: posterior precision 1/s1^2 + 4/s2^2, flat prior far away
    problem = _linear_problem([1.0, 2.4], [0.2, 0.4], -10.0, 10.0)
    prec = 1 / 0.2**2 + 4 / 0.4**2
    mean = (1.0 / 0.2**2 + 2 * 2.4 / 0.4**2) / prec
    rng = np.random.default_rng(2)
    proposal = rng.normal(mean + 0.05, 2.0 / np.sqrt(prec), (6000, 1))  # shifted, wider
    logq = stats.norm.logpdf(proposal[:, 0], mean + 0.05, 2.0 / np.sqrt(prec))
    ex = exact_posterior(problem.log_posterior(), proposal, logq, 3000, 10, rng)
    assert ex.source == "simulator" and ex.draws.shape == (3000, 1)
    assert ex.draws.mean() == pytest.approx(mean, abs=4 / np.sqrt(prec) / np.sqrt(500))
    assert ex.draws.std() == pytest.approx(1 / np.sqrt(prec), rel=0.08)
    assert ex.weights is not None and ex.weights.khat < 0.7
    assert ex.moves is not None and ex.moves.unique_after > ex.moves.unique_before
    assert ex.outputs[:, 1] == pytest.approx(2 * ex.draws[:, 0])
    np.testing.assert_allclose(ex.loglik.sum(axis=1), problem.log_posterior()(ex.draws), rtol=1e-12)


def test_mode_search_finds_a_unique_mode_and_refuses_a_ridge() -> None:
    def bowl(x: np.ndarray) -> np.ndarray:
        return -0.5 * ((x[:, 0] - 2.0) ** 2 / 0.01 + (x[:, 1] - 3.0) ** 2)

    starts = [[1.0, 1.0], [2.5, 4.0], [2.2, 2.0]]
    m = search_mode(bowl, starts, [0, 0], [5, 5], [0.1, 1.0])
    assert m.unique and m.best.tolist() == pytest.approx([2.0, 3.0], abs=1e-3)

    def bottleneck(x: np.ndarray) -> np.ndarray:  # only min(a, b) = 5 is seen
        return -0.5 * (np.minimum(x[:, 0], x[:, 1]) - 5.0) ** 2 / 0.01

    ridge = search_mode(
        bottleneck, [[5.1, 6.0], [7.5, 5.2], [6.5, 7.0]], [3, 3], [8, 8], [0.7, 0.7]
    )
    assert not ridge.unique
    assert "disagree" in ridge.reason(("injection_bw_GBps", "link_bw_GBps"))


def test_identifiability_finds_the_bottleneck_combination() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    free = rng.uniform(5.0, 8.0, n)
    bottleneck = rng.normal(5.0, 0.03, n).clip(3.0, 8.0)
    arm = rng.random(n) < 0.5
    a = np.where(arm, bottleneck, free)
    b = np.where(arm, free, bottleneck)
    c = rng.normal(1.0, 0.05, n)  # an identified parameter of another unit
    d = rng.uniform(0.0, 10.0, n)  # not informed
    draws = np.column_stack([a, b, c, d])
    names = ("injection_bw_GBps", "link_bw_GBps", "post_header_delay_us", "rdma_pin_latency_us")
    units = ("GB/s", "GB/s", "us", "us")
    ident = analyse(draws, names, units, [3.0, 3.0, 0.1, 0.0], [8.0, 8.0, 3.0, 10.0], rng)
    found = [c.expression for c in ident.identified_combinations]
    assert found == ["min(injection_bw_GBps, link_bw_GBps)"]
    combo = ident.identified_combinations[0]
    assert combo.hdi90[0] < 5.0 < combo.hdi90[1] and combo.sd_ratio < 0.1
    labels = [p.label for p in ident.parameters]
    assert labels == ["weakly identified", "weakly identified", "identified", "not identified"]
    assert ident.parameters[3].kl_nats < 0.05
    assert ident.directions[0].sd_ratio < ident.directions[-1].sd_ratio


def test_entropy_and_information_of_known_distributions() -> None:
    x = np.random.default_rng(4).normal(0.0, 0.5, 20000)
    assert spacing_entropy(x) == pytest.approx(0.5 * np.log(2 * np.pi * np.e * 0.25), abs=0.02)
    info = parameter_information(x.clip(-4, 4), -4.0, 4.0)
    assert info.sd_ratio == pytest.approx(0.5 / (8 / np.sqrt(12)), rel=0.03)
    assert info.kl_nats == pytest.approx(
        np.log(8) - 0.5 * np.log(2 * np.pi * np.e * 0.25), abs=0.03
    )


def test_grouping_keeps_weak_parameters_and_joins_discrepancy_terms() -> None:
    s = np.array([[0.9, 0.02, 0.0], [0.0, 0.03, 0.0], [0.0, 0.0, 1e-12]])
    extra = np.array([[True], [True], [False]])
    g = sensitivity_grouping(s, 0.05, extra)
    # parameter 1 (Sobol < threshold everywhere) joins output 1's group; the discrepancy
    # term (column 3) links outputs 0 and 1 into one group; parameter 2 has no influence
    assert [grp.parameters for grp in g.groups] == [(0, 1, 3)]
    assert g.unconstrained == (2,)
    with pytest.raises(SamplerError, match="extra dependencies"):
        sensitivity_grouping(s, 0.05, np.ones((2, 1), dtype=bool))


def test_local_box_and_pressed_faces() -> None:
    draws = np.column_stack([np.linspace(4.0, 5.0, 1001), np.linspace(0.0, 1.0, 1001)])
    lo, hi = local_box(draws, [0.0, 0.0], [10.0, 1.0], pad=0.5)
    assert lo[0] == pytest.approx(4.005 - 0.5 * 0.99) and hi[1] == 1.0  # clipped to the prior
    pressed = pressed_faces(draws, [4.2, 0.0], [4.8, 1.0], [0.0, 0.0], [10.0, 1.0])
    assert pressed.tolist() == [[True, True], [False, False]]  # prior faces never press
    c = surrogate_check([[1.0, 2.0], [1.0, 2.0]], [[1.0, 2.2], [1.0, 1.8]], [0.1, 0.1])
    assert c.rmse_sd.tolist() == pytest.approx([0.0, 2.0]) and c.worst_sd == pytest.approx(2.0)


def _kink_model(x: np.ndarray) -> np.ndarray:
    """A toy external model with a bottleneck kink, like the ping-pong's bandwidths."""
    return np.column_stack(
        [1.0 + 1.0 / np.minimum(x[:, 0], x[:, 1]), 2.0 + x[:, 0] + 0.5 * x[:, 1]]
    )


def test_refinement_and_exact_posterior_work_for_any_batch_model() -> None:
    names = ("a", "b")
    box = ParameterBox(names, np.array([1.0, 1.0]), np.array([4.0, 4.0]))
    x = sparse_grid_design(box, 3)
    pce = fit_pce(x, _kink_model(x), box, order=3)
    truth = np.array([[2.0, 3.0]])
    y = _kink_model(truth)[0]
    sd = np.array([0.002, 0.02])
    problem = Problem(
        pce,
        names,
        box.lower.copy(),
        box.upper.copy(),
        np.array([2.5, 2.5]),
        y,
        sd**2,
        np.asarray(pce.loo_rmse),
    )
    settings = SamplerSettings(walkers=8, steps=300, burn=300, max_steps=3000, moves="de")
    start = np.random.default_rng(5).uniform(1.0, 4.0, (200, 2))
    prop = refined_proposal(
        problem,
        pce,
        start,
        _kink_model,
        settings,
        np.random.SeedSequence(6),
        rounds=2,
        level=3,
        order=3,
        pad=0.5,
        target_error_sd=0.25,
        error_draws=300,
    )
    assert prop.checked_by == "simulator" and 1 <= len(prop.rounds) <= 2
    assert prop.rounds[0].check.worst_sd > prop.check.worst_sd or len(prop.rounds) == 1
    exact_p = Problem(
        ModelPredictor(_kink_model),
        names,
        box.lower.copy(),
        box.upper.copy(),
        np.array([2.5, 2.5]),
        y,
        sd**2,
        np.zeros(2),
    )
    draws = prop.draws
    ex = exact_posterior(
        exact_p.log_posterior(),
        draws,
        prop.problem.log_posterior()(draws),
        1000,
        10,
        np.random.default_rng(7),
    )
    # the data are the model at the truth (no noise): the truth is inside the 90% range
    for j in range(2):
        lo, hi = np.quantile(ex.draws[:, j], [0.05, 0.95])
        assert lo <= truth[0, j] <= hi
    # and without a model (a fixed design) the surrogate is the answer, said so
    fixed = refined_proposal(
        problem,
        pce,
        start,
        None,
        settings,
        np.random.SeedSequence(6),
        rounds=2,
        level=3,
        order=3,
        pad=0.5,
        target_error_sd=0.25,
        error_draws=300,
    )
    assert fixed.checked_by == "loo" and fixed.rounds == ()
    assert fixed.check.rmse.tolist() == pytest.approx(np.asarray(pce.loo_rmse).tolist())


def test_coverage_threshold_is_a_binomial_quantile() -> None:
    n = 18
    k = coverage_threshold(n, 0.01)
    assert stats.binom.cdf(k, n, 0.9) >= 0.01 > stats.binom.cdf(k - 1, n, 0.9)
    assert coverage_threshold(n, 0.0) == 0
