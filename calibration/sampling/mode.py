"""A maximum a posteriori point only where it is one: multi-start search and its agreement.

On a ridge (a ping-pong sees only ``min(injection, link)``) or along a parameter the data
do not inform, the posterior has no single mode: optimisers started at different
posterior draws stop at different points of equal height, and a reported "MAP" is an
arbitrary point that flips between runs. :func:`search_mode` runs bounded L-BFGS-B
from several posterior draws, in coordinates scaled by the posterior sd, and calls the
mode unique only when every near-optimal end point (within ``tol_log_post`` of the best)
agrees with the best within ``tol_sd`` posterior sd in every parameter.

Gradients are forward differences evaluated in one batch per iteration (the simulator is
cheap per batch, not per call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

FloatArray = npt.NDArray[np.float64]

#: Near-optimal end points lie within this many nats of the best log-posterior.
TOL_LOG_POST = 1.0
#: A unique mode's near-optimal end points agree within this many posterior sd.
TOL_SD = 0.25


@dataclass(frozen=True, slots=True)
class ModeSearch:
    """Outcome of a multi-start mode search.

    Attributes
    ----------
    best
        Best end point, shape (dim,).
    best_log_post
        Its log-posterior (up to a constant).
    unique
        Whether all near-optimal end points agree (see module docstring).
    spread_sd
        Per parameter: largest distance of a near-optimal end point from ``best``, in
        posterior sd, shape (dim,).
    n_near
        Number of near-optimal end points.
    ends, ends_log_post
        All end points and their log-posteriors.
    """

    best: FloatArray
    best_log_post: float
    unique: bool
    spread_sd: FloatArray
    n_near: int
    ends: FloatArray
    ends_log_post: FloatArray

    def reason(self, names: tuple[str, ...]) -> str:
        """Why the mode is (not) unique, naming the parameters that disagree."""
        if self.unique:
            return f"{self.n_near} starts agree within {TOL_SD} posterior sd"
        bad = [
            f"{n} ({s:.2g} sd)" for n, s in zip(names, self.spread_sd, strict=True) if s > TOL_SD
        ]
        return (
            f"{self.n_near} near-optimal end points (within {TOL_LOG_POST} of the best "
            f"log-posterior) disagree in {', '.join(bad)}: a ridge or flat direction"
        )


def search_mode(
    log_post: Callable[[FloatArray], FloatArray],
    starts: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    scale: npt.ArrayLike,
    max_iter: int = 200,
) -> ModeSearch:
    """Maximise a vectorized log-posterior from several starts inside a box.

    Parameters
    ----------
    log_post
        Vectorized log-posterior, (n, dim) -> (n,).
    starts
        Start points inside the box, shape (k, dim), k >= 2.
    lower, upper
        The box, shape (dim,).
    scale
        Posterior sd per parameter (coordinates and agreement are measured in it).
    max_iter
        L-BFGS-B iterations per start.

    Examples
    --------
    >>> lp = lambda x: -0.5 * np.sum((x - 1.0) ** 2, axis=1)
    >>> m = search_mode(lp, [[0.0, 0.0], [2.0, 1.5]], [-5, -5], [5, 5], [1.0, 1.0])
    >>> bool(m.unique), np.round(m.best, 3).tolist()
    (True, [1.0, 1.0])
    >>> ridge = lambda x: -0.5 * (x[:, 0] - x[:, 1]) ** 2 * 100
    >>> bool(search_mode(ridge, [[0.0, 1.0], [3.0, 2.0]], [-5, -5], [5, 5], [1, 1]).unique)
    False
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    sc = np.maximum(np.asarray(scale, dtype=np.float64), 1e-12 * (hi - lo))
    x0s = np.atleast_2d(np.asarray(starts, dtype=np.float64))
    dim = lo.size
    h = 1e-4

    def value_and_grad(u: FloatArray) -> tuple[float, FloatArray]:
        x = lo + u * sc
        steps = np.where(x + h * sc <= hi, h, -h)
        pts = np.tile(x, (dim + 1, 1))
        pts[1:] += np.diag(steps * sc)
        v = np.asarray(log_post(pts), dtype=np.float64)
        if not np.isfinite(v[0]):
            return 1e300, np.zeros(dim)
        grad = np.where(np.isfinite(v[1:]), (v[1:] - v[0]) / steps, 0.0)
        return -float(v[0]), -grad

    bounds = list(zip(np.zeros(dim), (hi - lo) / sc, strict=True))
    ends, values = [], []
    for x0 in x0s:
        u0 = np.clip((x0 - lo) / sc, 0.0, (hi - lo) / sc)
        res = minimize(
            value_and_grad,
            u0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": max_iter},
        )
        x = np.clip(lo + res.x * sc, lo, hi)
        ends.append(x)
        values.append(float(log_post(x[None, :])[0]))
    end = np.asarray(ends)
    val = np.asarray(values)
    k = int(np.argmax(val))
    near = val >= val[k] - TOL_LOG_POST
    spread = np.max(np.abs(end[near] - end[k]) / sc, axis=0)
    unique = bool(near.sum() >= 2 and np.all(spread <= TOL_SD))
    return ModeSearch(end[k], float(val[k]), unique, spread, int(near.sum()), end, val)
