"""Per-parameter estimates from the exact posterior draws: median, mean, sd, HDI, mode.

The median and the 90% highest-density interval are the primary report (they are
invariant to where a ridge is cut); the MAP is reported only where the multi-start
search of :mod:`~mpiuq.calibration.sampling.mode` finds a unique mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.likelihood import LogPosterior
from mpiuq.calibration.reporting.identifiability import Identifiability, analyse
from mpiuq.calibration.reporting.summaries import Marginal, marginal
from mpiuq.calibration.sampling.mode import ModeSearch, search_mode

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Estimates:
    """Per-parameter estimates, in the parameters' units.

    Attributes
    ----------
    median
        Posterior median of every parameter, shape (dim,).
    marginals
        Mean, sd and 90% HDI of every parameter.
    mode
        The multi-start mode search (``mode.unique`` says whether a MAP exists).
    identifiability
        Information per parameter, identified combinations, eigen-directions.
    """

    median: FloatArray
    marginals: tuple[Marginal, ...]
    mode: ModeSearch
    identifiability: Identifiability

    @property
    def map(self) -> FloatArray | None:
        """The MAP point if the mode is unique, else None."""
        return self.mode.best if self.mode.unique else None


def estimate(
    draws: FloatArray,
    loglik: FloatArray,
    target: LogPosterior,
    names: tuple[str, ...],
    units: tuple[str, ...],
    lower: FloatArray,
    upper: FloatArray,
    map_starts: int,
    rng: np.random.Generator,
) -> Estimates:
    """Marginal summaries, identifiability and a multi-start mode search.

    Parameters
    ----------
    draws
        Posterior draws (full vectors), shape (n, dim).
    loglik
        Their log-likelihood (summed over outputs), shape (n,); picks the best starts.
    target
        The log-posterior the mode search maximises (the simulator's).
    names, units
        Parameter names and units.
    lower, upper
        Prior bounds.
    map_starts
        Starts of the mode search: half the best draws, half random draws.
    rng
        Random starts and the prior draws of the identifiability analysis.
    """
    marginals = tuple(marginal(draws[:, j]) for j in range(draws.shape[1]))
    ident = analyse(draws, names, units, lower, upper, rng)
    best = np.argsort(loglik)[::-1][: max(1, map_starts // 2)]
    rand = rng.choice(draws.shape[0], size=map_starts - best.size, replace=False)
    starts = draws[np.concatenate([best, rand])]
    sd = np.array([m.sd for m in marginals])
    mode = search_mode(target, starts, lower, upper, sd)
    return Estimates(np.median(draws, axis=0), marginals, mode, ident)
