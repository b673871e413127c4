"""Likelihood families (Gaussian, Student-t, log-normal) against scipy, positivity of the
predictive draws (not of the likelihood), and the robust replica summaries against their definitions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mpiuq.calibration.data.observations import MAD_TO_SD, replica_summary
from mpiuq.calibration.errors import DataError, SamplerError
from mpiuq.calibration.model.likelihood import ModelPredictor, make_log_posterior
from mpiuq.calibration.model.noise import NoiseModel, noise_model

F = np.array([[2.0, 20.0, 200.0]])  # model outputs of three sizes
Y = np.array([2.5, 18.0, 230.0])  # data centres
V = np.array([0.04, 1.0, 100.0])  # replica variances
LOG_Y = np.log(np.array([2.4, 18.5, 225.0]))
LOG_V = np.array([0.01, 0.003, 0.002])


def _noise(families: tuple[str, ...], positive: bool = True) -> NoiseModel:
    return noise_model(families, [0, 1, 2], ("a", "b", "c"), ((1, 30),) * 3, LOG_Y, LOG_V, positive)


def _loglik(noise: NoiseModel, nu: float = 4.0, surrogate_var: float = 0.0) -> np.ndarray:
    sv = np.full(3, surrogate_var)
    return noise.loglik(F, np.zeros_like(F), F, Y, V, sv, np.full((1, noise.dim), nu), (0, 1, 2))


def test_gaussian_is_eq7() -> None:
    got = _loglik(_noise(("gaussian",) * 3))[0]
    np.testing.assert_allclose(got, stats.norm.logpdf(Y, F[0], np.sqrt(V)), rtol=1e-12)
    # positivity concerns the predictive draws, not the likelihood
    plain = _loglik(_noise(("gaussian",) * 3, positive=False))[0]
    np.testing.assert_array_equal(plain, got)


def test_student_t_matches_scipy_and_has_one_nu_per_data_set() -> None:
    noise = _noise(("student_t", "gaussian", "student_t"))
    assert noise.names == ("nu_a", "nu_c") and noise.nu_index == (0, -1, 1)
    assert noise.outputs_of(1) == (2,)
    got = noise.loglik(
        F, np.zeros_like(F), F, Y, V, np.zeros(3), np.array([[3.0, 9.0]]), (0, 1, 2)
    )[0]
    s = np.sqrt(V)
    t0 = stats.t.logpdf(Y[0], 3.0, F[0, 0], s[0])
    t2 = stats.t.logpdf(Y[2], 9.0, F[0, 2], s[2])
    g1 = stats.norm.logpdf(Y[1], F[0, 1], s[1])
    np.testing.assert_allclose(got, [t0, g1, t2], rtol=1e-10)


def test_student_t_tends_to_the_gaussian_and_is_heavier_tailed() -> None:
    g = _loglik(_noise(("gaussian",) * 3))[0]
    t_big = _loglik(_noise(("student_t", "student_t", "student_t")), nu=1e6)[0]
    np.testing.assert_allclose(t_big, g, atol=1e-4)
    # a 6-sd miss costs far less under nu = 2 than under the Gaussian
    far = np.array([F[0, 0] + 6 * 0.2, Y[1], Y[2]])
    noise = _noise(("student_t",) * 3)
    t2 = noise.loglik(F, 0 * F, F, far, V, np.zeros(3), np.full((1, 3), 2.0), (0, 1, 2))[0]
    gg = _noise(("gaussian",) * 3).loglik(
        F, 0 * F, F, far, V, np.zeros(3), np.zeros((1, 0)), (0, 1, 2)
    )[0]
    assert t2[0] - gg[0] > 10.0


def test_lognormal_is_a_density_of_the_geometric_centre() -> None:
    noise = _noise(("lognormal",) * 3)
    got = _loglik(noise, surrogate_var=0.0)[0]
    y = np.exp(LOG_Y)
    expected = stats.lognorm.logpdf(y, np.sqrt(LOG_V), scale=F[0])
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    # surrogate and model errors enter as relative (log-scale) variances
    with_err = _loglik(noise, surrogate_var=0.01)[0]
    w = LOG_V + 0.01 / F[0] ** 2
    np.testing.assert_allclose(
        with_err, stats.lognorm.logpdf(y, np.sqrt(w), scale=F[0]), rtol=1e-10
    )


def test_predictive_draws_respect_positivity_and_the_family() -> None:
    rng = np.random.default_rng(3)
    m = np.full((200_000, 3), 1.0)
    v = np.array([4.0, 4.0, 4.0])  # sd twice the mean: an untruncated Gaussian goes negative
    noise = noise_model(
        ("gaussian", "student_t", "lognormal"),
        [0, 1, 2],
        ("a", "b", "c"),
        ((1, 30),) * 3,
        [0.0, 0.0, 0.0],
        [0.25, 0.25, 0.25],
    )
    nu = np.full((m.shape[0], 1), 3.0)
    y = noise.draw(m, np.zeros_like(m), m, v, np.zeros(3), nu, rng)
    assert np.all(y > 0.0)
    s = 2.0
    # the truncated Gaussian's mean: m + s phi(a) / (1 - Phi(a)), a = -m / s
    a = -1.0 / s
    expected = 1.0 + s * stats.norm.pdf(a) / stats.norm.sf(a)
    assert y[:, 0].mean() == pytest.approx(expected, rel=0.01)
    assert np.median(np.log(y[:, 2])) == pytest.approx(0.0, abs=0.01)
    assert np.std(np.log(y[:, 2])) == pytest.approx(0.5, rel=0.01)
    generic = NoiseModel().draw(
        m[:, :1],
        np.zeros((m.shape[0], 1)),
        m[:, :1],
        v[:1],
        np.zeros(1),
        np.zeros((m.shape[0], 0)),
        rng,
    )
    assert (generic < 0).mean() == pytest.approx(stats.norm.cdf(-0.5), abs=0.01)


def test_log_posterior_places_noise_parameters_last() -> None:
    noise = noise_model(("student_t",), [0, 0], ("pp",), ((2.0, 20.0),), [0.0, 0.0], [1.0, 1.0])
    lp = make_log_posterior(
        ModelPredictor(lambda x: np.tile([1.0, 10.0], (len(x), 1)) * x[:, :1]),
        [1.1, 9.5],
        [0.01, 0.25],
        [0.0, 0.0],
        [0.5, 2.0],
        [2.0, 20.0],
        [1.0, 5.0],
        noise=noise,
    )
    assert lp.n_model == 1
    x = np.array([[1.0, 5.0]])
    s = np.sqrt([0.01, 0.25])
    f = np.array([1.0, 10.0])
    expected = np.sum(stats.t.logpdf([1.1, 9.5], 5.0, f, s))
    assert lp(x)[0] == pytest.approx(expected, rel=1e-10)
    assert lp(np.array([[1.0, 25.0]]))[0] == -np.inf  # nu outside its prior
    with pytest.raises(SamplerError, match="noise model covers 2 outputs: expected 3"):
        make_log_posterior(
            ModelPredictor(lambda x: x),
            [1, 2, 3],
            [1, 1, 1],
            [0, 0, 0],
            [0, 1],
            [1, 2],
            [0.5, 1.5],
            noise=noise,
        )
    with pytest.raises(SamplerError, match="likelihood 'cauchy' is unknown"):
        noise_model(("cauchy",), [0], ("a",), ((1, 2),), [0.0], [1.0])


def test_replica_summaries_follow_their_definitions() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0])
    mean, sd = replica_summary(x, "mean")
    assert mean == pytest.approx(14.5) and sd == pytest.approx(np.std(x, ddof=1))
    med, mad_sd = replica_summary(x, "median")
    assert med == 5.5 and mad_sd == pytest.approx(MAD_TO_SD * np.median(np.abs(x - 5.5)))
    tm, spread = replica_summary(x, "trimmed_mean", 0.2)
    assert tm == pytest.approx(stats.trim_mean(x, 0.2))
    w = np.clip(x, 3.0, 8.0)  # 20% winsorized: two values clipped at each end
    assert spread == pytest.approx(np.std(w, ddof=1) / 0.6)
    # the one outlier inflates the sd eight-fold, not the robust spreads
    assert sd > 8 * mad_sd and sd > 5 * spread
    with pytest.raises(DataError, match="summary 'mode' is invalid"):
        replica_summary(x, "mode")


def test_robust_spreads_estimate_sigma_for_gaussian_replicas() -> None:
    """MAD x 1.4826 is consistent for sigma; the trimmed-mean spread is sqrt(R) times its
    standard error (about 1.06 sigma at 20% trimming, its efficiency loss)."""
    rng = np.random.default_rng(0)
    reps = rng.standard_normal((3000, 200))
    mad = np.mean([replica_summary(r, "median")[1] for r in reps])
    tms = [replica_summary(r, "trimmed_mean") for r in reps]
    spread = np.mean([s for _, s in tms])
    se_times_sqrt_n = np.std([c for c, _ in tms]) * np.sqrt(200)
    assert mad == pytest.approx(1.0, abs=0.01)
    assert spread == pytest.approx(se_times_sqrt_n, rel=0.04)
    assert 1.03 < spread < 1.09
