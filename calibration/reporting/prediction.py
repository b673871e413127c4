"""Honest predictions from a finished campaign: the posterior predictive, and where it is
an extrapolation.

:class:`CalibrationScope` is what a campaign calibrated, read from its ``summary.json``:
every data series (label, simulator benchmark, likelihood) with its fitted sizes, their
regimes and relative replica spreads. From it:

:func:`predict`
    the posterior predictive of a benchmark at some sizes from the simulator's outputs at
    posterior draws: the discrepancy of the draws carried over by the rule of
    :mod:`~mpiuq.calibration.model.transfer` (no series: the same benchmark's terms, else
    other benchmarks' of the regime), and noise of the calibration data's relative
    replica spread (median over the fitted sizes of the same benchmark and regime, else
    of the benchmark, else of the regime, else of all) in the family of the benchmark's
    series (Gaussian, truncated positive, without one);
:func:`benchmark_warnings`
    what the prediction rests on that the calibration did not see: a benchmark kind
    absent from the calibration data, sizes outside its calibrated range, regimes
    without data;
:func:`message_warnings`
    the same for the messages of a replayed trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import ResultsError
from mpiuq.calibration.model.families.registry import likelihood_family
from mpiuq.calibration.model.transfer import (
    RegimeTerm,
    Target,
    predictive_band,
    regime_terms,
    transferred_discrepancy,
)

FloatArray = npt.NDArray[np.float64]

#: Sizes listed in a warning before "...".
LISTED_SIZES = 5


@dataclass(frozen=True, slots=True)
class SeriesScope:
    """One calibrated data series.

    Attributes
    ----------
    label, benchmark, model, likelihood
        The data table's label, CSV benchmark label, simulator benchmark and likelihood.
    sizes_bytes, regimes, relative_sd
        Fitted sizes, their regimes and replica spread / centre.
    """

    label: str
    benchmark: str
    model: str
    likelihood: str
    sizes_bytes: tuple[int, ...]
    regimes: tuple[str, ...]
    relative_sd: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class CalibrationScope:
    """What a campaign calibrated (see the module docstring).

    Attributes
    ----------
    campaign
        Campaign name.
    source
        The ``summary.json`` read.
    series
        The fitted data series.
    discrepancy_model
        ``"none"`` or ``"regime"``.
    """

    campaign: str
    source: Path
    series: tuple[SeriesScope, ...]
    discrepancy_model: str

    @property
    def models(self) -> tuple[str, ...]:
        """Simulator benchmarks of the series, in order, without repeats."""
        return tuple(dict.fromkeys(s.model for s in self.series))

    def sizes_of(self, model: str | None = None) -> tuple[int, ...]:
        """Calibrated sizes of the series of ``model`` (every series: None)."""
        return tuple(
            sz for s in self.series if model is None or s.model == model for sz in s.sizes_bytes
        )

    def regimes_of(self, model: str | None = None) -> set[str]:
        """Regimes with calibrated sizes of ``model`` (every series: None)."""
        return {r for s in self.series if model is None or s.model == model for r in s.regimes}

    def terms(self, names: Sequence[str]) -> tuple[RegimeTerm, ...]:
        """The discrepancy terms among draw columns ``names``."""
        rows = [(s, r) for s in self.series for r in s.regimes]
        return regime_terms(
            [s.label for s, _ in rows],
            [s.model for s, _ in rows],
            [r for _, r in rows],
            names,
            len(self.series) > 1,
        )


def scope_from_summary(file: Path, summary: Mapping[str, Any]) -> CalibrationScope:
    """The scope of a campaign from its ``summary.json`` content.

    Raises
    ------
    ResultsError
        If the summary lacks its data sets or predictive sizes (names the file and key).
    """
    try:
        tables = {
            str(d["label"]): (str(d["benchmark"]), str(d["model"]), str(d["likelihood"]))
            for d in summary["data_sets"]
        }
        rows: dict[str, list[tuple[int, str, float]]] = {label: [] for label in tables}
        for row in summary["predictive"]["sizes"]:
            mean, sd = float(row["data_mean"]), float(row["data_sd"])
            rows[str(row["data_set"])].append(
                (int(row["size_bytes"]), str(row["protocol"]), abs(sd / mean) if mean else 0.0)
            )
        model = str(summary["discrepancy"]["model"])
    except (KeyError, TypeError, ValueError) as exc:
        what = f"key {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else str(exc)
        raise ResultsError(
            f"{file} does not say what its campaign calibrated ({what}): expected the "
            "data_sets, predictive.sizes and discrepancy of a summary.json written by "
            "'mpiuq campaign run'"
        ) from None
    series = tuple(
        SeriesScope(
            label,
            bench,
            mdl,
            like,
            tuple(r[0] for r in rows[label]),
            tuple(r[1] for r in rows[label]),
            tuple(r[2] for r in rows[label]),
        )
        for label, (bench, mdl, like) in tables.items()
    )
    return CalibrationScope(str(summary.get("name", "")), file, series, model)


@dataclass(frozen=True, slots=True)
class Prediction:
    """Posterior predictive of a benchmark's time at some sizes.

    Attributes
    ----------
    label
        What the band is (parameters, discrepancy, noise; or what it lacks).
    time_us
        Predictive draws of the time per message, shape (n, n_sizes).
    sources
        Discrepancy source of every size (:data:`~mpiuq.calibration.model.transfer.SOURCES`).
    relative_sd
        Relative noise level of every size.
    """

    label: str
    time_us: FloatArray
    sources: tuple[str, ...]
    relative_sd: FloatArray


def predict(
    scope: CalibrationScope,
    model: str,
    regimes: Sequence[str],
    time_us: FloatArray,
    names: Sequence[str],
    draws: FloatArray,
    rng: np.random.Generator,
) -> Prediction:
    """The posterior predictive of benchmark ``model`` from its simulated times.

    Parameters
    ----------
    scope
        The campaign's scope.
    model
        Simulator benchmark predicted.
    regimes
        Regime of every size.
    time_us
        Simulated time per message at every posterior draw, shape (n, n_sizes).
    names, draws
        The draws' discrepancy and noise columns (names) and values, shape (n, k): the
        same draws as ``time_us``.
    rng
        Noise generator.
    """
    f = np.atleast_2d(np.asarray(time_us, dtype=np.float64))
    n, m = f.shape
    x = np.asarray(draws, dtype=np.float64).reshape(n, len(names))
    terms = scope.terms(names)
    targets = [Target(None, model, r) for r in regimes]
    bias, spread, sources = transferred_discrepancy(terms, x, targets)
    rel = np.array([_relative_sd(scope, model, r) for r in regimes])
    family, nu = _family(scope, model, names, x, m)
    band = predictive_band(
        f,
        bias,
        spread,
        [family] * m,
        (rel * f) ** 2,
        rel**2,
        nu,
        rng,
    )
    if scope.discrepancy_model == "none":
        label = "posterior predictive: parameters + noise (the campaign has no discrepancy model)"
    elif not terms:
        label = (
            "posterior predictive: parameters + noise; NOT the discrepancy (the posterior "
            f"draws of {scope.campaign} hold no discrepancy terms: re-run the campaign)"
        )
    else:
        label = "posterior predictive: parameters + discrepancy + noise"
    return Prediction(label, band.draws, sources, rel)


def _relative_sd(scope: CalibrationScope, model: str, regime: str) -> float:
    """Median relative replica spread of the best-matching calibrated sizes."""
    for keep in (
        lambda s, r: s.model == model and r == regime,
        lambda s, r: s.model == model,
        lambda s, r: r == regime,
        lambda s, r: True,
    ):
        values = [
            v
            for s in scope.series
            for r, v in zip(s.regimes, s.relative_sd, strict=True)
            if keep(s, r)
        ]
        if values:
            return float(np.median(values))
    return 0.0


def _family(
    scope: CalibrationScope, model: str, names: Sequence[str], x: FloatArray, m: int
) -> tuple[str, FloatArray]:
    """Likelihood family of the benchmark's first series (Gaussian without one) and its
    shape parameter (Student-t's degrees of freedom) at every draw (its draws, else
    Gaussian)."""
    series = next((s for s in scope.series if s.model == model), None)
    nu = np.ones((x.shape[0], m))
    if series is None:
        return "gaussian", nu
    shape = likelihood_family(series.likelihood).shape
    if shape is not None:
        name = f"{shape.name}_{series.label}"
        if name not in names:
            return "gaussian", nu
        return series.likelihood, np.repeat(x[:, list(names).index(name)][:, None], m, axis=1)
    return series.likelihood, nu


def benchmark_warnings(
    scope: CalibrationScope, model: str, sizes: Sequence[int], regimes: Sequence[str]
) -> list[str]:
    """What a prediction of benchmark ``model`` at ``sizes`` extrapolates (see the module
    docstring); empty when nothing."""
    out: list[str] = []
    calibrated = model in scope.models
    if not calibrated:
        kinds = ", ".join(f"{s.label} ({s.model})" for s in scope.series)
        out.append(
            f"benchmark {model!r} was not in the calibration data of {scope.campaign} "
            f"(calibrated: {kinds}): its parameters were fitted to other benchmarks and its "
            "discrepancy is theirs"
        )
    own = scope.sizes_of(model) if calibrated else scope.sizes_of()
    what = f"{model}'s" if calibrated else "the calibration's"
    out += _range_warning(sizes, own, f"{what} calibrated sizes")
    with_data = scope.regimes_of()
    own_regimes = scope.regimes_of(model)
    for r in dict.fromkeys(regimes):
        if r not in with_data:
            out.append(
                f"regime {r!r} had no calibration data (no calibrated size in it): its costs "
                "are their prior ranges' and no discrepancy is known there"
            )
        elif calibrated and r not in own_regimes:
            out.append(
                f"regime {r!r} had no calibration data of benchmark {model!r} (only of "
                f"{', '.join(sorted(s.label for s in scope.series if r in s.regimes))})"
            )
    return out


def message_warnings(
    scope: CalibrationScope,
    sizes: Sequence[int],
    counts: Sequence[int],
    regimes: Sequence[str],
) -> list[str]:
    """What a replay extrapolates from the calibration: its messages' distinct ``sizes``,
    how many messages have each, and each size's regime. Messages of 0 B (no payload)
    are not outside the size range: their cost is the per-message part that the
    smallest calibrated size measures."""
    n = int(sum(counts))
    if n == 0:
        return []
    out: list[str] = []
    calibrated = scope.sizes_of()
    if calibrated:
        # a message without payload (0 B) costs the per-message part the smallest size measures
        lo, hi = min(calibrated), max(calibrated)
        outside = [
            (int(s), int(c))
            for s, c in zip(sizes, counts, strict=True)
            if s > 0 and not lo <= s <= hi
        ]
        if outside:
            shown = ", ".join(str(s) for s, _ in outside[:LISTED_SIZES])
            more = ", ..." if len(outside) > LISTED_SIZES else ""
            out.append(
                f"{sum(c for _, c in outside)} of {n} messages ({len(outside)} distinct sizes: "
                f"{shown}{more} B) lie outside the range of calibrated sizes ({lo}-{hi} B): "
                "their costs are extrapolated beyond the data"
            )
    with_data = scope.regimes_of()
    per_regime: dict[str, int] = {}
    for r, c in zip(regimes, counts, strict=True):
        per_regime[r] = per_regime.get(r, 0) + int(c)
    for r, k in per_regime.items():
        if r not in with_data:
            out.append(
                f"regime {r!r} had no calibration data: {k} of {n} messages use it (their "
                "costs in it are prior ranges, not measurements)"
            )
    return out


def _range_warning(sizes: Sequence[int], calibrated: Sequence[int], what: str) -> list[str]:
    if not calibrated:
        return []
    lo, hi = min(calibrated), max(calibrated)
    outside = [int(x) for x in sizes if not lo <= x <= hi]
    if not outside:
        return []
    shown = ", ".join(str(x) for x in outside[:LISTED_SIZES])
    more = ", ..." if len(outside) > LISTED_SIZES else ""
    return [
        f"{len(outside)} of {len(sizes)} sizes lie outside the range of {what} ({lo}-{hi} B): "
        f"{shown}{more} B (extrapolated beyond the data)"
    ]
