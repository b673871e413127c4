"""Legendre chaos fit: exactness on polynomials, LOO identity, moments, gradients, errors."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest
from numpy.polynomial import legendre as npleg

from mpiuq.surrogate import (
    ParameterBox,
    RankDeficiencyWarning,
    RankDeficientError,
    SurrogateInputError,
    fit_pce,
    load_pce,
    random_design,
    save_pce,
    sparse_grid_design,
)
from mpiuq.surrogate.chaos.basis import n_terms, total_order_indices
from mpiuq.surrogate.chaos.pce import design_matrix

BOX3 = ParameterBox.from_bounds({"a": (-2.0, 1.0), "b": (10.0, 14.0), "c": (0.5, 0.75)})


def poly3(x: np.ndarray) -> np.ndarray:
    """Two outputs of total degree <= 4 in the box coordinates."""
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    y0 = 3.0 + a * (b - 12.0) ** 2 - 2.0 * (c * 4.0 - 2.5) ** 4 + a * b * c + b**3 / 100.0
    y1 = -a + 0.5 * a**2 * c * 8.0
    return np.stack([y0, y1], axis=-1)


def poly3_grad(x: np.ndarray) -> np.ndarray:
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    g0 = np.stack(
        [
            (b - 12.0) ** 2 + b * c,
            2.0 * a * (b - 12.0) + a * c + 3.0 * b**2 / 100.0,
            -2.0 * 4.0 * 4.0 * (c * 4.0 - 2.5) ** 3 + a * b,
        ],
        axis=-1,
    )
    g1 = np.stack([-1.0 + 8.0 * a * c, np.zeros_like(a), 4.0 * a**2], axis=-1)
    return np.stack([g0, g1], axis=-2)


def gauss_moments(f: object, box: ParameterBox, n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance under the uniform law by tensor Gauss-Legendre quadrature.

    Exact for polynomials of degree <= 2n - 1 per variable (here degree 8 for f^2).
    """
    nodes, weights = npleg.leggauss(n)
    grid = np.array(list(itertools.product(nodes, repeat=box.dim)))
    w = np.prod(np.array(list(itertools.product(weights / 2.0, repeat=box.dim))), axis=1)
    y = f(box.from_unit(grid))  # type: ignore[operator]
    mean = w @ y
    return mean, w @ (y - mean) ** 2


def test_reproduces_polynomials_inside_the_truncation() -> None:
    x = random_design(BOX3, 80, 1)
    pce = fit_pce(x, poly3(x), BOX3, order=4, output_names=["y0", "y1"])
    assert pce.n_terms == 35 and pce.rank == 35
    xt = random_design(BOX3, 500, 2, "uniform")
    scale = np.abs(poly3(xt)).max(axis=0)
    # exact up to the rounding of a well-conditioned least-squares solve
    np.testing.assert_allclose(pce.predict(xt), poly3(xt), rtol=0, atol=1e-11 * scale.max())
    assert np.all(pce.loo_rmse < 1e-10 * scale)
    mean, var = gauss_moments(poly3, BOX3)
    np.testing.assert_allclose(pce.mean(), mean, rtol=1e-12)
    np.testing.assert_allclose(pce.variance(), var, rtol=1e-10)


def test_higher_order_than_needed_still_exact() -> None:
    x = sparse_grid_design(BOX3, 4)
    pce = fit_pce(x, poly3(x), BOX3, order=6)
    xt = random_design(BOX3, 200, 5)
    np.testing.assert_allclose(pce.predict(xt), poly3(xt), rtol=0, atol=1e-9)


def test_design_matrix_matches_numpy_legendre() -> None:
    # Independent reference: numpy's Legendre series evaluation, one factor per dimension.
    rng = np.random.default_rng(3)
    u = rng.uniform(-1.0, 1.0, (40, 3))
    mi = total_order_indices(3, 5)
    expected = np.ones((40, mi.shape[0]))
    for k, alpha in enumerate(mi):
        for j, deg in enumerate(alpha):
            expected[:, k] *= npleg.legval(u[:, j], np.eye(deg + 1)[deg])
    np.testing.assert_allclose(design_matrix(u, mi, 5), expected, rtol=1e-13, atol=1e-13)
    assert mi.shape[0] == n_terms(3, 5) == 56
    np.testing.assert_array_equal(mi[0], 0)


def test_loo_errors_equal_brute_force_refits() -> None:
    box = ParameterBox.from_bounds({"s": (0.0, 1.0), "t": (-3.0, 3.0)})
    x = random_design(box, 25, 7, "uniform")
    y = np.stack([np.exp(x[:, 0]) * np.sin(x[:, 1]), np.cos(x[:, 0] * x[:, 1])], axis=1)
    pce = fit_pce(x, y, box, order=3)
    errors = np.empty_like(y)
    for i in range(x.shape[0]):
        keep = np.arange(x.shape[0]) != i
        refit = fit_pce(x[keep], y[keep], box, order=3)
        errors[i] = y[i] - refit.predict(x[i])
    brute = np.sqrt(np.mean(errors**2, axis=0))
    # the hat-matrix identity is exact; differences are rounding of 25 small solves
    np.testing.assert_allclose(pce.loo_rmse, brute, rtol=1e-9)
    np.testing.assert_allclose(pce.loo_rel_error, brute / y.std(axis=0), rtol=1e-9)


def test_gradient_matches_analytic_derivatives() -> None:
    x = random_design(BOX3, 80, 11)
    pce = fit_pce(x, poly3(x), BOX3, order=4)
    xt = random_design(BOX3, 30, 12)
    g = pce.gradient(xt)
    assert g.shape == (30, 2, 3)
    np.testing.assert_allclose(g, poly3_grad(xt), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(pce.gradient(xt[0]), poly3_grad(xt[0]), rtol=1e-8, atol=1e-8)


def test_predict_shapes_and_large_batches() -> None:
    x = random_design(BOX3, 80, 1)
    pce = fit_pce(x, poly3(x)[:, 0], BOX3, order=4)
    assert pce.output_names == ("y0",)
    assert pce.predict(x[0]).shape == (1,)
    big = random_design(BOX3, 5000, 4, "uniform")  # several evaluation blocks plus a tail
    np.testing.assert_allclose(pce.predict(big)[:, 0], poly3(big)[:, 0], atol=1e-9)


def test_constant_output_has_zero_indices_and_no_warnings() -> None:
    x = random_design(BOX3, 60, 1)
    y = np.stack([np.full(60, 4.0), np.zeros(60), x[:, 0]], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pce = fit_pce(x, y, BOX3, order=2)
        first, total = pce.sobol_first(), pce.sobol_total()
    np.testing.assert_array_equal(first[:2], 0.0)
    np.testing.assert_array_equal(total[:2], 0.0)
    np.testing.assert_allclose(total[2], [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(pce.loo_rel_error[:2], 0.0)
    np.testing.assert_allclose(pce.mean()[:2], [4.0, 0.0], atol=1e-12)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda x, y: (x, np.where(np.arange(40)[:, None] == 7, np.nan, y)), r"row 7.*nan"),
        (lambda x, y: (x, np.where(np.arange(40)[:, None] == 3, np.inf, y)), r"row 3.*inf"),
        (lambda x, y: (x, y[:-1]), "outputs have 39 rows but the design has 40 rows"),
        (lambda x, y: (x[:, :2], y), r"shape \(n, 3\).*got \(40, 2\)"),
        (lambda x, y: (x + np.array([5.0, 0, 0]), y), "outside the box"),
    ],
)
def test_fit_rejects_bad_data(mutate: object, match: str) -> None:
    x = random_design(BOX3, 40, 1)
    xb, yb = mutate(x, poly3(x))  # type: ignore[operator]
    with pytest.raises(SurrogateInputError, match=match):
        fit_pce(xb, yb, BOX3, order=2)


def test_fit_rejects_order_too_high_and_bad_names() -> None:
    x = random_design(BOX3, 35, 1)
    with pytest.raises(SurrogateInputError, match=r"order 4 is too high for 35 points.*35 terms"):
        fit_pce(x, poly3(x), BOX3, order=4)
    with pytest.raises(SurrogateInputError, match="order must be an integer >= 0, got -1"):
        fit_pce(x, poly3(x), BOX3, order=-1)
    with pytest.raises(SurrogateInputError, match="expected 2 output names"):
        fit_pce(x, poly3(x), BOX3, order=2, output_names=["only"])
    with pytest.raises(SurrogateInputError, match="unique"):
        fit_pce(x, poly3(x), BOX3, order=2, output_names=["z", "z"])


def test_rank_deficient_design_is_reported() -> None:
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (0.0, 1.0)})
    t = np.linspace(0.0, 1.0, 30)
    x = np.stack([t, t], axis=1)  # all points on the diagonal: a*b, a^2, b^2 not separable
    y = np.sin(3 * t)
    with pytest.raises(RankDeficientError, match=r"numerical rank 3 < 6") as info:
        fit_pce(x, y, box, order=2)
    assert (info.value.rank, info.value.n_terms) == (3, 6)
    with pytest.warns(RankDeficiencyWarning, match="rank deficient"):
        pce = fit_pce(x, y, box, order=2, on_rank_deficiency="warn")
    assert pce.rank == 3
    np.testing.assert_allclose(pce.predict(x)[:, 0], y, atol=0.1)


def test_hdf5_round_trip_predicts_identically(tmp_path: Path) -> None:
    x = random_design(BOX3, 80, 1)
    pce = fit_pce(x, poly3(x) + np.sin(x[:, :1]), BOX3, order=3, output_names=["t_us", "bw"])
    path = tmp_path / "s.h5"
    save_pce(pce, path)
    back = load_pce(path)
    xt = random_design(BOX3, 300, 9)
    np.testing.assert_array_equal(back.predict(xt), pce.predict(xt))
    np.testing.assert_array_equal(back.gradient(xt[:5]), pce.gradient(xt[:5]))
    assert back.box == pce.box
    assert (back.order, back.rank, back.output_names) == (3, pce.rank, ("t_us", "bw"))
    for name in ("multi_indices", "coefficients", "loo_rmse", "loo_rel_error", "train_x"):
        np.testing.assert_array_equal(getattr(back, name), getattr(pce, name))
    np.testing.assert_array_equal(back.sobol_total(), pce.sobol_total())


def test_load_rejects_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "something-else"
    with pytest.raises(
        SurrogateInputError,
        match=r"other\.h5 is not a readable surrogate file \(it has no checksum",
    ):
        load_pce(path)


def test_paper_design_supports_order_4_but_level_3_does_not() -> None:
    # Reference study: level-4 grid (2465 nodes) with the 330-term order-4 expansion.
    box = ParameterBox.from_bounds({f"lambda{j}": (0.0, 1.0 + j) for j in range(7)})
    x4 = sparse_grid_design(box, 4)
    pce = fit_pce(x4, np.sin(box.to_unit(x4)).sum(axis=1), box, order=4)
    assert (pce.n_terms, pce.rank) == (330, 330)
    # The level-3 grid has 589 > 330 nodes but aliases order-4 terms (rank 295).
    x3 = sparse_grid_design(box, 3)
    with pytest.raises(RankDeficientError, match="589 points x 330 terms"):
        fit_pce(x3, np.sin(box.to_unit(x3)).sum(axis=1), box, order=4)
