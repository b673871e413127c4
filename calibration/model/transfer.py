"""The posterior predictive at outputs a campaign did not fit: held-out data, new sizes,
other benchmark kinds.

The campaign's own predictive (:mod:`~mpiuq.calibration.reporting.predictive`) draws, at every
posterior draw, the simulator's output ``f``, shifts it by the draw's relative bias,
adds the draw's relative model-error spread and the data's noise. At an output the
campaign did not fit, the simulator's output and the noise carry over; the discrepancy
terms, fitted per data series and protocol regime, carry over by this rule (for a
target output of series ``s``, simulator benchmark ``m``, regime ``r``):

``"fitted"``
    the series ``s`` has a term in regime ``r`` (sizes of the same series and regime
    were fitted): its bias and spread;
``"same benchmark"``
    otherwise, terms of regime ``r`` of series modelled by the same benchmark ``m``: per
    draw the largest of their spreads, no bias;
``"other benchmarks"``
    otherwise, terms of regime ``r`` of any series: per draw the largest spread, no bias
    (a model error of this size was seen in this regime, so at least that much is
    plausible for a benchmark the campaign never saw);
``"none"``
    no term in regime ``r`` at all (no calibrated size in that regime): no discrepancy,
    and the prediction says the regime had no data.

Biases are series-specific (a relative bias in a rendezvous regime trades against the
bandwidths), so they do not carry over to other series. The largest spread rather than
one series' is the cautious choice: a wider band is honest where the model's error for
this benchmark was never measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.families.registry import likelihood_names
from mpiuq.calibration.model.noise import NoiseModel

FloatArray = npt.NDArray[np.float64]

#: Where a target output's discrepancy comes from, best first (see the module docstring).
SOURCES: tuple[str, ...] = ("fitted", "same benchmark", "other benchmarks", "none")


@dataclass(frozen=True, slots=True)
class RegimeTerm:
    """One fitted discrepancy regime: which outputs it acted on and where its draws are.

    Attributes
    ----------
    series
        Label of the data series.
    model
        Simulator benchmark of the series.
    regime
        Protocol regime name (``SimParams.protocol_of``).
    bias_column, sd_column
        Columns of the bias and spread draws in the posterior draws matrix (None: the
        campaign has no such term).
    """

    series: str
    model: str
    regime: str
    bias_column: int | None
    sd_column: int | None


@dataclass(frozen=True, slots=True)
class Target:
    """An output to predict: its series (None: no series, e.g. ``mpiuq simulate``),
    simulator benchmark and protocol regime."""

    series: str | None
    model: str
    regime: str


def regime_terms(
    series: Sequence[str],
    models: Sequence[str],
    regimes: Sequence[str],
    names: Sequence[str],
    several: bool,
) -> tuple[RegimeTerm, ...]:
    """The discrepancy terms of the fitted outputs, located among the posterior's names.

    Parameters
    ----------
    series, models, regimes
        Series label, simulator benchmark and regime of every fitted output.
    names
        Names of the posterior draws' columns (``sd_rel_<key>``, ``bias_rel_<key>``).
    several
        Whether the campaign fitted several series (the term keys then include the
        series: :func:`~mpiuq.calibration.model.discrepancy.regime_key`; a campaign whose
        series share one term per regime, ``per_series = false``, has the regime's key
        alone, which is used when the series' own is absent).
    """
    from mpiuq.calibration.model.discrepancy import regime_key

    index = {n: j for j, n in enumerate(names)}
    out: list[RegimeTerm] = []
    seen: set[tuple[str, str]] = set()
    for s, m, r in zip(series, models, regimes, strict=True):
        if (s, r) in seen:
            continue
        seen.add((s, r))
        key = regime_key(s, r, several)
        bias, sd = index.get(f"bias_rel_{key}"), index.get(f"sd_rel_{key}")
        if bias is None and sd is None:  # [discrepancy] per_series = false: shared terms
            key = regime_key(s, r, False)
            bias, sd = index.get(f"bias_rel_{key}"), index.get(f"sd_rel_{key}")
        if bias is not None or sd is not None:
            out.append(RegimeTerm(s, m, r, bias, sd))
    return tuple(out)


def term_source(terms: Sequence[RegimeTerm], target: Target) -> tuple[str, tuple[int, ...]]:
    """Which rule of the module docstring applies to ``target``, and the terms it uses."""
    same_regime = [k for k, t in enumerate(terms) if t.regime == target.regime]
    own = [k for k in same_regime if terms[k].series == target.series]
    if own:
        return "fitted", tuple(own[:1])
    same_model = [k for k in same_regime if terms[k].model == target.model]
    if same_model:
        return "same benchmark", tuple(same_model)
    if same_regime:
        return "other benchmarks", tuple(same_regime)
    return "none", ()


def transferred_discrepancy(
    terms: Sequence[RegimeTerm], draws: FloatArray, targets: Sequence[Target]
) -> tuple[FloatArray, FloatArray, tuple[str, ...]]:
    """Relative bias and spread of every target at every draw, and their sources.

    Parameters
    ----------
    terms
        The fitted discrepancy terms (:func:`regime_terms`).
    draws
        Posterior draws, shape (n, n_columns), the columns the terms refer to.
    targets
        The outputs to predict.

    Returns
    -------
    (bias, spread, sources)
        ``bias`` and ``spread`` of shape (n, n_targets); ``sources[i]`` is one of
        :data:`SOURCES`.
    """
    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    n = x.shape[0]
    bias = np.zeros((n, len(targets)))
    spread = np.zeros((n, len(targets)))
    sources: list[str] = []
    for i, target in enumerate(targets):
        source, used = term_source(terms, target)
        sources.append(source)
        if source == "fitted":
            t = terms[used[0]]
            if t.bias_column is not None:
                bias[:, i] = x[:, t.bias_column]
            if t.sd_column is not None:
                spread[:, i] = x[:, t.sd_column]
            continue
        cols = [c for k in used if (c := terms[k].sd_column) is not None]
        if cols:
            spread[:, i] = np.max(x[:, cols], axis=1)
    return bias, spread, tuple(sources)


@dataclass(frozen=True, slots=True)
class PredictiveBand:
    """Posterior predictive of outputs; arrays of shape (n_out,) unless noted.

    Attributes
    ----------
    draws
        Predictive draws (replicated measurement centres), shape (n, n_out).
    model
        The model's mean ``f (1 + b)`` at every draw, shape (n, n_out).
    lo, median, hi
        5%, 50% and 95% quantiles of the predictive draws.
    """

    draws: FloatArray
    model: FloatArray
    lo: FloatArray
    median: FloatArray
    hi: FloatArray

    def inside(self, data: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether each data value lies inside its 90% band."""
        d = np.asarray(data, dtype=np.float64)
        return (d >= self.lo) & (d <= self.hi)

    def relative_error(self, data: npt.ArrayLike) -> FloatArray:
        """``|median - data| / |data|`` per output."""
        d = np.asarray(data, dtype=np.float64)
        return np.abs(self.median - d) / np.abs(d)


def predictive_band(
    f: FloatArray,
    bias: FloatArray,
    spread: FloatArray,
    families: Sequence[str],
    data_var: FloatArray,
    log_var: FloatArray,
    nu: FloatArray,
    rng: np.random.Generator,
) -> PredictiveBand:
    """Posterior predictive of outputs from model outputs, discrepancy and noise draws.

    The same draw as the campaign's predictive
    (:func:`~mpiuq.calibration.reporting.predictive.replicate`): mean ``f (1 + b)``, model-error
    variance ``(s f)^2`` (:meth:`Discrepancy.mean_and_var`), noise of each output's
    likelihood family (:meth:`NoiseModel.draw`: truncated positive Gaussian or
    Student-t, or log-normal).

    Parameters
    ----------
    f
        Simulator outputs at the draws, shape (n, n_out).
    bias, spread
        Relative bias and model-error spread, shape (n, n_out).
    families
        Likelihood family of every output (a registered name, :mod:`~mpiuq.calibration.model.families.registry`).
    data_var
        Noise variance of every output: shape (n_out,) (measured replica variance) or
        (n, n_out) (a relative noise level times each draw's output, squared).
    log_var
        Log-scale noise variance of every output (log-normal outputs), shape (n_out,).
    nu
        Shape parameter (Student-t's degrees of freedom) of every output at every draw,
        shape (n, n_out) (ignored for families without one).
    rng
        Noise generator.
    """
    f = np.atleast_2d(np.asarray(f, dtype=np.float64))
    m = f.shape[1]
    delta = np.concatenate([bias, spread], axis=1)
    disc = Discrepancy(tuple(str(i) for i in range(m)), tuple(range(m)), 1.0, 1.0)
    mean, dvar = disc.mean_and_var(f, delta)
    noise = NoiseModel(
        family=tuple(likelihood_names().index(fam) for fam in families),
        nu_index=tuple(range(m)),
        nu_names=tuple(f"nu_{i}" for i in range(m)),
        nu_lower=(1.0,) * m,
        nu_upper=(1.0,) * m,
        log_mean=(0.0,) * m,
        log_var=tuple(float(v) for v in np.asarray(log_var, dtype=np.float64)),
        positive=True,
    )
    y = noise.draw(mean, dvar, f, np.asarray(data_var, dtype=np.float64), np.zeros(m), nu, rng)
    lo, med, hi = np.quantile(y, [0.05, 0.5, 0.95], axis=0)
    return PredictiveBand(y, mean, lo, med, hi)
