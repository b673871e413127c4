"""Synthetic benchmark measurements: simulator outputs with replica noise.

Used to see what a planned measurement campaign could teach (``mpiuq simulate
--replicas``) and for blind recoveries of known parameters.
"""

from __future__ import annotations

import math

import numpy as np

from mpiuq.calibration.benchmark_csv import BENCHMARK_LABELS, Measurements
from mpiuq.calibration.errors import DataError
from mpiuq.simulator.benchmarks import BenchmarkResult

#: Largest coefficient of variation of the noise (1000 %).
MAX_NOISE_CV = 10.0


def synthetic_measurements(
    result: BenchmarkResult, replicas: int, noise_cv: float, rng: np.random.Generator
) -> Measurements:
    """Replicas of every size with mean-preserving log-normal noise.

    ``value = truth * exp(sigma * z - sigma**2 / 2)`` with ``sigma**2 = log(1 + cv**2)``,
    so every replica has mean ``truth`` and coefficient of variation ``noise_cv``.
    Values are half round trips in us (ping-pong) or throughput in MB/s (stream),
    labelled as in :data:`~mpiuq.calibration.benchmark_csv.BENCHMARK_LABELS`.

    Raises
    ------
    DataError
        If ``replicas < 1`` or ``noise_cv`` is outside ``[0, MAX_NOISE_CV]``.
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise DataError(f"replicas={replicas!r} is invalid: expected a whole number >= 1")
    if not (math.isfinite(noise_cv) and 0 <= noise_cv <= MAX_NOISE_CV):
        raise DataError(
            f"noise_cv={noise_cv!r} is invalid: expected a number in [0, {MAX_NOISE_CV}]"
        )
    label, unit = BENCHMARK_LABELS[result.benchmark]
    truth = result.time_us if result.benchmark == "pingpong" else result.throughput_MBps
    sigma = math.sqrt(math.log1p(noise_cv**2))
    n_sizes = len(result.sizes_bytes)
    noise = np.exp(sigma * rng.standard_normal((n_sizes, replicas)) - sigma**2 / 2)
    return Measurements(
        run=np.tile(np.arange(replicas, dtype=np.int64), n_sizes),
        size_bytes=np.repeat(np.asarray(result.sizes_bytes, dtype=np.int64), replicas),
        value=(np.asarray(truth, dtype=np.float64)[:, None] * noise).ravel(),
        unit=unit,
        benchmark=label,
    )
