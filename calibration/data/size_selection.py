"""Choice of the calibrated message sizes: log-spaced sizes within every regime."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import DataError


def select_sizes_per_regime(
    available: npt.ArrayLike,
    n_per_regime: int,
    thresholds: tuple[int, ...],
    min_size_bytes: int = 1,
    max_size_bytes: int = 2**62,
) -> tuple[int, ...]:
    """Pick ``n_per_regime`` log-spaced sizes inside each protocol regime.

    The regimes are the size ranges ``(0, t_0], (t_0, t_1], ..., (t_last, inf)`` of the
    ascending ``thresholds``. Within each regime, ``n`` targets are log-spaced between
    the smallest and largest available size of the regime (among those in
    ``[min_size_bytes, max_size_bytes]``) and snapped (in log distance) to the nearest
    available size; duplicates are removed.

    Examples
    --------
    >>> select_sizes_per_regime([1, 10, 100, 1000, 10000, 100000], 1, (10, 1000))
    (1, 100, 10000)
    """
    sizes = np.unique(np.asarray(available, dtype=np.int64))
    sizes = sizes[(sizes >= min_size_bytes) & (sizes <= max_size_bytes)]
    if n_per_regime < 1:
        raise DataError(f"sizes_per_protocol={n_per_regime!r} is invalid: expected >= 1")
    edges = [0, *sorted(int(t) for t in thresholds), 2**63 - 1]
    chosen: list[int] = []
    for lo, hi in itertools.pairwise(edges):
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
