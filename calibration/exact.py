"""The posterior exact for the simulator: importance weights, then resample-move.

Why this design. The benchmark simulator is cheap in batches (about 10,000 parameter
sets x 18 sizes per second through ``BenchmarkModel``) but not per call (a few ms), so
MCMC directly on it, one small batch per emcee move, would take minutes; delayed
acceptance has the same per-call cost. Population methods evaluate thousands of
parameter sets per call instead:

1. **Importance sampling.** Draws ``x_n`` of the (locally refined) surrogate posterior
   ``q`` are weighted by ``w_n = p(D | x_n; simulator) / p(D | x_n; surrogate)`` (same
   uniform prior). The Pareto-smoothed weights (PSIS, Vehtari et al. 2024) give the
   effective sample size and the Pareto ``k-hat``: k-hat <= 0.7 means the weighted draws
   estimate the simulator's posterior reliably; larger means the surrogate posterior
   misses part of it (the campaign check fails).
2. **Resample-move** (Gilks & Berzuini 2001). The draws are resampled by their weights
   (systematic resampling) and every draw then takes ``move_steps`` Metropolis steps whose
   target is the simulator's posterior, with differential-evolution proposals built from
   the other half of the population (ter Braak 2006; the two halves alternate, so each
   half-step is a valid Metropolis kernel given the other half). Each half-step is one
   batch of simulator runs. This removes the duplicates of resampling and corrects what
   the weights could not, within the prior box (not only the local surrogate's box).

The moved draws, the simulator's outputs at them and the pointwise log-likelihood are
the campaign's posterior, predictive and model-comparison input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.likelihood import LogPosterior

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ImportanceWeights:
    """Pareto-smoothed importance weights of proposal draws.

    Attributes
    ----------
    log_weights
        Smoothed, normalised log weights, shape (n,).
    khat
        Pareto shape estimate of the weights' tail.
    ess
        Effective sample size ``1 / sum(w^2)`` of the smoothed normalised weights.
    """

    log_weights: FloatArray
    khat: float
    ess: float


def psis_weights(log_ratio: npt.ArrayLike) -> ImportanceWeights:
    """Pareto-smoothed importance weights from log density ratios (ArviZ ``psislw``).

    Parameters
    ----------
    log_ratio
        ``log p(x_n) - log q(x_n)`` up to a constant, shape (n,); ``-inf`` allowed.

    Examples
    --------
    >>> w = psis_weights(np.zeros(1000))
    >>> round(w.ess), round(float(np.exp(w.log_weights).sum()), 6)
    (1000, 1.0)
    """
    import arviz as az

    lr = np.asarray(log_ratio, dtype=np.float64).ravel()
    finite = np.isfinite(lr)
    shifted = np.where(finite, lr - (lr[finite].max() if finite.any() else 0.0), -np.inf)
    with np.errstate(over="ignore"):  # ArviZ's tail fit overflows harmlessly for flat tails
        smoothed, khat = az.psislw(np.where(finite, shifted, -1e300))
    lw = np.asarray(smoothed, dtype=np.float64)
    lw = lw - np.logaddexp.reduce(lw)
    w = np.exp(lw)
    return ImportanceWeights(lw, float(khat), float(1.0 / np.sum(w**2)))


def systematic_resample(
    log_weights: npt.ArrayLike, n: int, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Indices of ``n`` draws by systematic resampling (one uniform, low variance).

    Examples
    --------
    >>> systematic_resample(np.log([0.5, 0.5]), 4, np.random.default_rng(0)).tolist()
    [0, 0, 1, 1]
    """
    w = np.exp(np.asarray(log_weights, dtype=np.float64))
    cdf = np.cumsum(w / w.sum())
    cdf[-1] = 1.0
    u = (rng.random() + np.arange(n)) / n
    return np.searchsorted(cdf, u, side="right").astype(np.int64)


@dataclass(frozen=True, slots=True)
class MoveStats:
    """What the resample-move steps did.

    Attributes
    ----------
    steps
        Metropolis steps per draw.
    acceptance
        Fraction of accepted proposals over all steps.
    unique_before, unique_after
        Distinct draws after resampling and after the moves.
    drift_sd
        Change of each parameter's mean over the second half of the moves, in posterior
        sd: near 0 when the population was already at the simulator's posterior.
    """

    steps: int
    acceptance: float
    unique_before: int
    unique_after: int
    drift_sd: FloatArray


@dataclass(frozen=True, slots=True)
class ExactPosterior:
    """Posterior draws of the simulator's likelihood (or of the surrogate, without a model).

    Attributes
    ----------
    draws
        Full parameter vectors (model, then discrepancy), shape (n, dim).
    outputs
        Simulator outputs at the draws, shape (n, n_out).
    loglik
        Pointwise log-likelihood (one value per output), shape (n, n_out).
    weights
        Importance weights of the proposal draws (None without a model).
    moves
        Resample-move statistics (None without a model).
    source
        ``"simulator"``, or ``"surrogate"`` when no model could be called.
    """

    draws: FloatArray
    outputs: FloatArray
    loglik: FloatArray
    weights: ImportanceWeights | None
    moves: MoveStats | None
    source: str


def exact_posterior(
    target: LogPosterior,
    proposal: npt.ArrayLike,
    proposal_log_post: npt.ArrayLike,
    n_draws: int,
    move_steps: int,
    rng: np.random.Generator,
) -> ExactPosterior:
    """Weight, resample and move surrogate posterior draws to the simulator's posterior.

    Parameters
    ----------
    target
        Log-posterior of all parameters with the simulator as predictor and no surrogate
        error term (``Problem.log_posterior()`` of the simulator problem).
    proposal
        Surrogate posterior draws, full vectors, shape (m, dim).
    proposal_log_post
        Surrogate log-posterior at the proposal draws (same prior), shape (m,).
    n_draws
        Draws returned.
    move_steps
        Metropolis steps per draw after resampling.
    rng
        Random generator (resampling and moves).
    """
    x = np.atleast_2d(np.asarray(proposal, dtype=np.float64))
    full = target.full(x)
    ll_point, f = target.pointwise(full)
    ll = ll_point.sum(axis=1)
    weights = psis_weights(ll - np.asarray(proposal_log_post, dtype=np.float64))
    idx = systematic_resample(weights.log_weights, n_draws, rng)
    idx = idx[rng.permutation(idx.size)]  # halves of the population mix all draws
    pop, pop_f, pop_llp = full[idx], f[idx], ll_point[idx]
    moves = None
    if move_steps > 0:
        pop, pop_f, pop_llp, moves = de_moves(target, pop, pop_f, pop_llp, move_steps, rng)
    return ExactPosterior(pop, pop_f, pop_llp, weights, moves, "simulator")


def surrogate_only(
    target: LogPosterior, proposal: npt.ArrayLike, n_draws: int, rng: np.random.Generator
) -> ExactPosterior:
    """Posterior draws of the surrogate itself, for a fixed design with no model to call.

    ``target`` is the surrogate's log-posterior (its error term included); the outputs are
    the surrogate's, and the result says so (``source = "surrogate"``).
    """
    x = np.atleast_2d(np.asarray(proposal, dtype=np.float64))
    pick = rng.choice(x.shape[0], size=n_draws, replace=n_draws > x.shape[0])
    full = target.full(x[pick])
    ll_point, f = target.pointwise(full)
    return ExactPosterior(full, f, ll_point, None, None, "surrogate")


def de_moves(
    target: LogPosterior,
    pop: FloatArray,
    f: FloatArray,
    llp: FloatArray,
    steps: int,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray, FloatArray, MoveStats]:
    """Differential-evolution Metropolis steps of a population on ``target``, half by half.

    Parameters
    ----------
    target
        Log-posterior over all parameters (columns = every parameter).
    pop, f, llp
        Draws (n, dim), predictor outputs at them (n, n_out) and their pointwise
        log-likelihood (n, n_sel); updated in place and returned.
    steps
        Steps per draw; each is two half-steps, one predictor batch each.
    rng
        Proposal and acceptance randomness.

    Returns
    -------
    (pop, f, llp, stats)
    """
    n, dim = pop.shape
    cols = list(target.columns)
    lo, hi = target.lower, target.upper
    gamma = 2.38 / np.sqrt(2.0 * len(cols))
    halves = (np.arange(0, n, 2), np.arange(1, n, 2))
    lp = llp.sum(axis=1)
    unique_before = int(np.unique(pop, axis=0).shape[0])
    accepted = 0
    proposed = 0
    sd = np.maximum(pop[:, cols].std(axis=0), 1e-12 * (hi - lo))
    mean_mid = pop[:, cols].mean(axis=0)
    for step in range(steps):
        if step == steps // 2:
            mean_mid = pop[:, cols].mean(axis=0)
        for own, other in (halves, halves[::-1]):
            a = rng.choice(other, size=own.size)
            b = rng.choice(other, size=own.size)
            # scale mixture: full DE jumps (1.0, mode hopping), the optimal 2.38/sqrt(2d), and
            # shorter ones down to 1/30 of it for thin ridges (log-uniform)
            g = gamma * 10.0 ** rng.uniform(-1.5, 0.0, own.size)
            g = np.where(rng.random(own.size) < 0.1, 1.0, g)[:, None]
            jitter = 1e-4 * sd * rng.standard_normal((own.size, len(cols)))
            prop = pop[own].copy()
            prop[:, cols] += g * (pop[a][:, cols] - pop[b][:, cols]) + jitter
            inside = np.all((prop[:, cols] >= lo) & (prop[:, cols] <= hi), axis=1)
            new_lp = np.full(own.size, -np.inf)
            new_llp = np.zeros((own.size, llp.shape[1]))
            new_f = np.zeros((own.size, f.shape[1]))
            if inside.any():
                p_llp, p_f = target.pointwise(prop[inside])
                new_llp[inside], new_f[inside] = p_llp, p_f
                s = p_llp.sum(axis=1)
                new_lp[inside] = np.where(np.isfinite(s), s, -np.inf)
            accept = np.log(rng.random(own.size)) < new_lp - lp[own]
            sel = own[accept]
            pop[sel], f[sel], llp[sel], lp[sel] = (
                prop[accept],
                new_f[accept],
                new_llp[accept],
                new_lp[accept],
            )
            accepted += int(accept.sum())
            proposed += own.size
    post_sd = np.maximum(pop[:, cols].std(axis=0), 1e-300)
    drift = np.zeros(dim)
    drift[cols] = np.abs(pop[:, cols].mean(axis=0) - mean_mid) / post_sd
    stats = MoveStats(
        steps,
        accepted / max(proposed, 1),
        unique_before,
        int(np.unique(pop, axis=0).shape[0]),
        drift,
    )
    return pop, f, llp, stats
