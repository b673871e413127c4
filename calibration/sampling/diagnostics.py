"""Convergence diagnostics for several independent emcee ensembles.

Walkers of one affine-invariant ensemble are not independent chains, so R-hat and
ESS computed as if they were are misleading (arviz issue 2156). Here:

* R-hat is the rank-normalized split R-hat of Vehtari et al. (2021) computed *across
  ensembles*, each ensemble's pooled (thinned) walkers forming one chain;
* ESS comes from the integrated autocorrelation time (emcee's Sokal window on the
  walker-averaged autocorrelation): ``ESS = n_walkers * n_steps / tau`` per ensemble,
  summed over ensembles. Bulk ESS uses rank-normalized values, tail ESS the minimum of
  the ESS of the 5% and 95% quantile indicators.

All functions are pure: arrays in, arrays out.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from emcee.autocorr import auto_window, function_1d
from scipy.special import ndtri
from scipy.stats import rankdata

from mpiuq.calibration.errors import SamplerError

FloatArray = npt.NDArray[np.float64]


def _z_scale(x: FloatArray) -> FloatArray:
    """Rank-normalize all values of ``x`` jointly (fractional offset 3/8, Blom)."""
    r = rankdata(x, method="average").reshape(x.shape)
    return np.asarray(ndtri((r - 0.375) / (x.size + 0.25)), dtype=np.float64)


def _split(chains: FloatArray) -> FloatArray:
    n = chains.shape[1] // 2
    return np.concatenate([chains[:, :n], chains[:, chains.shape[1] - n :]], axis=0)


def _basic_rhat(chains: FloatArray) -> float:
    n = chains.shape[1]
    means = chains.mean(axis=1)
    w = chains.var(axis=1, ddof=1).mean()
    b = n * means.var(ddof=1)
    if w <= 0.0:
        return float("nan") if b <= 0.0 else float("inf")
    return float(np.sqrt(((n - 1) / n * w + b / n) / w))


def rank_rhat(chains: npt.ArrayLike) -> float:
    """Rank-normalized split R-hat of one scalar quantity (Vehtari et al. 2021, eq. 4-5).

    Parameters
    ----------
    chains
        Draws of shape (n_chains, n_draws), n_chains >= 2 and n_draws >= 4.

    Returns
    -------
    float
        max(bulk R-hat, folded tail R-hat); close to 1 for chains from one distribution.
    """
    x = np.asarray(chains, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 4:
        raise SamplerError(f"chains of shape {x.shape} are invalid: expected (>=2, >=4)")
    split = _split(x)
    bulk = _basic_rhat(_z_scale(split))
    folded = np.abs(split - np.median(split))
    tail = _basic_rhat(_z_scale(folded))
    return max(bulk, tail)


def autocorr_time(x: npt.ArrayLike) -> float:
    """Integrated autocorrelation time of one ensemble's trace, in steps.

    Parameters
    ----------
    x
        Trace of one scalar, shape (n_steps, n_walkers); the normalized autocorrelation
        function is averaged over the non-constant walkers and summed up to Sokal's
        automatic window with c = 5 (as emcee's ``integrated_time``).

    Returns
    -------
    float
        tau >= 1 (``inf`` for a constant trace, which carries no information).
    """
    a = np.asarray(x, dtype=np.float64)
    # walkers whose trace varies above rounding (a constant trace has no autocorrelation)
    scale = np.maximum(np.abs(a).max(axis=0), 1e-300)
    live = a[:, a.std(axis=0) > 1e-12 * scale]
    if live.shape[1] == 0:
        return float("inf")
    f = np.mean([function_1d(live[:, k]) for k in range(live.shape[1])], axis=0)
    taus = 2.0 * np.cumsum(f) - 1.0
    window = auto_window(taus, 5.0)
    tau = float(taus[window])
    return max(tau, 1.0) if np.isfinite(tau) else float("inf")


def _ess_sum(traces: FloatArray) -> float:
    """Sum over ensembles of n_walkers * n_steps / tau; traces (n_ens, n_steps, n_walkers)."""
    total = 0.0
    for e in range(traces.shape[0]):
        tau = autocorr_time(traces[e])
        if np.isfinite(tau):
            total += traces.shape[1] * traces.shape[2] / tau
    return total


def ess_bulk(traces: npt.ArrayLike) -> float:
    """Bulk effective sample size of one scalar over several ensembles.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers).
    """
    t = np.asarray(traces, dtype=np.float64)
    return _ess_sum(_z_scale(t))


def ess_tail(traces: npt.ArrayLike) -> float:
    """Tail effective sample size: min of the ESS of the 5% and 95% quantile indicators.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers).
    """
    t = np.asarray(traces, dtype=np.float64)
    q05, q95 = np.quantile(t, [0.05, 0.95])
    return min(_ess_sum((t <= q05).astype(np.float64)), _ess_sum((t <= q95).astype(np.float64)))


def ensemble_rhat(traces: npt.ArrayLike, thin: int = 1) -> float:
    """R-hat across ensembles, each ensemble's thinned walkers pooled into one chain.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers). Draws are pooled step-major, so the
        split halves of each chain are the early and late halves of the run.
    thin
        Keep every ``thin``-th step before pooling.
    """
    t = np.asarray(traces, dtype=np.float64)[:, :: max(1, int(thin)), :]
    return rank_rhat(t.reshape(t.shape[0], -1))
