"""The expensive-simulator path: surrogate posterior draws corrected on the simulator.

Where the simulator is expensive (an external code with a run budget), sampling its
posterior by MCMC to convergence is out of reach, and the surrogate's posterior is
corrected instead (for simulators cheap in batches the campaign samples the simulator's
posterior directly: :mod:`~mpiuq.calibration.sampling.direct`):

1. **Importance sampling.** Draws ``x_n`` of the (locally refined) surrogate posterior
   ``q`` are weighted by ``w_n = p(D | x_n; simulator) / p(D | x_n; surrogate)`` (same
   uniform prior). The Pareto-smoothed weights (PSIS, Vehtari et al. 2024) give the
   effective sample size and the Pareto ``k-hat``: k-hat <= 0.7 means the weighted draws
   estimate the simulator's posterior reliably; larger means the surrogate posterior
   misses part of it (the campaign check fails). A draw whose simulator log-likelihood is
   NaN or infinite gets no weight and fails the check.
2. **Resample-move** (Gilks & Berzuini 2001). Independent sub-populations are resampled by
   the weights (systematic resampling) and every draw then takes ``move_steps`` Metropolis
   steps whose target is the simulator's posterior, with differential-evolution and
   snooker proposals from the other half of its own sub-population
   (:mod:`~mpiuq.calibration.sampling.population`). The R-hat across sub-populations says whether
   the moves mixed; what the moves are too short to correct shows in the importance
   k-hat, not in the R-hat, so this path is an approximation whose quality the checks
   report, not a converged sample of the simulator's posterior.

The moved draws, the simulator's outputs at them and the pointwise log-likelihood are
the campaign's posterior, predictive and model-comparison input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.model.likelihood import LogPosterior
from mpiuq.calibration.sampling.diagnostics import rank_rhat
from mpiuq.calibration.sampling.population import check_population, propose

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ImportanceWeights:
    """Pareto-smoothed importance weights of proposal draws.

    Attributes
    ----------
    log_weights
        Smoothed, normalised log weights, shape (n,); ``-inf`` (no weight) where the log
        ratio was not finite.
    khat
        Pareto shape estimate of the weights' tail (``inf`` when no ratio was finite).
    ess
        Effective sample size ``1 / sum(w^2)`` of the smoothed normalised weights (0 when no
        ratio was finite).
    n_nonfinite
        Draws whose log ratio (the simulator's log-likelihood) was NaN or infinite: a
        failed model run or an impossible draw. They carry no weight, and the campaign's
        ``importance_sampling`` check fails when there is any.
    """

    log_weights: FloatArray
    khat: float
    ess: float
    n_nonfinite: int = 0


def psis_weights(log_ratio: npt.ArrayLike) -> ImportanceWeights:
    """Pareto-smoothed importance weights from log density ratios (ArviZ ``psislw``).

    Parameters
    ----------
    log_ratio
        ``log p(x_n) - log q(x_n)`` up to a constant, shape (n,). Non-finite entries (NaN,
        ``+-inf``) get no weight and are counted (``n_nonfinite``); when none is finite the
        weights are all zero (``ess = 0``, ``khat = inf``), never uniform.

    Examples
    --------
    >>> w = psis_weights(np.zeros(1000))
    >>> round(w.ess), round(float(np.exp(w.log_weights).sum()), 6)
    (1000, 1.0)
    >>> w = psis_weights(np.full(4, np.nan))
    >>> w.ess, w.khat, w.n_nonfinite
    (0.0, inf, 4)
    """
    import arviz as az

    lr = np.asarray(log_ratio, dtype=np.float64).ravel()
    finite = np.isfinite(lr)
    n_bad = int(lr.size - finite.sum())
    if not finite.any():
        return ImportanceWeights(np.full(lr.size, -np.inf), float("inf"), 0.0, n_bad)
    shifted = lr[finite] - lr[finite].max()
    with np.errstate(over="ignore"):  # ArviZ's tail fit overflows harmlessly for flat tails
        smoothed, khat = az.psislw(shifted)
    lw_finite = np.asarray(smoothed, dtype=np.float64)
    lw_finite = lw_finite - np.logaddexp.reduce(lw_finite)
    lw = np.full(lr.size, -np.inf)
    lw[finite] = lw_finite
    w = np.exp(lw_finite)
    return ImportanceWeights(lw, float(khat), float(1.0 / np.sum(w**2)), n_bad)


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


#: Batch pointwise log-likelihood: full parameter vectors (n, dim) -> (loglik (n, n_sel),
#: model outputs (n, n_out)); ``LogPosterior.pointwise`` is one.
PointwiseLogLik = Callable[[FloatArray], tuple[FloatArray, FloatArray]]

#: Sub-populations of the resample-move population (the chains of its R-hat).
MOVE_POPULATIONS = 4


@dataclass(frozen=True, slots=True)
class MoveStats:
    """What the resample-move steps did.

    Attributes
    ----------
    steps
        Metropolis steps per draw (fewer than asked when the run budget ran out).
    acceptance
        Fraction of accepted proposals over all steps.
    unique_before, unique_after
        Distinct draws after resampling and after the moves.
    rhat
        Per parameter: rank-normalised R-hat across the independently resampled and moved
        sub-populations (``MOVE_POPULATIONS``). Near 1 when the moves mixed each
        sub-population to the same distribution; a bias shared by all of them (from the
        surrogate proposal) does not show here, only in the importance ``khat``.
    populations
        Number of sub-populations.
    runs
        Simulator runs made by the weights and the moves.
    budget_limited
        Whether the run budget cut the moves short.
    nonfinite
        Proposals inside the prior whose simulator log-likelihood was NaN or +inf.
    """

    steps: int
    acceptance: float
    unique_before: int
    unique_after: int
    rhat: FloatArray
    populations: int
    runs: int
    budget_limited: bool
    nonfinite: int


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
        Importance weights of the proposal draws (surrogate path only).
    moves
        Resample-move statistics (surrogate path only).
    source
        ``"simulator"``, or ``"surrogate"`` when no model could be called.
    method
        ``"direct"`` (MCMC on the simulator, :mod:`~mpiuq.calibration.sampling.direct`),
        ``"importance-move"`` (surrogate draws weighted and moved on the simulator) or
        ``"surrogate"`` (the surrogate's own posterior).
    """

    draws: FloatArray
    outputs: FloatArray
    loglik: FloatArray
    weights: ImportanceWeights | None
    moves: MoveStats | None
    source: str
    method: str = "importance-move"


def exact_posterior(
    target: LogPosterior,
    proposal: npt.ArrayLike,
    proposal_log_post: npt.ArrayLike,
    n_draws: int,
    move_steps: int,
    rng: np.random.Generator,
    budget: int | None = None,
) -> ExactPosterior:
    """Weight, resample and move surrogate posterior draws to the simulator's posterior.

    :func:`corrected_posterior` with ``target``'s pointwise log-likelihood and prior box;
    ``proposal`` holds vectors of ``target``'s sampled columns.

    Parameters
    ----------
    target
        Log-posterior of all parameters with the simulator as predictor and no surrogate
        error term (``Problem.log_posterior()`` of the simulator problem).
    proposal
        Surrogate posterior draws, shape (m, len(target.columns)).
    proposal_log_post
        Surrogate log-posterior at the proposal draws (same prior), shape (m,).
    n_draws, move_steps, rng, budget
        As for :func:`corrected_posterior`.
    """
    x = target.full(np.atleast_2d(np.asarray(proposal, dtype=np.float64)))
    cols = tuple(target.columns)
    lo = np.full(x.shape[1], -np.inf)
    hi = np.full(x.shape[1], np.inf)
    lo[list(cols)], hi[list(cols)] = target.lower, target.upper
    return corrected_posterior(
        target.pointwise, lo, hi, x, proposal_log_post, n_draws, move_steps, rng, budget
    )


def corrected_posterior(
    pointwise: PointwiseLogLik,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    proposal: npt.ArrayLike,
    proposal_log_post: npt.ArrayLike,
    n_draws: int,
    move_steps: int,
    rng: np.random.Generator,
    budget: int | None = None,
    populations: int = MOVE_POPULATIONS,
) -> ExactPosterior:
    """The expensive-simulator path: importance weights, resampling and moves, within a budget.

    Parameters
    ----------
    pointwise
        The simulator's batch pointwise log-likelihood: full vectors (n, dim) ->
        ``(loglik (n, n_sel), outputs (n, n_out))``; called once for the proposal draws and
        twice per move step (one batch per half of every sub-population).
    lower, upper
        Prior box of every column (``-inf``/``inf`` for columns the moves must not change),
        shape (dim,).
    proposal
        Surrogate posterior draws, full vectors, shape (m, dim).
    proposal_log_post
        Surrogate log-posterior at the proposal draws (same prior), shape (m,).
    n_draws
        Draws returned (a multiple of ``populations`` is used: rounded down).
    move_steps
        Metropolis steps per draw after resampling (fewer if the budget runs out).
    rng
        Random generator (resampling and moves).
    budget
        Most simulator runs (rows passed to ``pointwise``) in all, or None for no limit.
    populations
        Sub-populations resampled and moved independently (>= 2): the chains of the moves'
        R-hat.

    Raises
    ------
    SamplerError
        If the budget cannot pay for the proposal draws, no proposal draw has a finite
        simulator log-likelihood (a simulator returning NaN), or a sub-population is too
        small for the dimension.
    """
    x = np.atleast_2d(np.asarray(proposal, dtype=np.float64))
    m = x.shape[0]
    if budget is not None and budget < m:
        raise SamplerError(
            f"run budget {budget} is too small: expected at least the {m} proposal draws"
        )
    ll_point, f = pointwise(x)
    ll = ll_point.sum(axis=1)
    weights = psis_weights(ll - np.asarray(proposal_log_post, dtype=np.float64))
    if weights.ess == 0.0:
        raise SamplerError(
            f"none of the {m} proposal draws has a finite simulator log-likelihood "
            f"({weights.n_nonfinite} NaN or infinite): expected finite values; is the "
            "simulator failing?"
        )
    if populations < 2:
        raise SamplerError(f"populations={populations} is invalid: expected >= 2")
    per = n_draws // populations
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    cols = np.flatnonzero(np.isfinite(lo) | np.isfinite(hi))
    check_population(per, int(cols.size))
    parts = []
    for _ in range(populations):  # independent resamples of the same weighted pool
        idx = systematic_resample(weights.log_weights, per, rng)
        parts.append(idx[rng.permutation(idx.size)])
    idx = np.concatenate(parts)
    pop, pop_f, pop_llp = x[idx], f[idx], ll_point[idx]
    runs = m
    steps = move_steps
    if budget is not None:
        steps = min(move_steps, (budget - m) // max(idx.size, 1))
    stats = MoveStats(
        0,
        0.0,
        _unique(pop),
        _unique(pop),
        np.full(x.shape[1], np.nan),
        populations,
        runs,
        steps < move_steps,
        0,
    )
    if steps > 0:
        pop, pop_f, pop_llp, stats = de_moves(
            pointwise, lo, hi, pop, pop_f, pop_llp, steps, rng, populations
        )
        stats = replace(stats, runs=runs + stats.runs, budget_limited=steps < move_steps)
    return ExactPosterior(pop, pop_f, pop_llp, weights, stats, "simulator")


def _unique(x: FloatArray) -> int:
    return int(np.unique(x, axis=0).shape[0])


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
    return ExactPosterior(full, f, ll_point, None, None, "surrogate", "surrogate")


def _evaluate(
    pointwise: PointwiseLogLik,
    flat: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    n_sel: int,
    n_out: int,
) -> tuple[FloatArray, FloatArray, FloatArray, int, int]:
    """The proposals ``flat`` (m, dim) on the simulator: only those inside the prior box
    are run. Returns their log-likelihood (m,; ``-inf`` outside the box and where the sum
    is NaN or ``+inf``), pointwise log-likelihood (m, n_sel), outputs (m, n_out), the
    number of simulator runs and the number of non-finite sums."""
    inside = np.all((flat >= lower) & (flat <= upper), axis=1)
    new_lp = np.full(flat.shape[0], -np.inf)
    new_l = np.zeros((flat.shape[0], n_sel))
    new_f = np.zeros((flat.shape[0], n_out))
    runs = nonfinite = 0
    if inside.any():
        p_l, p_f = pointwise(flat[inside])
        runs = int(inside.sum())
        new_l[inside], new_f[inside] = p_l, p_f
        s = p_l.sum(axis=1)
        bad = np.isnan(s) | (s == np.inf)
        nonfinite = int(bad.sum())
        new_lp[inside] = np.where(bad, -np.inf, s)
    return new_lp, new_l, new_f, runs, nonfinite


def de_moves(
    pointwise: PointwiseLogLik,
    lower: FloatArray,
    upper: FloatArray,
    pop: FloatArray,
    f: FloatArray,
    llp: FloatArray,
    steps: int,
    rng: np.random.Generator,
    populations: int = MOVE_POPULATIONS,
) -> tuple[FloatArray, FloatArray, FloatArray, MoveStats]:
    """Differential-evolution Metropolis steps of sub-populations on the simulator's posterior.

    The ``n`` draws form ``populations`` consecutive blocks of ``n // populations``; each
    block moves on its own (proposals from the other half of the same block, two distinct
    walkers, never the walker itself; :mod:`~mpiuq.calibration.sampling.population`), all blocks'
    halves in one ``pointwise`` batch.

    Parameters
    ----------
    pointwise
        Batch pointwise log-likelihood (see :func:`corrected_posterior`).
    lower, upper
        Prior box of every column; columns with both bounds infinite stay fixed.
    pop, f, llp
        Draws (n, dim), outputs at them (n, n_out) and their pointwise log-likelihood
        (n, n_sel); copies are returned.
    steps
        Steps per draw; each is two half-steps.
    rng
        Proposal and acceptance randomness.
    populations
        Number of blocks (>= 2).

    Returns
    -------
    (pop, f, llp, stats)

    Raises
    ------
    SamplerError
        If a block is too small for the number of moving parameters.
    """
    n, dim = pop.shape
    cols = np.flatnonzero(np.isfinite(lower) | np.isfinite(upper))
    per = n // populations
    check_population(per, int(cols.size))
    use = populations * per
    x = pop[:use].reshape(populations, per, dim).copy()
    fx = f[:use].reshape(populations, per, -1).copy()
    lx = llp[:use].reshape(populations, per, -1).copy()
    lp = lx.sum(axis=2)
    unique_before = _unique(pop[:use])
    accepted = 0
    proposed = 0
    runs = 0
    nonfinite = 0
    for _ in range(steps):
        split = rng.permutation(per)
        halves = (split[: per // 2], split[per // 2 :])
        for own_i, other_i in (halves, halves[::-1]):
            prop = x[:, own_i].copy()
            moved, factor = propose(x[:, own_i][..., cols], x[:, other_i][..., cols], 0.1, rng)
            prop[..., cols] = moved
            flat = prop.reshape(-1, dim)
            new_lp, new_l, new_f, n_runs, n_bad = _evaluate(
                pointwise, flat, lower, upper, lx.shape[2], fx.shape[2]
            )
            runs += n_runs
            nonfinite += n_bad
            shape = (populations, own_i.size)
            log_u = np.log(rng.random(shape))
            with np.errstate(invalid="ignore"):
                accept = log_u < new_lp.reshape(shape) - lp[:, own_i] + factor
            r, c = np.nonzero(accept)
            k = r * own_i.size + c
            x[r, own_i[c]] = flat[k]
            fx[r, own_i[c]] = new_f[k]
            lx[r, own_i[c]] = new_l[k]
            lp[r, own_i[c]] = new_lp[k]
            accepted += int(accept.sum())
            proposed += accept.size
    rhat = np.full(dim, np.nan)
    for j in cols:
        rhat[j] = rank_rhat(x[..., j])
    out = x.reshape(use, dim)
    stats = MoveStats(
        steps,
        accepted / max(proposed, 1),
        unique_before,
        _unique(out),
        rhat,
        populations,
        runs,
        False,
        nonfinite,
    )
    return out, fx.reshape(use, -1), lx.reshape(use, -1), stats
