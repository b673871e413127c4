"""Reduction of measured replicas to the per-size mean and variance of eq. (7).

Pure functions on :class:`~mpiuq.calibration.data.benchmark_csv.Measurements`: unit conversion
(throughput MB/s = size_bytes / time_us), replicate filters (warm-up iterations,
burst aggregation), size selection per protocol regime, and the sample statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import DataSpec
from mpiuq.calibration.data.benchmark_csv import Measurements, read_benchmark_csv
from mpiuq.calibration.data.size_selection import select_sizes_per_regime
from mpiuq.calibration.errors import DataError
from mpiuq.calibration.model.families.registry import likelihood_family

#: Unit of each observable, as written in the benchmark CSV.
OBSERVABLE_UNITS: dict[str, str] = {"time_us": "us", "throughput_MBps": "MB/s"}


#: Scale factor of the median absolute deviation to a Gaussian sd (1 / Phi^-1(3/4)).
MAD_TO_SD = 1.482602218505602


@dataclass(frozen=True, slots=True)
class Observations:
    """Per-size statistics of the data, eq. (7) of the reference paper, for one or more
    data sets (outputs of all data sets concatenated, data set by data set).

    Attributes
    ----------
    sizes_bytes
        Selected message sizes in bytes, ascending within each data set, shape (n_out,).
    mean
        Centre of the replicas per size (their mean, median or trimmed mean, see
        :func:`replica_summary`), in the observable's unit, shape (n_out,). For a
        log-scale (``lognormal``) data set: the exponential of the centre of the log
        replicas (geometric mean or median).
    var
        Square of the matching replica spread ``sigma_i`` (sample variance with
        ``ddof=1`` for the mean), possibly raised to the configured floor, in the unit
        squared, shape (n_out,). For a log-scale data set: ``(mean * log_sd)^2``, its
        linear-scale equivalent (delta method), used to express errors in data sd.
    n_replicas
        Replicas ``R`` per size after filtering, shape (n_out,).
    observable
        Observable of every data set (``"time_us"`` or ``"throughput_MBps"``), joined by
        ``"+"`` when the data sets differ.
    replicas
        The filtered replica values of every size (for plots), a tuple of arrays.
    log_mean, log_var
        Centre and squared spread of the log replicas (used by the ``lognormal``
        likelihood), shape (n_out,).
    dataset
        Index of each output's data set into ``labels``, shape (n_out,).
    labels
        Label of every data set, in campaign order.
    observables
        Observable of every data set.
    warmup_excess
        Per data set: median over sizes of (median first iteration of a burst / median
        of the others) - 1, before any warm-up was dropped (NaN when not measurable).
    warmup_p
        Per data set: one-sided sign-test p-value of "first iterations are slower" over
        the sizes (NaN when not measurable).
    """

    sizes_bytes: npt.NDArray[np.int64]
    mean: npt.NDArray[np.float64]
    var: npt.NDArray[np.float64]
    n_replicas: npt.NDArray[np.int64]
    observable: str
    replicas: tuple[npt.NDArray[np.float64], ...]
    log_mean: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    log_var: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    dataset: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    labels: tuple[str, ...] = ()
    observables: tuple[str, ...] = ()
    warmup_excess: tuple[float, ...] = ()
    warmup_p: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        n = self.sizes_bytes.size
        if self.log_mean.size != n:
            with np.errstate(divide="ignore", invalid="ignore"):
                object.__setattr__(self, "log_mean", np.log(self.mean))
                object.__setattr__(self, "log_var", self.var / self.mean**2)
        if self.dataset.size != n:
            object.__setattr__(self, "dataset", np.zeros(n, dtype=np.int64))
        if not self.labels:
            object.__setattr__(self, "labels", ("data",))
        if not self.observables:
            object.__setattr__(self, "observables", (self.observable,) * len(self.labels))
        if not self.warmup_excess:
            object.__setattr__(self, "warmup_excess", (math.nan,) * len(self.labels))
            object.__setattr__(self, "warmup_p", (math.nan,) * len(self.labels))

    @property
    def sd(self) -> npt.NDArray[np.float64]:
        """Standard deviation ``sigma_i``, in the observable's unit."""
        return np.sqrt(self.var)

    @property
    def output_names(self) -> tuple[str, ...]:
        """One name per output: ``"<observable>@<size>B"``, prefixed by ``"<label>:"`` when
        there are several data sets."""
        if len(self.labels) == 1:
            return tuple(f"{self.observable}@{int(s)}B" for s in self.sizes_bytes)
        return tuple(
            f"{self.labels[d]}:{self.observables[d]}@{int(s)}B"
            for d, s in zip(self.dataset, self.sizes_bytes, strict=True)
        )

    def outputs_of(self, k: int) -> npt.NDArray[np.int64]:
        """Indices of the outputs of data set ``k``."""
        return np.flatnonzero(self.dataset == k)


def convert_values(
    value: npt.ArrayLike, size_bytes: npt.ArrayLike, unit: str, observable: str
) -> npt.NDArray[np.float64]:
    """Convert measured values to an observable.

    Throughput in MB/s (1e6 B/s) is ``size_bytes / time_us`` and conversely.

    Parameters
    ----------
    value
        Values in ``unit`` (``"us"`` or ``"MB/s"``).
    size_bytes
        Message size of every value, bytes.
    unit
        Unit of ``value``.
    observable
        ``"time_us"`` or ``"throughput_MBps"``.

    Examples
    --------
    >>> convert_values([2.0], [1000], "us", "throughput_MBps")
    array([500.])
    """
    v = np.asarray(value, dtype=np.float64)
    s = np.asarray(size_bytes, dtype=np.float64)
    if observable not in OBSERVABLE_UNITS:
        raise DataError(
            f"observable {observable!r} is invalid: expected one of {list(OBSERVABLE_UNITS)}"
        )
    if unit not in ("us", "MB/s"):
        raise DataError(f"unit {unit!r} is invalid: expected 'us' or 'MB/s'")
    if OBSERVABLE_UNITS[observable] == unit:
        return v.copy()
    return s / v  # us <-> MB/s: both directions are size / value


def filter_replicas(
    m: Measurements, drop_warmup: bool, aggregate_bursts: bool, burst_length: int
) -> Measurements:
    """Apply the replicate filters.

    Parameters
    ----------
    m
        Raw measurements.
    drop_warmup
        Drop every row with ``run % burst_length == 0`` (the first, warm-up iteration of
        each burst of back-to-back iterations).
    aggregate_bursts
        Replace the rows of every burst (same size, same ``run // burst_length``) by their
        mean; the burst then is the replication unit. The value is averaged in the
        measurement's own unit.
    burst_length
        Iterations per burst, >= 1.
    """
    if burst_length < 1:
        raise DataError(f"burst_length={burst_length!r} is invalid: expected an integer >= 1")
    keep = np.ones(m.run.shape, dtype=bool)
    if drop_warmup:
        keep &= (m.run % burst_length) != 0
    run, size, value = m.run[keep], m.size_bytes[keep], m.value[keep]
    if aggregate_bursts and run.size:
        burst = run // burst_length
        keys, inverse = np.unique(np.stack([size, burst]), axis=1, return_inverse=True)
        inverse = inverse.ravel()
        sums = np.bincount(inverse, weights=value)
        counts = np.bincount(inverse)
        size = keys[0].astype(np.int64)
        run = keys[1].astype(np.int64)
        value = sums / counts
    return Measurements(run, size, value, m.unit, m.benchmark)


def select_sizes_per_protocol(
    available: npt.ArrayLike,
    n_per_regime: int,
    small_max_bytes: int,
    eager_max_bytes: int,
    min_size_bytes: int = 1,
    max_size_bytes: int = 2**62,
) -> tuple[int, ...]:
    """Pick ``n_per_regime`` log-spaced sizes in each of the small / eager / rendezvous regimes.

    :func:`select_sizes_per_regime` with the thresholds ``(small_max_bytes, eager_max_bytes)``.

    Examples
    --------
    >>> select_sizes_per_protocol([1, 10, 100, 1000, 10000, 100000], 2, 100, 10000)
    (1, 100, 1000, 10000, 100000)
    """
    return select_sizes_per_regime(
        available, n_per_regime, (small_max_bytes, eager_max_bytes), min_size_bytes, max_size_bytes
    )


def replica_summary(
    values: npt.ArrayLike, summary: str = "mean", trim: float = 0.2
) -> tuple[float, float]:
    """Centre and matching spread of one size's replicas.

    The spread is an estimate of the replica standard deviation ``sigma_i`` (eq. 7 uses
    the replica spread, not the standard error of the centre), matched to the centre:

    ``"mean"``
        sample mean and sample sd (``ddof=1``, unbiased variance);
    ``"median"``
        median and ``1.4826 * MAD`` (median absolute deviation from the median): a
        consistent estimate of sigma for Gaussian noise that ignores up to half the
        replicas being outliers (breakdown point 50%);
    ``"trimmed_mean"``
        the mean of the central ``1 - 2 trim`` of the sorted replicas and
        ``s_w / (1 - 2 trim)`` where ``s_w`` is the sd (``ddof=1``) of the winsorized
        replicas. This is the Tukey-McLaughlin standard error of the trimmed mean times
        ``sqrt(R)``: the replica sd whose ``sigma / sqrt(R)`` equals the trimmed mean's
        standard error, so it plays the role of sigma in eq. (7). For Gaussian noise it is
        about 1.06 sigma at ``trim = 0.2`` (the trimmed mean's efficiency loss); for heavy
        tails it stays bounded where the sample sd does not.

    One replica gives a spread of 0.

    Examples
    --------
    >>> replica_summary([1.0, 2.0, 3.0, 4.0, 100.0], "median")
    (3.0, 1.482602218505602)
    >>> replica_summary([1.0, 2.0, 3.0])
    (2.0, 1.0)
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = x.size
    if summary == "mean":
        return float(x.mean()), float(x.std(ddof=1)) if n > 1 else 0.0
    if summary == "median":
        med = float(np.median(x))
        return med, MAD_TO_SD * float(np.median(np.abs(x - med)))
    if summary == "trimmed_mean":
        g = math.floor(trim * n)
        centre = float(x[g : n - g].mean())
        if n < 2:
            return centre, 0.0
        winsorized = np.clip(x, x[g], x[n - g - 1])
        return centre, float(winsorized.std(ddof=1)) / (1.0 - 2.0 * trim)
    raise DataError(
        f"summary {summary!r} is invalid: expected one of ['mean', 'median', 'trimmed_mean']"
    )


def summarize(
    m: Measurements,
    sizes_bytes: tuple[int, ...],
    observable: str,
    sd_floor_rel: float = 0.0,
    summary: str = "mean",
    trim: float = 0.2,
    log_scale: bool = False,
) -> Observations:
    """Per-size centre and spread of the replicas, eq. (7) of the reference paper.

    Parameters
    ----------
    m
        Filtered measurements.
    sizes_bytes
        Sizes to keep, bytes.
    observable
        ``"time_us"`` or ``"throughput_MBps"``; values are converted per replica first.
    sd_floor_rel
        The spread is raised to at least ``sd_floor_rel * |centre|`` (for a log-scale
        data set: the log spread to at least ``sd_floor_rel``); with 0 (no floor) a zero
        spread is an error. With a floor, a size with a single value (a data set of means
        only) is accepted and its spread is the floor: an assumed noise level.
    summary, trim
        Replica summary, see :func:`replica_summary`.
    log_scale
        The data set is modelled on the log scale (``lognormal`` likelihood): ``mean`` is
        the exponential of the log replicas' centre and ``var`` its linear equivalent.

    Raises
    ------
    DataError
        For a size absent from the data, with fewer than 2 replicas (and no floor), or
        with zero spread and no floor.
    """
    values = convert_values(m.value, m.size_bytes, m.unit, observable)
    present = np.unique(m.size_bytes)
    means, variances, counts, replicas, log_means, log_vars = [], [], [], [], [], []
    for s in sorted(sizes_bytes):
        rows = values[m.size_bytes == s]
        if rows.size == 0:
            near: list[int] = [int(v) for v in present[np.argsort(np.abs(np.log(present / s)))[:3]]]
            raise DataError(
                f"size {s} B is missing from benchmark {m.benchmark!r}: "
                f"expected a size present in the data (nearest: {near})"
            )
        if rows.size < 2 and sd_floor_rel <= 0.0:
            raise DataError(
                f"size {s} B has {rows.size} replica(s) after filtering: expected at least 2 "
                "(or data.sd_floor_rel > 0: an assumed noise level for data without replicas)"
            )
        mu, sd = replica_summary(rows, summary, trim)
        log_mu, log_sd = replica_summary(np.log(rows), summary, trim)
        log_sd = max(log_sd, sd_floor_rel)
        sd = max(sd, sd_floor_rel * abs(mu))
        if (sd <= 0.0 or log_sd <= 0.0) and sd_floor_rel <= 0.0:
            raise DataError(
                f"size {s} B has zero spread over {rows.size} replicas ({summary}): expected "
                "a positive spread, or configure data.sd_floor_rel > 0"
            )
        if log_scale:
            mu = math.exp(log_mu)
            sd = mu * log_sd
        if not (math.isfinite(mu) and 0.0 < sd**2 < math.inf and 0.0 < log_sd**2 < math.inf):
            raise DataError(  # the one range check of the likelihood's variances
                f"size {s} B has a variance of {sd**2!r} (sd {sd!r}, log sd {log_sd!r}) over "
                f"{rows.size} replicas: expected a finite variance > 0 (raise "
                "data.sd_floor_rel, or check the values)"
            )
        means.append(mu)
        variances.append(sd**2)
        log_means.append(log_mu)
        log_vars.append(log_sd**2)
        counts.append(rows.size)
        replicas.append(rows)
    return Observations(
        np.asarray(sorted(sizes_bytes), dtype=np.int64),
        np.asarray(means),
        np.asarray(variances),
        np.asarray(counts, dtype=np.int64),
        observable,
        tuple(replicas),
        np.asarray(log_means),
        np.asarray(log_vars),
    )


def warmup_signal(m: Measurements, burst_length: int) -> tuple[float, float]:
    """How much slower the first iteration of a burst is, and whether that is chance.

    Per size with at least two bursts: ``r = median(first iterations) / median(others)``.
    Returns ``(median over sizes of r - 1, p)`` where ``p`` is the one-sided sign-test
    p-value of ``r > 1`` over the sizes (values in the measurement's unit: for a
    throughput, slower means a ratio below 1, so ``1 / r`` is used). ``(nan, nan)`` when no
    size has two bursts. Synthetic data of ``mpiuq simulate --replicas`` without
    ``--warmup-excess`` have no warm-up (p near 0.5).
    """
    from scipy.stats import binomtest

    ratios = []
    for s in np.unique(m.size_bytes):
        sel = m.size_bytes == s
        first = (m.run[sel] % burst_length) == 0
        v = m.value[sel]
        if first.sum() >= 2 and (~first).sum() >= 2:
            r = float(np.median(v[first]) / np.median(v[~first]))
            ratios.append(r if m.unit == "us" else 1.0 / r)
    if not ratios:
        return math.nan, math.nan
    a = np.asarray(ratios)
    slower = int(np.sum(a > 1.0))
    p = float(binomtest(slower, int(np.sum(a != 1.0)) or 1, 0.5, alternative="greater").pvalue)
    return float(np.median(a) - 1.0), p


def select_sizes(
    spec: DataSpec, available: npt.ArrayLike, thresholds: tuple[int, ...]
) -> tuple[int, ...]:
    """The sizes of a data table: its explicit ``sizes`` or ``sizes_per_protocol`` per regime."""
    if spec.sizes is not None:
        return spec.sizes
    n = spec.sizes_per_protocol if spec.sizes_per_protocol is not None else 1
    return select_sizes_per_regime(
        available, n, thresholds, spec.min_size_bytes, spec.max_size_bytes
    )


def load_dataset(spec: DataSpec, thresholds: tuple[int, ...]) -> Observations:
    """Read, filter, select sizes and summarize one data table.

    Parameters
    ----------
    spec
        The validated data table.
    thresholds
        Largest size of every protocol regime but the last, ascending (the campaign's
        regime thresholds), for ``sizes_per_protocol``.
    """
    raw = read_benchmark_csv(spec.path, spec.benchmark)
    excess, p = warmup_signal(raw, spec.burst_length)
    m = filter_replicas(raw, spec.drop_warmup, spec.aggregate_bursts, spec.burst_length)
    sizes = select_sizes(spec, m.size_bytes, thresholds)
    obs = summarize(
        m,
        sizes,
        spec.observable,
        spec.sd_floor_rel,
        spec.summary,
        spec.trim,
        log_scale=likelihood_family(spec.likelihood).log_scale,
    )
    return replace(
        obs,
        labels=(spec.label,),
        observables=(spec.observable,),
        warmup_excess=(excess,),
        warmup_p=(p,),
    )


def combine(parts: list[Observations]) -> Observations:
    """Concatenate the observations of several data sets (outputs data set by data set)."""
    if len(parts) == 1:
        return parts[0]
    cat = np.concatenate
    observables = tuple(o.observable for o in parts)
    distinct = list(dict.fromkeys(observables))
    return Observations(
        sizes_bytes=cat([o.sizes_bytes for o in parts]),
        mean=cat([o.mean for o in parts]),
        var=cat([o.var for o in parts]),
        n_replicas=cat([o.n_replicas for o in parts]),
        observable="+".join(distinct),
        replicas=tuple(r for o in parts for r in o.replicas),
        log_mean=cat([o.log_mean for o in parts]),
        log_var=cat([o.log_var for o in parts]),
        dataset=cat([np.full(o.sizes_bytes.size, k, np.int64) for k, o in enumerate(parts)]),
        labels=tuple(o.labels[0] for o in parts),
        observables=observables,
        warmup_excess=tuple(o.warmup_excess[0] for o in parts),
        warmup_p=tuple(o.warmup_p[0] for o in parts),
    )


def load_observations(
    specs: DataSpec | tuple[DataSpec, ...], thresholds: tuple[int, ...]
) -> Observations:
    """The observations of a campaign's data tables (one or several), concatenated.

    Parameters
    ----------
    specs
        The validated data table(s).
    thresholds
        Largest size of every protocol regime but the last (``sizes_per_protocol``).
    """
    tables = (specs,) if isinstance(specs, DataSpec) else specs
    return combine([load_dataset(spec, thresholds) for spec in tables])
