"""Local refinement of the surrogate where the posterior lies.

A global chaos fitted over the whole prior box is accurate *on average* (its LOO error),
but the posterior occupies a small corner of that box, where the error can be many data
standard deviations (17 sd at 440,936 B on the Stampede job with the level-4 / order-4
global surrogate). Refinement zooms in:

1. the local box is the posterior draws' 0.5-99.5% range, widened by ``pad`` times its
   width on each side and clipped to the prior;
2. a sparse grid on that box, plus the simulator runs already made at posterior draws
   inside it, trains a new chaos of the same order;
3. the posterior is sampled again on the new chaos, the prior restricted to the box;
4. the simulator is run at fresh posterior draws: the RMS error of the chaos there, per
   output and in data standard deviations, decides whether to stop (at most
   ``target_error_sd``), and draws that press against an inner face of the box widen
   that face in the next round.

The result is a proposal for :mod:`~mpiuq.calibration.sampling.exact`, which makes the posterior
exact for the simulator; refinement only makes that step efficient (a high effective
sample size). Any batch model ``f(X) -> Y`` works, not just the benchmark simulator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.surrogate.design.box import ParameterBox

FloatArray = npt.NDArray[np.float64]
BatchModel = Callable[[FloatArray], FloatArray]

#: Quantiles of the posterior draws that span a local box before padding.
BOX_QUANTILES: tuple[float, float] = (0.005, 0.995)
#: Draws within this fraction of the box width from an inner face press against it.
EDGE_FRACTION = 0.01
#: Share of the draws near an inner face that counts as pressing against it.
EDGE_SHARE = 0.01


@dataclass(frozen=True, slots=True)
class SurrogateCheck:
    """The surrogate against the simulator at posterior draws.

    Attributes
    ----------
    rmse
        RMS of ``surrogate - simulator`` per output, in the observable's unit.
    max_abs
        Largest absolute error per output.
    rmse_sd
        ``rmse`` in data standard deviations.
    n_draws
        Draws compared.
    """

    rmse: FloatArray
    max_abs: FloatArray
    rmse_sd: FloatArray
    n_draws: int

    @property
    def worst_sd(self) -> float:
        """Largest RMS error over outputs, in data standard deviations."""
        return float(np.max(self.rmse_sd))


def surrogate_check(
    surrogate_y: npt.ArrayLike, simulator_y: npt.ArrayLike, data_sd: npt.ArrayLike
) -> SurrogateCheck:
    """Compare surrogate and simulator outputs at the same draws.

    Examples
    --------
    >>> c = surrogate_check([[1.0, 2.0]], [[1.0, 2.5]], [0.1, 0.25])
    >>> c.rmse_sd.tolist()
    [0.0, 2.0]
    """
    s = np.atleast_2d(np.asarray(surrogate_y, dtype=np.float64))
    y = np.atleast_2d(np.asarray(simulator_y, dtype=np.float64))
    err = s - y
    rmse = np.sqrt(np.mean(err**2, axis=0))
    return SurrogateCheck(
        rmse, np.max(np.abs(err), axis=0), rmse / np.asarray(data_sd, dtype=np.float64), len(y)
    )


def local_box(
    draws: npt.ArrayLike,
    prior_lower: npt.ArrayLike,
    prior_upper: npt.ArrayLike,
    pad: float,
    widen: npt.ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Box around posterior draws: their 0.5-99.5% range, padded, within the prior.

    Parameters
    ----------
    draws
        Posterior draws of the model parameters, shape (n, dim).
    prior_lower, prior_upper
        The prior box, shape (dim,).
    pad
        Widening on each side, as a fraction of the draws' range.
    widen
        Optional (dim, 2) booleans: faces (lower, upper) to push out by a further
        ``max(1, pad)`` ranges (faces the previous round's draws pressed against).

    Returns
    -------
    (lower, upper)
        Never narrower than 1e-6 of the prior width.

    Examples
    --------
    >>> lo, hi = local_box([[1.0], [2.0]], [0.0], [10.0], pad=0.5)
    >>> round(float(lo[0]), 3), round(float(hi[0]), 3)
    (0.51, 2.49)
    """
    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    plo = np.asarray(prior_lower, dtype=np.float64)
    phi = np.asarray(prior_upper, dtype=np.float64)
    qlo, qhi = np.quantile(x, BOX_QUANTILES, axis=0)
    width = np.maximum(qhi - qlo, 1e-6 * (phi - plo))
    extra = np.zeros((plo.size, 2))
    if widen is not None:
        extra = np.asarray(widen, dtype=bool) * max(1.0, pad)
    lo = np.maximum(plo, qlo - (pad + extra[:, 0]) * width)
    hi = np.minimum(phi, qhi + (pad + extra[:, 1]) * width)
    return lo, hi


def pressed_faces(
    draws: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    prior_lower: npt.ArrayLike,
    prior_upper: npt.ArrayLike,
) -> npt.NDArray[np.bool_]:
    """Inner faces of a local box that posterior draws press against, shape (dim, 2).

    A face is inner when it lies inside the prior; draws press against it when more than
    :data:`EDGE_SHARE` of them lie within :data:`EDGE_FRACTION` of the box width from it:
    the posterior is truncated there and the box must grow.
    """
    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    plo = np.asarray(prior_lower, dtype=np.float64)
    phi = np.asarray(prior_upper, dtype=np.float64)
    band = EDGE_FRACTION * (hi - lo)
    near_lo = np.mean(x <= lo + band, axis=0) > EDGE_SHARE
    near_hi = np.mean(x >= hi - band, axis=0) > EDGE_SHARE
    inner_lo = lo > plo * (1 + 1e-12)
    inner_hi = hi < phi * (1 - 1e-12)
    return np.stack([near_lo & inner_lo, near_hi & inner_hi], axis=1)


def local_design(
    box: ParameterBox,
    level: int,
    extra_points: npt.ArrayLike | None = None,
) -> FloatArray:
    """A sparse grid on ``box`` plus extra (posterior) points that lie inside it."""
    from mpiuq.surrogate.design.designs import sparse_grid_design

    grid = np.asarray(sparse_grid_design(box, level), dtype=np.float64)
    if extra_points is None:
        return grid
    extra = np.atleast_2d(np.asarray(extra_points, dtype=np.float64))
    inside = extra[np.asarray(box.contains(extra), dtype=bool)]
    return np.concatenate([grid, inside]) if inside.size else grid
