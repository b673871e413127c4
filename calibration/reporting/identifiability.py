"""What the data inform: per-parameter information, identified combinations, directions.

A yes/no "constrained" flag hides both partial information and identified combinations
(a ping-pong fixes ``min(injection_bw, link_bw)``, not either bandwidth). Reported here:

* per parameter: the **sd ratio** (posterior sd / prior sd; 1 = the data say nothing, the
  information gain in bits of a Gaussian-like marginal is about ``-log2`` of it) and the
  **KL divergence** of the marginal posterior from the uniform prior, in nats
  (``log(prior width) - H(posterior)``, with the m-spacing entropy estimate of Vasicek);
* **identified combinations**: for every pair of model parameters with the same unit,
  ``min``, ``max``, ``sum`` and ratio (its spread, and its parameters' for the comparison,
  measured on the log scale, which keeps the heavy prior tail of a ratio from faking
  information); a combination is reported
  when its sd ratio (prior sd from prior draws) is at most :data:`COMBINATION_RATIO` and
  at most :data:`COMBINATION_GAIN` times the smaller sd ratio of its two parameters: the
  data fix the combination clearly better than either parameter, and it is the best of
  the four for its pair (a bottleneck ridge also narrows the sum a little). For independent
  parameters, a sum or log-ratio is never better informed than the better of the two, so
  the rule flags dependence the data created (a ridge), not coincidence;
* **directions**: eigen-decomposition of the posterior covariance in prior-standardised
  coordinates (``(x - prior mean) / prior sd``); an eigenvalue's square root is the sd
  ratio along that direction, so directions near 1 are not informed and the smallest
  ones say which linear combinations the data fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: A parameter with an sd ratio at most this is "identified" (the data cut its sd in half).
IDENTIFIED_RATIO = 0.5
#: ... and above this the data say (almost) nothing about it.
UNINFORMED_RATIO = 0.9
#: A combination is identified when its sd ratio is at most this ...
COMBINATION_RATIO = 0.5
#: ... and at most this fraction of the smaller sd ratio of its two parameters (for
#: independent parameters the fraction is >= 1 up to Monte Carlo error of a few %).
COMBINATION_GAIN = 0.8

COMBINATIONS: dict[str, Callable[[FloatArray, FloatArray], FloatArray]] = {
    "min": np.minimum,
    "max": np.maximum,
    "sum": np.add,
    "ratio": np.divide,
}
#: Spread of a combination measured on this transform of its values.
_SPREAD_SCALE: dict[str, Callable[[FloatArray], FloatArray]] = {"ratio": np.log}


@dataclass(frozen=True, slots=True)
class ParameterInformation:
    """Information the data give about one parameter."""

    sd_ratio: float
    kl_nats: float

    @property
    def label(self) -> str:
        """``"identified"``, ``"weakly identified"`` or ``"not identified"``."""
        if self.sd_ratio <= IDENTIFIED_RATIO:
            return "identified"
        if self.sd_ratio <= UNINFORMED_RATIO:
            return "weakly identified"
        return "not identified"


@dataclass(frozen=True, slots=True)
class Combination:
    """A derived quantity of two parameters and how well the data fix it.

    ``gain`` is ``sd_ratio`` over the smaller sd ratio of the two parameters (< 1: the
    combination is better informed than either parameter).
    """

    kind: str
    first: str
    second: str
    sd_ratio: float
    gain: float
    median: float
    hdi90: tuple[float, float]
    identified: bool

    @property
    def expression(self) -> str:
        """E.g. ``min(injection_bw_GBps, link_bw_GBps)``."""
        if self.kind == "ratio":
            return f"{self.first} / {self.second}"
        return f"{self.kind}({self.first}, {self.second})"


@dataclass(frozen=True, slots=True)
class Direction:
    """One eigen-direction of the posterior covariance in prior-standardised coordinates."""

    sd_ratio: float
    loadings: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class Identifiability:
    """Per-parameter information, candidate combinations and eigen-directions."""

    parameters: tuple[ParameterInformation, ...]
    combinations: tuple[Combination, ...]
    directions: tuple[Direction, ...]

    @property
    def identified_combinations(self) -> tuple[Combination, ...]:
        """The combinations the data fix much better than their parameters."""
        return tuple(c for c in self.combinations if c.identified)


def spacing_entropy(samples: npt.ArrayLike) -> float:
    """Differential entropy (nats) by Vasicek's m-spacing estimator, m = round(sqrt(n)).

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(0.0, 2.0, 20000)
    >>> round(spacing_entropy(x), 2)  # log(2) = 0.69
    0.69
    """
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    n = x.size
    m = max(1, round(np.sqrt(n)))
    upper = x[np.minimum(np.arange(n) + m, n - 1)]
    lower = x[np.maximum(np.arange(n) - m, 0)]
    span = np.maximum(upper - lower, 1e-300)
    # bias correction for the clipped ends (Ebrahimi et al. 1994 weights)
    counts = np.minimum(np.arange(n) + m, n - 1) - np.maximum(np.arange(n) - m, 0)
    return float(np.mean(np.log(n * span / counts)))


def parameter_information(
    samples: npt.ArrayLike, prior_lower: float, prior_upper: float
) -> ParameterInformation:
    """sd ratio and KL(posterior || uniform prior) of one parameter's draws."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    width = prior_upper - prior_lower
    ratio = float(x.std(ddof=1) / (width / np.sqrt(12.0)))
    kl = max(0.0, float(np.log(width) - spacing_entropy(x)))
    return ParameterInformation(ratio, kl)


def analyse(
    draws: npt.ArrayLike,
    names: tuple[str, ...],
    units: tuple[str, ...],
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    rng: np.random.Generator,
    n_prior: int = 20000,
) -> Identifiability:
    """Information per parameter, identified combinations and eigen-directions.

    Parameters
    ----------
    draws
        Posterior draws, shape (n, dim).
    names, units
        Parameter names and units; combinations pair parameters of equal unit.
    lower, upper
        Uniform prior bounds, shape (dim,).
    rng
        Draws the prior samples that give the combinations' prior sd.
    n_prior
        Prior draws per combination.
    """
    from mpiuq.calibration.reporting.summaries import hdi

    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    info = tuple(parameter_information(x[:, j], lo[j], hi[j]) for j in range(x.shape[1]))
    prior = rng.uniform(lo, hi, size=(n_prior, lo.size))
    combos: list[Combination] = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if units[a] != units[b] or not units[a]:
                continue
            for kind, fn in COMBINATIONS.items():
                post = fn(x[:, a], x[:, b])
                spread = _SPREAD_SCALE.get(kind, np.asarray)
                ratio = float(
                    spread(post).std(ddof=1) / spread(fn(prior[:, a], prior[:, b])).std(ddof=1)
                )
                singles = [
                    float(spread(x[:, k]).std(ddof=1) / spread(prior[:, k]).std(ddof=1))
                    for k in (a, b)
                ]
                gain = ratio / max(min(singles), 1e-300)
                identified = ratio <= COMBINATION_RATIO and gain <= COMBINATION_GAIN
                combos.append(
                    Combination(
                        kind,
                        names[a],
                        names[b],
                        ratio,
                        gain,
                        float(np.median(post)),
                        hdi(post),
                        identified,
                    )
                )
    best: dict[tuple[str, str], float] = {}
    for cmb in combos:
        key = (cmb.first, cmb.second)
        best[key] = min(best.get(key, np.inf), cmb.gain)
    combos = [
        replace(cmb, identified=cmb.identified and cmb.gain == best[(cmb.first, cmb.second)])
        for cmb in combos
    ]
    combos.sort(key=lambda c: c.gain)
    prior_sd = (hi - lo) / np.sqrt(12.0)
    z = (x - (lo + hi) / 2.0) / prior_sd
    cov = np.atleast_2d(np.cov(z, rowvar=False))
    vals, vecs = np.linalg.eigh(cov)
    directions = tuple(
        Direction(
            float(np.sqrt(max(vals[k], 0.0))),
            tuple(
                (names[j], float(vecs[j, k]))
                for j in np.argsort(-np.abs(vecs[:, k]))
                if abs(vecs[j, k]) >= 0.2
            ),
        )
        for k in range(vals.size)
    )
    return Identifiability(info, tuple(combos), directions)
