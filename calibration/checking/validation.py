"""Validation built into a campaign: fit without the held-out data, then score them.

A campaign with a ``[validation]`` table (:mod:`~mpiuq.calibration.config.validation_spec`) is
split (:func:`split_campaign`) into the campaign that is fitted (whole held-out series
removed; a series with held-out sizes fitted on its selection among the others) and the
groups of sizes that are scored after the fit (:func:`score_groups`):

``held-out series`` / ``held-out sizes``
    every measured size of a ``holdout`` entry;
``unselected sizes``
    (``unselected_sizes = true``) the measured sizes of a fitted series that the fit did
    not select (``sizes_per_protocol`` fits a few per regime) and that are not held out.

Every group is scored with the full posterior predictive: at posterior draws (parameters,
discrepancy and noise parameters) the simulator runs the group's benchmark at its sizes,
the discrepancy carries over as :mod:`~mpiuq.calibration.model.transfer` says, and the noise
is the group's likelihood family with the measured replica variance of every size, as in
the campaign's own predictive. A size is *inside* when its data centre lies in the
5-95% band; the *relative error* is ``|predictive median - data| / data``.

The rule of the must-pass checks (``heldout_coverage (...)``, ``unselected_coverage
(...)``, severity ``fail``): a group of ``n`` sizes fails when fewer than the
``checks.coverage_alpha`` quantile (default 1%) of Binomial(n, 0.9) lie inside their
90% band: if every size independently fell inside with probability 0.9, as a calibrated
band promises, so few would happen with probability below ``coverage_alpha``. At the
default 1%: 13 of 18, 17 of 23, 40 of 50, 82 of 100, 425 of 490 (86.7%); a group of a few
sizes has a low threshold (2 of 4, 3 of 6) and says little. Sizes of one series share
the model's systematic errors, so they are not independent: a model that misses a whole
regime fails the check, which is its purpose.

The campaign's own ``predictive_coverage`` is in-sample: scored on the sizes the
discrepancy was fitted to, so it is reported apart and its check says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.checking.checks import Check, coverage_threshold
from mpiuq.calibration.checking.validation_result import (
    GroupScore,
    InSample,
    ScoredGroup,
    ValidationResult,
)
from mpiuq.calibration.config import Campaign, DataSpec
from mpiuq.calibration.config.validation_spec import Holdout, ValidationSpec
from mpiuq.calibration.data.benchmark_csv import Measurements, read_benchmark_csv
from mpiuq.calibration.data.observations import (
    filter_replicas,
    select_sizes,
    select_sizes_per_regime,
    summarize,
)
from mpiuq.calibration.errors import CampaignError, DataError
from mpiuq.calibration.model.families.registry import likelihood_family
from mpiuq.calibration.model.transfer import (
    SOURCES,
    Target,
    predictive_band,
    regime_terms,
    transferred_discrepancy,
)
from mpiuq.calibration.reporting.campaign_result import CampaignResult

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Split:
    """A campaign split into what is fitted and what is scored.

    Attributes
    ----------
    fit
        The campaign that is fitted (no ``[validation]`` of its own).
    groups
        What is scored after the fit.
    fitted_sizes
        Per data-table label of ``fit``: the sizes the fit uses.
    spec
        The ``[validation]`` table.
    """

    fit: Campaign
    groups: tuple[ScoredGroup, ...]
    fitted_sizes: dict[str, tuple[int, ...]]
    spec: ValidationSpec


def split_campaign(campaign: Campaign) -> Split:
    """The fitted campaign and the scored groups of a campaign with ``[validation]``.

    Raises
    ------
    CampaignError
        If a hold-out leaves a series no size to fit (names ``validation.holdout[k]``).
    DataError
        If a data file cannot be read (as for the campaign itself).
    """
    spec = campaign.validation
    thresholds = campaign.simulator.base_params().thresholds()
    fitted: list[DataSpec] = []
    groups: list[ScoredGroup] = []
    fitted_sizes: dict[str, tuple[int, ...]] = {}
    unselected: list[ScoredGroup] = []
    for table in campaign.datasets:
        holdouts = spec.holdouts_of(table.label)
        available = measured_sizes(load_measurements(table))
        for h in holdouts:
            sizes = tuple(s for s in available if h.covers(s))
            if not sizes:
                raise CampaignError(
                    _holdout_key(spec, h),
                    h.describe(),
                    f"a size range holding some of the {len(available)} measured sizes of "
                    f"{table.label!r} ({available[0]}-{available[-1]} B)",
                )
            kind = "held-out series" if h.whole else "held-out sizes"
            groups.append(ScoredGroup(h.describe(), kind, table, sizes))
        if any(h.whole for h in holdouts):
            continue
        keep = tuple(s for s in available if not any(h.covers(s) for h in holdouts))
        table_fit = table
        if holdouts:
            table_fit = _without_held_out(campaign, table, holdouts, keep, thresholds)
        chosen = select_sizes(table_fit, keep, thresholds)
        fitted.append(table_fit)
        fitted_sizes[table.label] = chosen
        chosen_set = set(chosen)
        rest = tuple(s for s in keep if s not in chosen_set)
        if spec.unselected_sizes and rest:
            unselected.append(
                ScoredGroup(f"{table.label} (unselected)", "unselected sizes", table, rest)
            )
    fit = replace(campaign, datasets=tuple(fitted), validation=ValidationSpec())
    return Split(fit, tuple(groups + unselected), fitted_sizes, spec)


def _holdout_key(spec: ValidationSpec, h: Holdout) -> str:
    return f"validation.holdout[{spec.holdouts.index(h)}]"


def _without_held_out(
    campaign: Campaign,
    table: DataSpec,
    holdouts: tuple[Holdout, ...],
    keep: tuple[int, ...],
    thresholds: tuple[int, ...],
) -> DataSpec:
    """The table with explicit sizes: its selection among the sizes outside every hold-out."""
    if table.sizes is not None:
        sizes = tuple(s for s in table.sizes if not any(h.covers(s) for h in holdouts))
    else:
        try:
            sizes = select_sizes_per_regime(
                keep,
                table.sizes_per_protocol or 1,
                thresholds,
                table.min_size_bytes,
                table.max_size_bytes,
            )
        except DataError:
            sizes = ()
    if not sizes:
        raise CampaignError(
            _holdout_key(campaign.validation, holdouts[0]),
            [h.describe() for h in holdouts],
            f"hold-outs leaving some size of {table.label!r} to fit (within its "
            f"[{table.min_size_bytes}, {table.max_size_bytes}] B range)",
        )
    return replace(table, sizes=sizes, sizes_per_protocol=None)


def load_measurements(table: DataSpec) -> Measurements:
    """The replicas of a data table after its filters (warm-up, bursts)."""
    raw = read_benchmark_csv(table.path, table.benchmark)
    return filter_replicas(raw, table.drop_warmup, table.aggregate_bursts, table.burst_length)


def measured_sizes(m: Measurements) -> tuple[int, ...]:
    """The distinct sizes of some measurements, ascending."""
    return tuple(int(s) for s in np.unique(m.size_bytes))


# --- scoring ------------------------------------------------------------------------------


def score_groups(
    split: Split,
    result: CampaignResult,
    rng: np.random.Generator,
    threads: int = 1,
) -> ValidationResult:
    """Score every group of ``split`` with the fitted campaign's posterior predictive.

    Parameters
    ----------
    split
        The split of :func:`split_campaign`.
    result
        The fitted campaign's result (``split.fit``).
    rng
        Picks the draws and draws the noise.
    threads
        Simulator threads per benchmark call.
    """
    from mpiuq.simulator.benchmarks.run import BenchmarkModel

    campaign = split.fit
    main = result.main
    problem = main.problem
    base = campaign.simulator.base_params()
    obs = result.observations
    all_draws = main.exact.draws
    n = min(split.spec.draws, all_draws.shape[0])
    draws = all_draws[np.sort(rng.choice(all_draws.shape[0], size=n, replace=False))]
    model_of = {t.label: t.model for t in campaign.datasets}
    terms = regime_terms(
        [obs.labels[d] for d in obs.dataset],
        [model_of[obs.labels[d]] for d in obs.dataset],
        [base.protocol_of(int(s)) for s in obs.sizes_bytes],
        problem.names,
        len(obs.labels) > 1,
    )
    alpha = campaign.checks.coverage_alpha
    scores: list[GroupScore] = []
    for group in split.groups:
        table = group.spec
        m = load_measurements(table)
        sizes, mean, var, log_var, skipped = _summaries(m, group.sizes_bytes, table)
        if not sizes:
            continue
        model = BenchmarkModel(
            benchmark=table.model,
            sizes_bytes=sizes,
            names=problem.model_names,
            base=base,
            observable=table.observable,
            window=table.window,
            threads=threads,
        )
        f = np.asarray(model(draws[:, : problem.n_model]), dtype=np.float64)
        regimes = tuple(base.protocol_of(s) for s in sizes)
        targets = [Target(table.label, table.model, r) for r in regimes]
        bias, spread, sources = transferred_discrepancy(terms, draws, targets)
        nu = _nu_draws(table, problem.names, draws, len(sizes), rng)
        band = predictive_band(
            f, bias, spread, [table.likelihood] * len(sizes), var, log_var, nu, rng
        )
        fitted = split.fitted_sizes.get(table.label)
        scores.append(
            GroupScore(
                group=group,
                sizes_bytes=np.asarray(sizes, dtype=np.int64),
                data_mean=mean,
                data_sd=np.sqrt(var),
                band=band,
                regimes=regimes,
                sources=sources,
                skipped=skipped,
                fitted_range=(min(fitted), max(fitted)) if fitted else None,
                threshold=coverage_threshold(len(sizes), alpha),
            )
        )
    pred = main.predictive
    median = np.median(pred.draws, axis=0)
    in_sample = InSample(
        n_sizes=int(pred.inside.size),
        n_inside=pred.n_inside,
        median_relative_error=float(np.median(np.abs(median - obs.mean) / np.abs(obs.mean))),
        discrepancy=problem.discrepancy.enabled,
    )
    return ValidationResult(split.spec, in_sample, tuple(scores), n, alpha)


def _summaries(
    m: Measurements, sizes: Sequence[int], table: DataSpec
) -> tuple[tuple[int, ...], FloatArray, FloatArray, FloatArray, tuple[int, ...]]:
    """Centre, variance and log variance of every size with a usable spread; skipped sizes
    (no usable spread, or 0 B)."""
    kept: list[int] = []
    skipped: list[int] = []
    means, variances, log_vars = [], [], []
    for s in sizes:
        if s < 1:  # a 0 B measurement: the benchmarks simulate messages of 1 B or more
            skipped.append(int(s))
            continue
        try:
            o = summarize(
                m,
                (s,),
                table.observable,
                table.sd_floor_rel,
                table.summary,
                table.trim,
                log_scale=likelihood_family(table.likelihood).log_scale,
            )
        except DataError:
            skipped.append(int(s))
            continue
        kept.append(int(s))
        means.append(float(o.mean[0]))
        variances.append(float(o.var[0]))
        log_vars.append(float(o.log_var[0]))
    return (
        tuple(kept),
        np.asarray(means, dtype=np.float64),
        np.asarray(variances, dtype=np.float64),
        np.asarray(log_vars, dtype=np.float64),
        tuple(skipped),
    )


def _nu_draws(
    table: DataSpec,
    names: tuple[str, ...],
    draws: FloatArray,
    n_out: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Shape parameter of a series' likelihood family (Student-t's degrees of freedom) at
    every draw: its posterior draws when the series was fitted, else draws from its prior
    (a series held out as a whole); ones for a family without one."""
    shape = likelihood_family(table.likelihood).shape
    if shape is None:
        return np.ones((draws.shape[0], n_out))
    name = f"{shape.name}_{table.label}"
    nu: FloatArray = (
        draws[:, names.index(name)]
        if name in names
        else np.asarray(rng.uniform(table.nu[0], table.nu[1], size=draws.shape[0]))
    )
    return np.repeat(nu[:, None], n_out, axis=1)


def validation_checks(v: ValidationResult) -> tuple[Check, ...]:
    """One must-pass check per scored group (the binomial rule of the module docstring)."""
    out: list[Check] = []
    for g in v.groups:
        n = int(g.sizes_bytes.size)
        prefix = "unselected_coverage" if g.group.kind == "unselected sizes" else "heldout_coverage"
        where = (
            f"{g.n_outside_fitted_range} outside the fitted range"
            if g.fitted_range is not None
            else "series not fitted"
        )
        message = (
            f"{g.group.kind} {g.group.name}: data inside the 90% posterior-predictive band at "
            f"{g.n_inside} of {n} sizes (at least {g.threshold} expected: the "
            f"{v.alpha:g} quantile of Binomial({n}, 0.9)); median relative error "
            f"{100 * g.median_relative_error:.1f}%; {where}; discrepancy "
            + _sources_text(g.sources)
        )
        out.append(
            Check(
                f"{prefix} ({g.group.name})",
                g.passed,
                "fail",
                float(g.n_inside),
                float(g.threshold),
                message,
            )
        )
    return tuple(out)


def _sources_text(sources: Sequence[str]) -> str:
    counts = [(s, sum(1 for x in sources if x == s)) for s in SOURCES]
    return ", ".join(f"{s} {k}" for s, k in counts if k)


#: Spawn key of the validation's random stream under the campaign seed (independent of
#: the pipeline's streams, which are the seed's first children).
VALIDATION_STREAM = 24


def with_validation(result: CampaignResult, split: Split, threads: int = 1) -> CampaignResult:
    """The fitted campaign's result with its held-out data scored and their checks added."""
    seed = np.random.SeedSequence(split.fit.seed, spawn_key=(VALIDATION_STREAM,))
    v = score_groups(split, result, np.random.default_rng(seed), threads)
    return replace(result, checks=result.checks + validation_checks(v), validation=v)
