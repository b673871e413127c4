"""The discrepancy spreads drawn from their conditional posterior inside every proposal.

A regime's relative spread ``s_r`` (:mod:`~mpiuq.calibration.model.discrepancy`, uniform prior on
``[0, S]``) enters the likelihood only through the outputs of its regime, and given the
simulator's outputs ``f(theta)`` its conditional posterior is one-dimensional and costs no
simulator run. Sampled jointly with the model parameters, the spreads make a funnel: with
a handful of sizes per regime their posterior has a long upper tail (``~ s^-k``), and the
parameters the regime informs widen with ``s``, which differential evolution (global
affine moves) crosses only in rare excursions that its autocorrelation-based ESS does not
see.

Here the sampler moves only the other parameters ``theta``, and every proposal
``theta'`` carries fresh spreads ``s' ~ g(. | theta')``, where ``g`` is the conditional
posterior discretised on a grid in ``log s`` (a trapezoid rule, :class:`SpreadGrid`):
cell ``k`` is chosen with its quadrature mass and ``s'`` drawn uniformly in ``log s``
within the cell (uniformly in ``s`` on the cell ``[0, s_min]`` next to 0). The proposal is
accepted with the Metropolis-Hastings ratio of the *exact* joint posterior,

    w(theta', s') / w(theta, s),    w(theta, s) = p(theta, s | data) / g(s | theta),

(:func:`spread_density` returns ``log w``), so the chain's stationary distribution is the
exact joint posterior whatever the grid's resolution; the grid only sets how close
``w`` is to the collapsed posterior ``p(theta | data)``, and thus how efficient the chain
is. Whatever the grid, ``E_g[w(theta, s)] = p(theta | data)`` (the weights are unbiased
for the collapsed posterior; tested with cells of 1.5 in ``log s``). With the default
cells (0.35 of the narrowest conditional's sd in ``log s``) ``w`` varies by a few percent
around it (sd of ``log w`` 0.04-0.09 on a four-output regime), which costs little
acceptance. The sampler then mixes on ``p(theta | data)``, which has no
funnel (the spreads are integrated out), and the spreads of every accepted state are
exact conditional draws, refreshed at every accepted move.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.likelihood import LogPosterior

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The grid's lower end relative to the smallest relative data spread ``sigma_i / |y_i|``:
#: below it the likelihood no longer changes with ``s``.
LOWER_END_FRACTION = 1e-3
#: Cell width in ``log s`` relative to the sd in ``log s`` of a regime's conditional when
#: every one of its ``n`` outputs misfits far beyond its data spread (``1 / sqrt(2 n)``).
CELL_FRACTION = 0.35
#: Widest cell in ``log s``.
MAX_CELL = 0.25


@dataclass(frozen=True, slots=True)
class SpreadLayout:
    """Where the spreads sit among a log-posterior's sampled columns.

    Attributes
    ----------
    columns
        Positions of the spreads among the sampled columns (``LogPosterior.columns``).
    rest
        Positions of the other sampled columns.
    outputs
        For every spread, the positions of its regime's outputs among the selected outputs.
    upper
        Upper prior bound ``S`` of the spreads (one value for all).
    """

    columns: tuple[int, ...]
    rest: tuple[int, ...]
    outputs: tuple[IntArray, ...]
    upper: float


def spread_layout(target: LogPosterior) -> SpreadLayout | None:
    """The spreads among ``target``'s sampled columns, or None if it samples none.

    A spread is the discrepancy parameter ``sd_rel_<regime>`` of a regime with at least
    one selected output; its prior is ``[0, sd_rel]``.
    """
    disc = target.discrepancy
    if disc.sd_rel <= 0.0:
        return None
    nm = target.n_model
    nb = len(disc.regimes) if disc.bias_rel > 0 else 0
    regime_of = np.asarray(disc.output_regime, dtype=np.int64)[list(target.outputs)]
    cols, outs = [], []
    for r in range(len(disc.regimes)):
        full_col = nm + nb + r
        if full_col in target.columns and np.any(regime_of == r):
            cols.append(target.columns.index(full_col))
            outs.append(np.flatnonzero(regime_of == r).astype(np.int64))
    if not cols:
        return None
    rest = tuple(j for j in range(len(target.columns)) if j not in cols)
    return SpreadLayout(tuple(cols), rest, tuple(outs), float(disc.sd_rel))


@dataclass(frozen=True, slots=True)
class SpreadGrid:
    """Trapezoid rule for ``int_0^S g(s) ds``: a node at 0 carrying ``[0, s_min]`` and
    ``n`` nodes evenly spaced in ``log s`` on ``[log s_min, log S]``.

    Attributes
    ----------
    nodes
        ``0, s_min, ..., S``, shape (n + 1,).
    log_mass
        Log of every node's quadrature weight (``s_min`` for the node at 0, ``h s_k``
        with halved ends for the others), shape (n + 1,).
    cell_low, cell_high
        Every node's cell in ``log s`` (the node at 0: ``-inf, log s_min``), shape (n + 1,).
    """

    nodes: FloatArray
    log_mass: FloatArray
    cell_low: FloatArray
    cell_high: FloatArray

    @staticmethod
    def for_data(
        upper: float,
        data_mean: FloatArray,
        data_var: FloatArray,
        outputs: tuple[IntArray, ...],
        cell_log_s: float | None = None,
    ) -> SpreadGrid:
        """The grid for spreads on ``[0, upper]`` over data with these centres and variances.

        The lower end is :data:`LOWER_END_FRACTION` of the smallest relative data spread
        (at most ``1e-3 upper``); the cell width is :data:`CELL_FRACTION` times
        ``1 / sqrt(2 n)`` for the largest regime of ``n`` outputs (at most
        :data:`MAX_CELL`), unless ``cell_log_s`` gives it (a coarser grid is still exact,
        only less efficient: :func:`spread_density`).

        Examples
        --------
        >>> g = SpreadGrid.for_data(0.2, np.ones(6), np.full(6, 1e-4), (np.arange(6),))
        >>> round(float(g.nodes[1]), 12), float(g.nodes[-1]), g.nodes.size
        (1e-05, 0.2, 101)
        """
        rel = np.sqrt(data_var) / np.maximum(np.abs(data_mean), 1e-300)
        s_min = min(1e-3 * upper, LOWER_END_FRACTION * float(np.min(rel)))
        n_out = max(o.size for o in outputs)
        width = (
            min(MAX_CELL, CELL_FRACTION / math.sqrt(2.0 * n_out))
            if cell_log_s is None
            else cell_log_s
        )
        span = math.log(upper / s_min)
        n = math.ceil(span / width) + 1
        u = np.linspace(math.log(s_min), math.log(upper), n)
        h = u[1] - u[0]
        mass = np.log(h) + u
        mass[[0, -1]] += math.log(0.5)
        low = np.concatenate([[-np.inf], u - h / 2])
        high = np.concatenate([[u[0]], u + h / 2])
        low[1], high[-1] = u[0], u[-1]
        return SpreadGrid(
            np.concatenate([[0.0], np.exp(u)]),
            np.concatenate([[math.log(s_min)], mass]),
            low,
            high,
        )

    def draw(self, log_p: FloatArray, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        """Draw from the discretised density and return the draws and their log density.

        Parameters
        ----------
        log_p
            Log of the (unnormalised) density at every node, shape (n, nodes).
        rng
            Random generator.

        Returns
        -------
        (s, log_g)
            Draws, shape (n,), and the log density of the discretised distribution at them
            (with respect to ``ds``), shape (n,).
        """
        lm = log_p + self.log_mass
        top = np.max(lm, axis=1, keepdims=True)
        mass = np.exp(lm - top)
        total = mass.sum(axis=1)
        cdf = np.cumsum(mass, axis=1)
        u = rng.random(lm.shape[0]) * total
        k = np.minimum(np.sum(cdf < u[:, None], axis=1), self.nodes.size - 1)
        log_pick = np.log(mass[np.arange(k.size), k]) - np.log(total)
        lo, hi = self.cell_low[k], self.cell_high[k]
        v = rng.random(k.size)
        zero = k == 0
        s_min = self.nodes[1]
        lo = np.where(zero, 0.0, lo)
        width = np.where(zero, 1.0, hi - lo)
        s = np.where(zero, s_min * v, np.exp(lo + width * v))
        log_g = np.where(zero, log_pick - math.log(s_min), log_pick - np.log(width) - np.log(s))
        return s, log_g


def spread_density(
    target: LogPosterior,
    layout: SpreadLayout,
    grid: SpreadGrid,
    inside: Callable[[FloatArray], npt.NDArray[np.bool_]],
    rng: np.random.Generator,
) -> Callable[[FloatArray], tuple[FloatArray, FloatArray]]:
    """The log weight ``log w(theta, s)`` of proposals ``theta`` with fresh spreads.

    Parameters
    ----------
    target
        Log-posterior of all sampled columns (simulator as predictor).
    layout
        The spreads among its columns.
    grid
        The spreads' quadrature grid.
    inside
        Whether rows of the *full* sampled vector are in the support (prior box and any
        order constraints of exchangeable groups; the spreads' columns hold 0).
    rng
        The spreads' draws.

    Returns
    -------
    Callable
        ``theta`` (n, len(layout.rest)) -> ``(log w (n,), s (n, n_spreads))``: ``log w`` is
        ``-inf`` outside the support, NaN where the simulator's log-likelihood is NaN at
        every node (a failed run).
    """
    cols = list(layout.columns)
    rest = list(layout.rest)
    nodes = grid.nodes
    k = nodes.size
    log_prior = -math.log(layout.upper) * len(cols)

    def density(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        theta = np.atleast_2d(theta)
        n = theta.shape[0]
        x = np.zeros((n, len(target.columns)))
        x[:, rest] = theta
        out = np.full(n, -np.inf)
        s_out = np.zeros((n, len(cols)))
        idx = np.flatnonzero(inside(x))
        if idx.size == 0:
            return out, s_out
        full = target.full(x[idx])
        f = np.asarray(target.predictor.predict(full[:, : target.n_model]), dtype=np.float64)
        sel = f[:, list(target.outputs)]
        good = np.all(np.isfinite(sel), axis=1)
        out[idx[~good]] = np.nan  # a failed simulator run
        full, sel, idx = full[good], sel[good], idx[good]
        m = idx.size
        if m == 0:
            return out, s_out
        spread_full = [target.columns[c] for c in cols]
        # the likelihood at every node, all regimes at once: (m * k) rows
        rep = np.repeat(full, k, axis=0)
        rep[:, spread_full] = np.tile(nodes, m)[:, None]
        ll_nodes = target.loglik_at(np.repeat(sel, k, axis=0), rep).reshape(m, k, -1)
        drawn = np.empty((m, len(cols)))
        log_g = np.zeros(m)
        for j, outs in enumerate(layout.outputs):
            s, lg = grid.draw(ll_nodes[:, :, outs].sum(axis=2), rng)
            drawn[:, j] = s
            log_g += lg
        full[:, spread_full] = drawn
        ll = target.loglik_at(sel, full).sum(axis=1)
        out[idx] = np.where(np.isnan(ll) | (ll == np.inf), np.nan, ll + log_prior - log_g)
        s_out[idx] = drawn
        return out, s_out

    return density
