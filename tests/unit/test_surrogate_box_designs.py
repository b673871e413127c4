"""Parameter boxes and designs: validation, node counts of the reference paper, seeding."""

from __future__ import annotations

import numpy as np
import pytest

from mpiuq.surrogate import ParameterBox, SurrogateInputError, random_design, sparse_grid_design
from mpiuq.surrogate.design.designs import sparse_grid_unit


def box7() -> ParameterBox:
    return ParameterBox.from_bounds({f"p{j}": (float(j), 2.0 * j + 1.0) for j in range(7)})


def test_box_maps_to_unit_cube_and_back() -> None:
    box = ParameterBox.from_bounds({"lat_ns": (100.0, 300.0), "bw": (1.0, 2.0)})
    x = np.array([[100.0, 2.0], [250.0, 1.25]])
    u = box.to_unit(x)
    np.testing.assert_allclose(u, [[-1.0, 1.0], [0.5, -0.5]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(box.from_unit(u), x, rtol=1e-15)
    assert box.dim == 2
    assert box.bounds() == {"lat_ns": (100.0, 300.0), "bw": (1.0, 2.0)}


@pytest.mark.parametrize(
    ("bounds", "match"),
    [
        ({"a": (1.0, 1.0)}, r"'a'.*LOW < HIGH.*LOW=1.0 HIGH=1.0"),
        ({"a": (0.0, 1.0), "b": (2.0, -1.0)}, r"'b'.*LOW < HIGH"),
        ({"a": (0.0, np.inf)}, r"'a'.*finite"),
        ({"a": (np.nan, 1.0)}, r"'a'.*finite"),
        ({"": (0.0, 1.0)}, r"non-empty"),
        ({}, r"at least one parameter"),
    ],
)
def test_box_rejects_bad_bounds(bounds: dict[str, tuple[float, float]], match: str) -> None:
    with pytest.raises(SurrogateInputError, match=match):
        ParameterBox.from_bounds(bounds)


def test_box_rejects_repeated_names_and_bad_shapes() -> None:
    with pytest.raises(SurrogateInputError, match="'a' is repeated"):
        ParameterBox(names=("a", "a"), lower=np.zeros(2), upper=np.ones(2))
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (0.0, 1.0)})
    with pytest.raises(SurrogateInputError, match=r"shape \(n, 2\).*got shape \(4, 3\)"):
        box.to_unit(np.zeros((4, 3)))


@pytest.mark.parametrize(("level", "expected"), [(1, 15), (2, 113), (3, 589), (4, 2465)])
def test_sparse_grid_node_counts_in_7d(level: int, expected: int) -> None:
    # 589 and 2465 are the counts of the reference study (appendix of paper 004).
    x = sparse_grid_design(box7(), level)
    assert x.shape == (expected, 7)
    assert np.unique(x, axis=0).shape[0] == expected
    assert box7().contains(x).all()


def test_sparse_grid_is_deterministic_nested_and_integrates_exactly() -> None:
    a = sparse_grid_unit(3, 3)
    b = sparse_grid_unit(3, 3)
    np.testing.assert_array_equal(a, b)
    coarse = {tuple(row) for row in sparse_grid_unit(3, 2).round(12).tolist()}
    fine = {tuple(row) for row in a.round(12).tolist()}
    assert coarse <= fine  # Clenshaw-Curtis with growth: nested levels
    # the 1-D level-l rule has 2^l + 1 Chebyshev extrema cos(pi k / 2^l)
    line = np.sort(sparse_grid_unit(1, 3)[:, 0])
    np.testing.assert_allclose(line, np.sort(np.cos(np.pi * np.arange(9) / 8)), atol=1e-15)


def test_sparse_grid_rejects_bad_level() -> None:
    with pytest.raises(SurrogateInputError, match="level must be an integer >= 0, got -1"):
        sparse_grid_design(box7(), -1)


@pytest.mark.parametrize("method", ["sobol", "lhs", "uniform"])
def test_random_design_is_seeded_and_inside_box(method: str) -> None:
    box = box7()
    a = random_design(box, 100, 42, method)
    b = random_design(box, 100, np.random.default_rng(42), method)
    c = random_design(box, 100, 43, method)
    assert a.shape == (100, 7)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert box.contains(a).all()
    # roughly uniform: every coordinate's mean within 4 standard errors of the centre
    u = box.to_unit(a)
    assert np.all(np.abs(u.mean(axis=0)) < 4 * np.sqrt(1 / 3 / 100))


def test_latin_hypercube_has_one_point_per_stratum() -> None:
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (5.0, 6.0)})
    x = random_design(box, 50, 0, "lhs")
    strata = np.floor((x - box.lower) / (box.upper - box.lower) * 50).astype(int)
    for j in range(2):
        assert sorted(strata[:, j].tolist()) == list(range(50))


def test_random_design_rejects_bad_input() -> None:
    with pytest.raises(SurrogateInputError, match="unknown random design method 'grid'"):
        random_design(box7(), 10, 0, "grid")
    with pytest.raises(SurrogateInputError, match="integer >= 1, got 0"):
        random_design(box7(), 0, 0)
