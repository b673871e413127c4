"""Synthetic benchmark measurements: simulator outputs with replica noise.

Used to see what a planned measurement campaign could teach (``mpiuq simulate
--replicas``) and for blind recoveries of known parameters.
"""

from __future__ import annotations

import math

import numpy as np

from mpiuq.calibration.data.benchmark_csv import BENCHMARK_LABELS, Measurements
from mpiuq.calibration.errors import DataError
from mpiuq.simulator.benchmarks.run import BenchmarkResult

#: Largest coefficient of variation of the noise (1000 %).
MAX_NOISE_CV = 10.0


def synthetic_measurements(
    result: BenchmarkResult,
    replicas: int,
    noise_cv: float,
    rng: np.random.Generator,
    burst_length: int = 10,
    warmup_excess: float = 0.0,
) -> Measurements:
    """Replicas of every size with mean-preserving log-normal noise and optional warm-up.

    ``value = truth * exp(sigma * z - sigma**2 / 2)`` with ``sigma**2 = log(1 + cv**2)``,
    so every replica has mean ``truth`` and coefficient of variation ``noise_cv``.
    Values are half round trips or call times in us (ping-pong and the call-timing
    benchmarks) or throughput in MB/s (stream), labelled as in
    :data:`~mpiuq.calibration.data.benchmark_csv.BENCHMARK_LABELS`.

    Burst structure: replicas are numbered ``run = 0 .. replicas - 1`` and come in bursts
    of ``burst_length`` like the SimGrid calibration data; the first iteration of every
    burst (``run % burst_length == 0``) takes ``1 + warmup_excess`` times longer (its
    throughput is that much lower). With the default ``warmup_excess = 0`` the data have no
    warm-up, and a campaign that drops warm-up iterations says so (its ``warmup`` check).

    Raises
    ------
    DataError
        If ``replicas < 1``, ``noise_cv`` is outside ``[0, MAX_NOISE_CV]``,
        ``burst_length < 1`` or ``warmup_excess`` is not in [0, 10].
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise DataError(f"replicas={replicas!r} is invalid: expected a whole number >= 1")
    if not (math.isfinite(noise_cv) and 0 <= noise_cv <= MAX_NOISE_CV):
        raise DataError(
            f"noise_cv={noise_cv!r} is invalid: expected a number in [0, {MAX_NOISE_CV}]"
        )
    if isinstance(burst_length, bool) or not isinstance(burst_length, int) or burst_length < 1:
        raise DataError(f"burst_length={burst_length!r} is invalid: expected a whole number >= 1")
    if not (math.isfinite(warmup_excess) and 0.0 <= warmup_excess <= 10.0):
        raise DataError(f"warmup_excess={warmup_excess!r} is invalid: expected a number in [0, 10]")
    label, unit = BENCHMARK_LABELS[result.benchmark]
    truth = result.throughput_MBps if unit == "MB/s" else result.time_us
    sigma = math.sqrt(math.log1p(noise_cv**2))
    n_sizes = len(result.sizes_bytes)
    noise = np.exp(sigma * rng.standard_normal((n_sizes, replicas)) - sigma**2 / 2)
    run = np.arange(replicas, dtype=np.int64)
    slow = np.where(run % burst_length == 0, 1.0 + warmup_excess, 1.0)
    factor = slow if unit == "us" else 1.0 / slow
    return Measurements(
        run=np.tile(run, n_sizes),
        size_bytes=np.repeat(np.asarray(result.sizes_bytes, dtype=np.int64), replicas),
        value=(np.asarray(truth, dtype=np.float64)[:, None] * noise * factor).ravel(),
        unit=unit,
        benchmark=label,
    )
