"""Likelihood (eq. 7, LOO-inflated), uniform prior (eq. 6), and the sampler on a conjugate case."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy.stats import norm

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.model.likelihood import make_log_posterior
from mpiuq.calibration.reporting.summaries import find_map
from mpiuq.calibration.sampling.sampler import SamplerSettings, iter_ensembles, run_ensembles


class Linear:
    """f(x) = x A^T + b: a model whose posterior under a wide flat prior is Gaussian."""

    def __init__(self, a: npt.ArrayLike, b: npt.ArrayLike) -> None:
        self.a = np.asarray(a, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)

    def predict(self, x: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return np.asarray(x, dtype=np.float64) @ self.a.T + self.b


A = np.array([[1.0, 0.5], [0.2, 2.0], [1.0, -1.0]])
B = np.array([0.1, -0.2, 0.0])
MU = np.array([1.0, 2.0, 0.3])
VAR = np.array([0.04, 0.09, 0.01])


def test_loglik_matches_scipy_normal_and_inflates_by_loo() -> None:
    loo = np.array([0.1, 0.0, 0.2])
    lp = make_log_posterior(Linear(A, B), MU, VAR, loo, [-5, -5], [5, 5], [0, 0])
    x = np.array([[0.3, 0.7], [1.0, -2.0]])
    expected = norm.logpdf(MU, loc=Linear(A, B).predict(x), scale=np.sqrt(VAR + loo**2)).sum(1)
    np.testing.assert_allclose(lp(x), expected, rtol=1e-12)


def test_prior_box_gives_minus_infinity_outside() -> None:
    lp = make_log_posterior(Linear(A, B), MU, VAR, 0.0 * VAR, [-1, -1], [1, 1], [0, 0])
    out = lp(np.array([[0.0, 0.0], [1.5, 0.0], [1.0, -1.0]]))
    assert np.isfinite(out[0]) and out[1] == -np.inf and np.isfinite(out[2])


def test_group_uses_only_its_columns_and_outputs() -> None:
    lp = make_log_posterior(
        Linear(A, B), MU, VAR, 0.0 * VAR, [-5, -5], [5, 5], [0.0, 0.4], columns=(0,), outputs=(2,)
    )
    x = np.array([[0.25]])
    f = Linear(A, B).predict(np.array([[0.25, 0.4]]))[0, 2]
    np.testing.assert_allclose(lp(x), norm.logpdf(MU[2], f, np.sqrt(VAR[2])))


def test_bad_likelihood_inputs_raise() -> None:
    with pytest.raises(SamplerError, match=r"variances .* expected all > 0"):
        make_log_posterior(Linear(A, B), MU, [0.0, 1.0, 1.0], 0 * VAR, [0, 0], [1, 1], [0, 0])
    with pytest.raises(SamplerError, match=r"lower=\[1.0, 0.0\] upper=\[0.0, 1.0\]"):
        make_log_posterior(Linear(A, B), MU, VAR, 0 * VAR, [1, 0], [0, 1], [0, 0])
    with pytest.raises(SamplerError, match=r"columns \(5,\)"):
        make_log_posterior(Linear(A, B), MU, VAR, 0 * VAR, [0, 0], [1, 1], [0, 0], columns=(5,))


def test_conjugate_gaussian_posterior_and_map() -> None:
    """Flat prior much wider than the likelihood: the posterior is N(m, C) with
    C = (A^T S^-1 A)^-1 and m = C A^T S^-1 (mu - b) (standard linear-Gaussian result)."""
    lp = make_log_posterior(Linear(A, B), MU, VAR, 0 * VAR, [-10, -10], [10, 10], [0, 0])
    prec = A.T @ np.diag(1 / VAR) @ A
    cov = np.linalg.inv(prec)
    mean = cov @ A.T @ np.diag(1 / VAR) @ (MU - B)
    sd = np.sqrt(np.diag(cov))
    settings = SamplerSettings(walkers=16, steps=300, burn=200, max_steps=3000, ensembles=4)
    res = run_ensembles(lp, lp.lower, lp.upper, settings, np.random.SeedSequence(7))
    d = res.diagnostics
    assert d.converged and np.all(d.rhat < 1.01) and np.all(d.ess_bulk >= 400)
    draws = res.chain.reshape(-1, 2)
    # Monte-Carlo standard errors: sd/sqrt(ESS) for the mean, sd/sqrt(2 ESS) for the sd; 4 sigma
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), 4 * sd / np.sqrt(d.ess_bulk))
    np.testing.assert_array_less(
        np.abs(draws.std(0) / sd - 1.0), 4 / np.sqrt(2 * np.minimum(d.ess_bulk, d.ess_tail))
    )
    assert 0.2 < d.acceptance.min() < 0.9
    x_map, _ = find_map(lp, draws[:3], lp.lower, lp.upper)
    np.testing.assert_allclose(x_map, mean, atol=1e-4 * sd.max() * 100)


def test_sampler_is_deterministic_for_a_seed_and_yields_blocks() -> None:
    lp = make_log_posterior(Linear(A, B), MU, VAR, 0 * VAR, [-10, -10], [10, 10], [0, 0])
    s = SamplerSettings(walkers=8, steps=20, burn=10, max_steps=70, ensembles=2, target_ess=1e6)
    blocks = list(iter_ensembles(lp, lp.lower, lp.upper, s, np.random.SeedSequence(3)))
    assert [b.steps_done for b in blocks] == [30, 50, 70]
    assert blocks[-1].done and not blocks[-1].samples.diagnostics.converged  # type: ignore[union-attr]
    again = run_ensembles(lp, lp.lower, lp.upper, s, np.random.SeedSequence(3))
    np.testing.assert_array_equal(again.chain, blocks[-1].samples.chain)  # type: ignore[union-attr]


def test_sampler_rejects_too_few_walkers() -> None:
    lp = make_log_posterior(Linear(A, B), MU, VAR, 0 * VAR, [-10, -10], [10, 10], [0, 0])
    with pytest.raises(SamplerError, match=r"walkers=3 .*>= 2 \* dim = 4"):
        run_ensembles(lp, lp.lower, lp.upper, SamplerSettings(walkers=3), np.random.SeedSequence(0))
