"""The pieces of built-in validation without a campaign run: the ``[validation]`` table's
errors, the discrepancy transfer rule, the predictive band against Gaussian quantiles,
the binomial rule, the prior-bound check, the walkers and moves defaults, and the
prediction warnings."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

from mpiuq.calibration.checking.checks import coverage_threshold
from mpiuq.calibration.config import parse_campaign
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.transfer import (
    RegimeTerm,
    Target,
    predictive_band,
    regime_terms,
    term_source,
    transferred_discrepancy,
)
from mpiuq.calibration.pipeline.budget import campaign_cost, check_campaign_budget
from mpiuq.calibration.reporting.bounds import EDGE_FRACTION, bound_shares, bounds_check
from mpiuq.calibration.reporting.prediction import (
    CalibrationScope,
    SeriesScope,
    benchmark_warnings,
    message_warnings,
    predict,
)
from mpiuq.calibration.units import unit_of

JOINT: dict[str, Any] = {
    "name": "j",
    "seed": 1,
    "simulator": {"fixed": {"small_max_bytes": 150, "eager_max_bytes": 17408}},
    "parameters": {
        "post_header_delay_us": [0.1, 3.0],
        "memory_bw_GBps": [2.0, 25.0],
        "link_bw_GBps": [3.0, 8.0],
        "injection_bw_GBps": [3.0, 8.0],
        "post_rdma_delay_us": [0.05, 3.0],
        "rdma_pin_latency_us": [0.2, 10.0],
        "rdma_pin_per_page_ns": [1.0, 100.0],
        "hop_latency_ns": [20.0, 500.0],
    },
    "data": [
        {"label": b, "path": f"{b}.csv", "benchmark": b, "sizes_per_protocol": 6}
        for b in ("pingpong_half_rtt", "isend", "recv_arrived")
    ],
    "discrepancy": {"model": "regime"},
}


def _with_validation(validation: Any) -> dict[str, Any]:
    raw = copy.deepcopy(JOINT)
    raw["validation"] = validation
    return raw


def test_validation_table_parses_holdouts_and_defaults(tmp_path: Path) -> None:
    c = parse_campaign(
        _with_validation(
            {"holdout": [{"series": "isend"}, {"series": "pingpong_half_rtt", "min_bytes": 100000}]}
        ),
        tmp_path,
    )
    v = c.validation
    assert v.present and v.unselected_sizes and v.draws == 1000
    assert [h.describe() for h in v.holdouts] == ["isend", "pingpong_half_rtt >= 100000 B"]
    assert v.wholly_held_out("isend") and not v.wholly_held_out("pingpong_half_rtt")
    assert v.holdouts[1].covers(100000) and not v.holdouts[1].covers(99999)
    assert v.holdouts[0].covers(0)  # a whole series: its 0 B measurements too (then skipped)
    assert not parse_campaign(copy.deepcopy(JOINT), tmp_path).validation.present


@pytest.mark.parametrize(
    ("validation", "key", "match"),
    [
        ({"hold_out": []}, "validation.hold_out", "one of the keys"),
        ({"holdout": {"series": "isend"}}, "validation.holdout", "a list of tables"),
        ({"holdout": [{"series": "osu_bw"}]}, "validation.holdout[0].series", "label of a data"),
        ({"holdout": [{"min_bytes": 10}]}, "validation.holdout[0].series", "label of a data"),
        ({"holdout": [{"series": "isend", "bytes": 1}]}, "validation.holdout[0].bytes", "keys"),
        (
            {"holdout": [{"series": "isend", "min_bytes": 10, "max_bytes": 5}]},
            "validation.holdout[0].max_bytes",
            ">= validation.holdout\\[0\\].min_bytes = 10",
        ),
        (
            {"holdout": [{"series": "isend", "min_bytes": 0}]},
            "validation.holdout[0].min_bytes",
            "a whole number of bytes",
        ),
        (
            {"holdout": [{"series": "isend", "max_bytes": 1000}, {"series": "isend"}]},
            "validation.holdout[1].series",
            "not overlapping the earlier hold-out",
        ),
        (
            {"holdout": [{"series": s} for s in ("pingpong_half_rtt", "isend", "recv_arrived")]},
            "validation.holdout",
            "at least one data table left to fit",
        ),
        ({"draws": 10}, "validation.draws", "an integer in \\[100, 1000000\\]"),
        ({"unselected_sizes": "yes"}, "validation.unselected_sizes", "true or false"),
    ],
)
def test_bad_validation_tables_name_the_key(
    tmp_path: Path, validation: Any, key: str, match: str
) -> None:
    with pytest.raises(CampaignError, match=match) as err:
        parse_campaign(_with_validation(validation), tmp_path)
    assert err.value.key == key


def test_default_walkers_follow_the_dimension_and_moves_default_to_de(tmp_path: Path) -> None:
    c = parse_campaign(copy.deepcopy(JOINT), tmp_path)
    # 8 parameters + 3 series x 3 regimes of spreads = 17 sampled dimensions
    assert campaign_cost(c).dim == 17
    assert c.calibration.walkers == 2 * 17 + 2 and c.calibration.moves == "de"
    check_campaign_budget(c)  # the joint campaign with default settings is not refused
    small = copy.deepcopy(JOINT)
    small["data"] = small["data"][:1]
    small["discrepancy"] = {"model": "none"}
    assert parse_campaign(small, tmp_path).calibration.walkers == 32
    explicit = copy.deepcopy(JOINT)
    explicit["calibration"] = {"walkers": 32}
    with pytest.raises(CampaignError, match=r"leave it out for the default") as err:
        check_campaign_budget(parse_campaign(explicit, tmp_path))
    assert err.value.key == "calibration.walkers"


def test_series_held_out_whole_are_not_sampled(tmp_path: Path) -> None:
    raw = _with_validation({"holdout": [{"series": "isend"}, {"series": "recv_arrived"}]})
    raw["calibration"] = {"walkers": 32}
    c = parse_campaign(raw, tmp_path)
    assert [t.label for t in c.fitted_tables] == ["pingpong_half_rtt"]
    assert campaign_cost(c).dim == 8 + 3  # one series' regimes: 32 walkers suffice
    check_campaign_budget(c)


def test_units_come_from_the_table_or_the_name_suffix() -> None:
    assert unit_of("post_header_delay_us") == "us"
    assert unit_of("regime1_latency_us") == "us" and unit_of("regime0_copy_bw_GBps") == "GB/s"
    assert unit_of("regime2_segment_bytes") == "B" and unit_of("sd_rel_eager") == ""


# --- transfer of the discrepancy ------------------------------------------------------------

TERMS = (
    RegimeTerm("pp", "pingpong", "eager", None, 0),
    RegimeTerm("pp", "pingpong", "rendezvous", None, 1),
    RegimeTerm("bw", "stream", "eager", None, 2),
)


@pytest.mark.parametrize(
    ("target", "source", "used"),
    [
        (Target("pp", "pingpong", "eager"), "fitted", (0,)),
        (Target("pp2", "pingpong", "eager"), "same benchmark", (0,)),
        (Target("isend", "isend", "eager"), "other benchmarks", (0, 2)),
        (Target("bw", "stream", "rendezvous"), "other benchmarks", (1,)),
        (Target(None, "isend", "small"), "none", ()),
    ],
)
def test_term_source_prefers_the_series_then_the_benchmark_then_the_regime(
    target: Target, source: str, used: tuple[int, ...]
) -> None:
    assert term_source(TERMS, target) == (source, used)


def test_transferred_spread_is_the_largest_of_the_regime_per_draw() -> None:
    draws = np.array([[0.1, 0.02, 0.3], [0.2, 0.04, 0.05]])
    targets = [Target("pp", "pingpong", "eager"), Target("x", "isend", "eager")]
    bias, spread, sources = transferred_discrepancy(TERMS, draws, targets)
    assert sources == ("fitted", "other benchmarks")
    np.testing.assert_array_equal(spread, [[0.1, 0.3], [0.2, 0.2]])
    np.testing.assert_array_equal(bias, 0.0)


def test_regime_terms_find_the_columns_of_one_or_several_series() -> None:
    one = regime_terms(
        ["pp", "pp"],
        ["pingpong"] * 2,
        ["small", "eager"],
        ["a", "sd_rel_small", "sd_rel_eager"],
        False,
    )
    assert [(t.regime, t.sd_column) for t in one] == [("small", 1), ("eager", 2)]
    names = ["a", "sd_rel_pp_small", "sd_rel_bw_small"]
    two = regime_terms(["pp", "bw"], ["pingpong", "stream"], ["small", "small"], names, True)
    assert [(t.series, t.sd_column) for t in two] == [("pp", 1), ("bw", 2)]
    # [discrepancy] per_series = false: both series use the regime's one shared column,
    # and a series the campaign did not fit takes it too
    shared = regime_terms(
        ["pp", "bw"], ["pingpong", "stream"], ["small", "small"], ["a", "sd_rel_small"], True
    )
    assert [(t.series, t.sd_column) for t in shared] == [("pp", 1), ("bw", 1)]
    draws = np.array([[1.0, 0.07], [1.0, 0.02]])
    _, spread, sources = transferred_discrepancy(
        shared, draws, [Target("recv", "recv_arrived", "small")]
    )
    assert sources == ("other benchmarks",)
    np.testing.assert_array_equal(spread, [[0.07], [0.02]])


def test_predictive_band_matches_the_gaussian_quantiles() -> None:
    """Independent reference: y ~ N(f (1 + b), v + (s f)^2) has 5/95% quantiles
    f (1 + b) -+ 1.645 sd; 200,000 draws place them to ~0.3% of the sd (5 sigma below
    the 2% tolerance), far from zero so the positive truncation does not act."""
    n = 200_000
    f = np.full((n, 2), 10.0)
    bias = np.tile([0.1, 0.0], (n, 1))
    spread = np.tile([0.0, 0.05], (n, 1))
    v = np.array([0.25, 0.01])
    band = predictive_band(
        f, bias, spread, ["gaussian"] * 2, v, np.zeros(2), np.ones((n, 2)), np.random.default_rng(1)
    )
    sd = np.sqrt(v + np.array([0.0, 0.5**2]))
    centre = np.array([11.0, 10.0])
    np.testing.assert_allclose(band.lo, centre + norm.ppf(0.05) * sd, atol=0.02 * sd.max())
    np.testing.assert_allclose(band.hi, centre + norm.ppf(0.95) * sd, atol=0.02 * sd.max())
    np.testing.assert_allclose(band.median, centre, atol=0.02 * sd.max())
    assert band.inside([11.0, 12.0]).tolist() == [True, False]
    np.testing.assert_allclose(band.relative_error([11.0, 8.0]), [0.0, 0.25], atol=0.01)


def test_log_normal_band_matches_its_quantiles() -> None:
    n = 200_000
    f = np.full((n, 1), 5.0)
    band = predictive_band(
        f,
        np.zeros((n, 1)),
        np.zeros((n, 1)),
        ["lognormal"],
        np.zeros(1),
        np.array([0.04]),
        np.ones((n, 1)),
        np.random.default_rng(2),
    )
    np.testing.assert_allclose(band.hi, 5.0 * np.exp(0.2 * norm.ppf(0.95)), rtol=0.01)


def test_binomial_threshold_rule() -> None:
    # the documented figures: 13 of 18, 425 of 490 at alpha = 1%
    assert coverage_threshold(18, 0.01) == 13 and coverage_threshold(490, 0.01) == 425
    # an independent check of the quantile: P(X < t) <= alpha < P(X <= t) for X ~ Bin(n, 0.9)
    from scipy.stats import binom

    for n in (4, 23, 131):
        t = coverage_threshold(n, 0.01)
        assert binom.cdf(t - 1, n, 0.9) < 0.01 <= binom.cdf(t, n, 0.9)


# --- prior bounds ----------------------------------------------------------------------------


def test_bound_check_names_a_pressed_parameter_and_spares_a_flat_one() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    flat = rng.uniform(0.0, 10.0, n)  # posterior = prior: 1% of draws per edge band
    pressed = np.minimum(rng.exponential(0.3, n), 10.0)  # piles up at its lower bound 0
    spread = rng.uniform(0.19, 0.2, n)  # a discrepancy spread at its upper bound
    at_zero = rng.exponential(0.001, n)  # a spread at 0: no model error, not reported
    draws = np.stack([flat, 14.0 - pressed, spread, at_zero], axis=1)
    names = ("memory_bw_GBps", "link_bw_GBps", "sd_rel_eager", "sd_rel_small")
    shares = bound_shares(
        draws, names, np.array([0.0, 4.0, 0.0, 0.0]), np.array([10.0, 14.0, 0.2, 0.2]), 2, 2
    )
    assert shares[0].pressed() == [] and abs(shares[0].upper_share - EDGE_FRACTION) < 0.01
    check = bounds_check(shares, {n: unit_of(n) for n in names})
    assert not check.passed and check.severity == "warn"
    assert "link_bw_GBps at its upper bound 14 GB/s" in check.message
    assert "sd_rel_eager at its upper bound 0.2" in check.message
    assert "memory_bw_GBps" not in check.message and "sd_rel_small" not in check.message
    ok = bounds_check(shares[:1], {})
    assert ok.passed and "no posterior presses" in ok.message


# --- prediction scope and warnings -------------------------------------------------------------


SCOPE = CalibrationScope(
    "c",
    Path("summary.json"),
    (
        SeriesScope(
            "pp",
            "pingpong_half_rtt",
            "pingpong",
            "gaussian",
            (1, 100, 4096),
            ("small", "small", "eager"),
            (0.05, 0.05, 0.1),
        ),
    ),
    "regime",
)


def test_benchmark_warnings_say_what_the_calibration_did_not_see() -> None:
    assert benchmark_warnings(SCOPE, "pingpong", [1, 4096], ["small", "eager"]) == []
    w = benchmark_warnings(SCOPE, "isend", [10, 8192, 10**6], ["small", "eager", "rendezvous"])
    assert any("benchmark 'isend' was not in the calibration data of c" in x for x in w)
    assert any("2 of 3 sizes lie outside the range" in x and "(1-4096 B)" in x for x in w)
    assert any("regime 'rendezvous' had no calibration data" in x for x in w)


def test_message_warnings_count_messages_outside_the_range_and_in_empty_regimes() -> None:
    w = message_warnings(SCOPE, [8, 8192, 10**6], [10, 5, 1], ["small", "eager", "rendezvous"])
    assert any("6 of 16 messages (2 distinct sizes" in x for x in w)
    assert any("regime 'rendezvous' had no calibration data: 1 of 16 messages" in x for x in w)
    assert message_warnings(SCOPE, [0, 8], [2, 3], ["small", "small"]) == []


def test_prediction_carries_the_discrepancy_and_says_what_it_is() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    f = np.full((n, 2), 10.0)
    names = ("sd_rel_small", "sd_rel_eager")
    draws = np.tile([0.0, 0.3], (n, 1))
    p = predict(SCOPE, "pingpong", ["small", "eager"], f, names, draws, rng)
    assert p.label == "posterior predictive: parameters + discrepancy + noise"
    assert p.sources == ("same benchmark", "same benchmark")
    # small: noise 5% only; eager: noise 10% and a 30% model-error spread
    width = np.quantile(p.time_us, 0.95, axis=0) - np.quantile(p.time_us, 0.05, axis=0)
    expected = 2 * 1.645 * 10.0 * np.array([0.05, np.hypot(0.1, 0.3)])
    np.testing.assert_allclose(width, expected, rtol=0.03)
    bare = predict(SCOPE, "pingpong", ["small"], f[:, :1], (), np.zeros((n, 0)), rng)
    assert "NOT the discrepancy" in bare.label
