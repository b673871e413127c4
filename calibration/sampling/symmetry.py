"""Exchangeable parameters: sample one ordering, then symmetrise the draws.

Some parameters enter the model only symmetrically: in a two-node ping-pong a message
crosses the sender's injection link and one network link in series, so swapping
``injection_bw_GBps`` and ``link_bw_GBps`` leaves every output unchanged. With the same
prior on both, the posterior is then symmetric under the swap, and a sampler that has to
find both mirror images (an L-shaped ridge ``min(a, b) = c`` here) mixes slowly and can
report an asymmetric answer. A campaign declares such groups (``[posterior]
exchangeable``); the sampler then works on the ordered copy of each group (the fundamental
domain ``x_1 <= x_2 <= ...``, where the posterior is the symmetric one folded, with the
same shape on a k!-times smaller volume) and every final draw gets a uniformly random
permutation of each group's values. The draws are then exactly symmetric in distribution,
and their marginals for the exchangeable parameters agree up to Monte Carlo error.

A declaration is a claim about the model; :func:`swap_error` tests it on random prior
points (the campaign's ``exchangeable`` check fails when a swap changes any output).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt
from scipy.stats import ks_2samp

FloatArray = npt.NDArray[np.float64]
Groups = tuple[tuple[int, ...], ...]


def fold(x: npt.ArrayLike, groups: Groups) -> FloatArray:
    """Each group's columns sorted ascending in every row (the fundamental domain).

    Examples
    --------
    >>> fold([[3.0, 1.0, 5.0]], ((0, 1),)).tolist()
    [[1.0, 3.0, 5.0]]
    """
    out = np.array(x, dtype=np.float64, ndmin=2)
    for g in groups:
        out[:, list(g)] = np.sort(out[:, list(g)], axis=1)
    return out


def ordered(x: FloatArray, groups: Groups) -> npt.NDArray[np.bool_]:
    """Whether every row lies in the fundamental domain (each group non-decreasing)."""
    ok = np.ones(x.shape[0], dtype=bool)
    for g in groups:
        for a, b in pairwise(g):
            ok &= x[:, a] <= x[:, b]
    return ok


def symmetrise(x: npt.ArrayLike, groups: Groups, rng: np.random.Generator) -> FloatArray:
    """A uniformly random permutation of each group's values in every row.

    Draws of the folded posterior become draws of the symmetric posterior.
    """
    out = np.array(x, dtype=np.float64, ndmin=2)
    for g in groups:
        cols = np.asarray(g)
        perm = np.argsort(rng.random((out.shape[0], cols.size)), axis=1)
        out[:, cols] = np.take_along_axis(out[:, cols], perm, axis=1)
    return out


def swap_error(
    model: Callable[[FloatArray], FloatArray],
    groups: Groups,
    lower: FloatArray,
    upper: FloatArray,
    rng: np.random.Generator,
    n_points: int = 64,
) -> float:
    """Largest relative change of any output when an exchangeable pair is swapped.

    Parameters
    ----------
    model
        Batch model over the model parameters ``f(X) -> Y``.
    groups
        Exchangeable groups (column indices among the model parameters).
    lower, upper
        Prior box of the model parameters.
    rng
        The random prior points.
    n_points
        Prior points tested per pair of adjacent group members.

    Returns
    -------
    float
        ``max |f(swap(x)) - f(x)| / max(|f(x)|, tiny)`` over points, outputs and pairs
        (0.0 for an exactly symmetric model; NaN outputs give ``inf``).
    """
    if not groups:
        return 0.0
    x = rng.uniform(lower, upper, size=(n_points, lower.size))
    swapped = []
    for g in groups:
        for a, b in pairwise(g):
            y = x.copy()
            y[:, [a, b]] = y[:, [b, a]]
            swapped.append(y)
    f = np.asarray(model(np.concatenate([x, *swapped])), dtype=np.float64)
    base = f[:n_points]
    worst = 0.0
    for k in range(len(swapped)):
        other = f[(k + 1) * n_points : (k + 2) * n_points]
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.abs(other - base) / np.maximum(np.abs(base), 1e-300)
        worst = max(worst, float(np.max(np.where(np.isfinite(rel), rel, np.inf))))
    return worst


@dataclass(frozen=True, slots=True)
class SymmetryCheck:
    """How symmetric the final draws of one exchangeable pair are.

    Attributes
    ----------
    first, second
        Parameter names.
    mean_diff_sd
        ``|mean(first) - mean(second)|`` over their average sd.
    ks_p
        Two-sample Kolmogorov-Smirnov p-value of the two marginals (draws, not independent
        samples: indicative).
    """

    first: str
    second: str
    mean_diff_sd: float
    ks_p: float


def symmetry_checks(
    draws: FloatArray, groups: Groups, names: tuple[str, ...]
) -> tuple[SymmetryCheck, ...]:
    """Marginal agreement of every adjacent pair of every exchangeable group."""
    out = []
    for g in groups:
        for a, b in pairwise(g):
            sd = 0.5 * (draws[:, a].std() + draws[:, b].std())
            diff = abs(float(draws[:, a].mean() - draws[:, b].mean())) / max(float(sd), 1e-300)
            p = float(ks_2samp(draws[:, a], draws[:, b]).pvalue)
            out.append(SymmetryCheck(names[a], names[b], diff, p))
    return tuple(out)
