"""Convergence diagnostics for several independent emcee ensembles.

Walkers of one affine-invariant ensemble are not independent chains, so R-hat and
ESS computed as if they were are misleading (arviz issue 2156). Here:

* R-hat is the rank-normalized split R-hat of Vehtari et al. (2021) computed *across
  ensembles*, each ensemble's pooled (thinned) walkers forming one chain;
* ESS is ArviZ's multi-chain effective sample size (Vehtari et al. 2021; ``arviz.ess``)
  with every walker of every ensemble as one chain: bulk ESS on rank-normalized values,
  tail ESS the minimum of the ESS of the 5% and 95% quantile indicators. Its
  autocorrelation is estimated against the variance *between and within* the walkers,
  so walkers whose own means still differ (chains shorter than tens of autocorrelation
  times, as a run stopped at its ESS target is) count as correlated. The former
  estimate, ``n_walkers * n_steps / tau`` from the walker-averaged autocorrelation with
  every walker centred on its own mean (emcee's ``integrated_time``), removed that
  between-walker variance: on the known-answer posterior (40 independent runs of the
  direct sampler, ``experiments/checks/ess_check.py``) the posterior means scattered
  1.7x more in variance than it implied, and about as much as this one implies.
  :func:`autocorr_time` (that emcee estimate) is still used to choose the thinning.

All functions are pure: arrays in, arrays out.
"""

from __future__ import annotations

import arviz as az
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


def _walkers_as_chains(traces: FloatArray) -> FloatArray:
    """(n_ensembles, n_steps, n_walkers) -> (n_ensembles * n_walkers, n_steps)."""
    return np.ascontiguousarray(traces.transpose(0, 2, 1).reshape(-1, traces.shape[1]))


def _arviz_ess(chains: FloatArray, method: str) -> float:
    """ArviZ's ESS of ``chains`` (n_chains, n_draws); 0 for a trace that never varies."""
    if not np.all(np.isfinite(chains)) or np.ptp(chains) == 0.0:
        return 0.0
    value = float(np.asarray(az.ess(chains, method=method)))
    return value if np.isfinite(value) else 0.0


def ess_bulk(traces: npt.ArrayLike) -> float:
    """Bulk effective sample size of one scalar over several ensembles.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers); every walker is one chain of ArviZ's
        rank-normalized multi-chain ESS.
    """
    t = np.asarray(traces, dtype=np.float64)
    return _arviz_ess(_walkers_as_chains(t), "bulk")


def ess_tail(traces: npt.ArrayLike) -> float:
    """Tail effective sample size: min of the ESS of the 5% and 95% quantile indicators.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers); every walker is one chain.
    """
    t = np.asarray(traces, dtype=np.float64)
    return _arviz_ess(_walkers_as_chains(t), "tail")


def ess_mean(traces: npt.ArrayLike) -> float:
    """Effective sample size of the mean (ArviZ ``method="mean"``, raw values): the
    Monte Carlo error of the posterior mean is ``sd / sqrt(ess_mean)``.

    Parameters
    ----------
    traces
        Shape (n_ensembles, n_steps, n_walkers); every walker is one chain.
    """
    t = np.asarray(traces, dtype=np.float64)
    return _arviz_ess(_walkers_as_chains(t), "mean")


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
