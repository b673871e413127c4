"""Point and interval estimates from posterior samples: MAP, mean, sd, HDI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from mpiuq.calibration.errors import SamplerError

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Marginal:
    """Summary of one parameter's marginal posterior, in the parameter's unit."""

    mean: float
    sd: float
    hdi90: tuple[float, float]


def hdi(samples: npt.ArrayLike, prob: float = 0.9) -> tuple[float, float]:
    """Narrowest interval containing ``prob`` of the samples (highest density, unimodal).

    Examples
    --------
    >>> hdi(np.arange(101.0), 0.9)
    (0.0, 90.0)
    """
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    if x.size < 2 or not 0.0 < prob < 1.0:
        raise SamplerError(
            f"hdi of {x.size} samples at prob={prob!r} is invalid: expected "
            ">= 2 samples and 0 < prob < 1"
        )
    k = int(np.floor(prob * x.size))
    widths = x[k:] - x[: x.size - k]
    i = int(np.argmin(widths))
    return float(x[i]), float(x[i + k])


def marginal(samples: npt.ArrayLike, prob: float = 0.9) -> Marginal:
    """Mean, standard deviation and ``prob`` HDI of one parameter's samples."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    return Marginal(float(x.mean()), float(x.std(ddof=1)), hdi(x, prob))


def find_map(
    log_post: Callable[[FloatArray], FloatArray],
    starts: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
) -> tuple[FloatArray, float]:
    """Maximum a posteriori point by bounded L-BFGS-B from several starts.

    Parameters
    ----------
    log_post
        Vectorized log-posterior, (n, dim) -> (n,).
    starts
        Starting points inside the box, shape (k, dim) (e.g. the best posterior samples).
    lower, upper
        The prior box; the optimiser never leaves it.

    Returns
    -------
    (x_map, log_post_map)
        The best point found (never worse than the best start) and its log-posterior.
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    x0s = np.atleast_2d(np.asarray(starts, dtype=np.float64))
    scale = hi - lo

    def objective(u: FloatArray) -> float:
        v = float(log_post((lo + u * scale)[None, :])[0])
        return -v if np.isfinite(v) else 1e300

    best_x = x0s[0]
    best_v = float(log_post(x0s[:1])[0])
    for x0 in x0s:
        v0 = float(log_post(x0[None, :])[0])
        if v0 > best_v:
            best_x, best_v = x0, v0
        u0 = np.clip((x0 - lo) / scale, 0.0, 1.0)
        res = minimize(objective, u0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * lo.size)
        x = lo + np.clip(res.x, 0.0, 1.0) * scale
        v = float(log_post(x[None, :])[0])
        if v > best_v:
            best_x, best_v = x, v
    return np.asarray(best_x, dtype=np.float64), best_v
