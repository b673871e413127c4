"""Reduction of measured replicas to the per-size mean and variance of eq. (7).

Pure functions on :class:`~mpiuq.calibration.benchmark_csv.Measurements`: unit conversion
(throughput MB/s = size_bytes / time_us), replicate filters (warm-up iterations,
burst aggregation), size selection per protocol regime, and the sample statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.benchmark_csv import Measurements, read_benchmark_csv
from mpiuq.calibration.config import DataSpec
from mpiuq.calibration.errors import DataError

#: Unit of each observable, as written in the benchmark CSV.
OBSERVABLE_UNITS: dict[str, str] = {"time_us": "us", "throughput_MBps": "MB/s"}


@dataclass(frozen=True, slots=True)
class Observations:
    """Per-size statistics of the data, eq. (7) of the reference paper.

    Attributes
    ----------
    sizes_bytes
        Selected message sizes in bytes, ascending, shape (n_out,).
    mean
        Sample mean ``mu_i`` over replicas, in the observable's unit, shape (n_out,).
    var
        Sample variance ``sigma_i^2 = 1/R sum (y - mu_i)^2`` (eq. 7, ``ddof=0``), possibly
        raised to the configured floor, in the unit squared, shape (n_out,).
    n_replicas
        Replicas ``R`` per size after filtering, shape (n_out,).
    observable
        ``"time_us"`` or ``"throughput_MBps"``.
    replicas
        The filtered replica values of every size (for plots), a tuple of arrays.
    """

    sizes_bytes: npt.NDArray[np.int64]
    mean: npt.NDArray[np.float64]
    var: npt.NDArray[np.float64]
    n_replicas: npt.NDArray[np.int64]
    observable: str
    replicas: tuple[npt.NDArray[np.float64], ...]

    @property
    def sd(self) -> npt.NDArray[np.float64]:
        """Standard deviation ``sigma_i``, in the observable's unit."""
        return np.sqrt(self.var)

    @property
    def output_names(self) -> tuple[str, ...]:
        """One name per output, ``"<observable>@<size>B"``."""
        return tuple(f"{self.observable}@{int(s)}B" for s in self.sizes_bytes)


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
    """Pick ``n_per_regime`` log-spaced sizes inside each protocol regime.

    The regimes are small (``<= small_max_bytes``), eager (``<= eager_max_bytes``) and
    rendezvous (larger). Within each regime, ``n`` targets are log-spaced between the
    smallest and largest available size of the regime and snapped (in log distance) to
    the nearest available size; duplicates are removed.

    Examples
    --------
    >>> select_sizes_per_protocol([1, 10, 100, 1000, 10000, 100000], 2, 100, 10000)
    (1, 100, 1000, 10000, 100000)
    """
    sizes = np.unique(np.asarray(available, dtype=np.int64))
    sizes = sizes[(sizes >= min_size_bytes) & (sizes <= max_size_bytes)]
    if n_per_regime < 1:
        raise DataError(f"sizes_per_protocol={n_per_regime!r} is invalid: expected >= 1")
    bounds = (
        (0, small_max_bytes),
        (small_max_bytes, eager_max_bytes),
        (eager_max_bytes, 2**63 - 1),
    )
    chosen: list[int] = []
    for lo, hi in bounds:
        regime = sizes[(sizes > lo) & (sizes <= hi)]
        if regime.size == 0:
            continue
        targets = np.geomspace(regime[0], regime[-1], n_per_regime)
        logs = np.log(regime.astype(np.float64))
        for t in targets:
            chosen.append(int(regime[int(np.argmin(np.abs(logs - np.log(t))))]))
    if not chosen:
        raise DataError(f"no sizes within [{min_size_bytes}, {max_size_bytes}] B in the data")
    return tuple(sorted(set(chosen)))


def summarize(
    m: Measurements, sizes_bytes: tuple[int, ...], observable: str, sd_floor_rel: float = 0.0
) -> Observations:
    """Per-size sample mean and variance of eq. (7) of the reference paper.

    Parameters
    ----------
    m
        Filtered measurements.
    sizes_bytes
        Sizes to keep, bytes.
    observable
        ``"time_us"`` or ``"throughput_MBps"``; values are converted per replica first.
    sd_floor_rel
        The standard deviation is raised to at least ``sd_floor_rel * |mean|``; with 0
        (no floor) a zero variance is an error.

    Raises
    ------
    DataError
        For a size absent from the data, with fewer than 2 replicas, or with zero
        variance and no floor.
    """
    values = convert_values(m.value, m.size_bytes, m.unit, observable)
    present = np.unique(m.size_bytes)
    means, variances, counts, replicas = [], [], [], []
    for s in sorted(sizes_bytes):
        rows = values[m.size_bytes == s]
        if rows.size == 0:
            near: list[int] = [int(v) for v in present[np.argsort(np.abs(np.log(present / s)))[:3]]]
            raise DataError(
                f"size {s} B is missing from benchmark {m.benchmark!r}: "
                f"expected a size present in the data (nearest: {near})"
            )
        if rows.size < 2:
            raise DataError(
                f"size {s} B has {rows.size} replica(s) after filtering: expected at least 2"
            )
        mu = float(rows.mean())
        var = float(rows.var(ddof=0))
        floor = (sd_floor_rel * abs(mu)) ** 2
        if var <= 0.0 and floor <= 0.0:
            raise DataError(
                f"size {s} B has zero variance over {rows.size} replicas: expected "
                "a positive variance, or configure data.sd_floor_rel > 0"
            )
        means.append(mu)
        variances.append(max(var, floor))
        counts.append(rows.size)
        replicas.append(rows)
    return Observations(
        np.asarray(sorted(sizes_bytes), dtype=np.int64),
        np.asarray(means),
        np.asarray(variances),
        np.asarray(counts, dtype=np.int64),
        observable,
        tuple(replicas),
    )


def load_observations(spec: DataSpec, small_max_bytes: int, eager_max_bytes: int) -> Observations:
    """Read, filter, select sizes and summarize the data of a campaign's ``[data]`` table.

    Parameters
    ----------
    spec
        The validated ``[data]`` table.
    small_max_bytes, eager_max_bytes
        Protocol thresholds used by ``sizes_per_protocol`` (the campaign's fixed values).
    """
    raw = read_benchmark_csv(spec.path, spec.benchmark)
    m = filter_replicas(raw, spec.drop_warmup, spec.aggregate_bursts, spec.burst_length)
    if spec.sizes is not None:
        sizes = spec.sizes
    else:
        n = spec.sizes_per_protocol if spec.sizes_per_protocol is not None else 1
        sizes = select_sizes_per_protocol(
            m.size_bytes,
            n,
            small_max_bytes,
            eager_max_bytes,
            spec.min_size_bytes,
            spec.max_size_bytes,
        )
    return summarize(m, sizes, spec.observable, spec.sd_floor_rel)
