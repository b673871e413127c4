"""A reference posterior with the discrepancy spreads integrated out by quadrature.

Usage (from the repository root)::

    python experiments/checks/spread_reference.py known-answer          # against 3-D quadrature
    python experiments/checks/spread_reference.py resolution --case inj  # grid convergence
    python experiments/checks/spread_reference.py rao-blackwell --case all
    python experiments/checks/spread_reference.py reference --case all  # long runs (nice!)
    python experiments/checks/spread_reference.py sampler --case link   # campaign's sampler
    python experiments/checks/spread_reference.py ensembles --case all  # reference's scatter
    python experiments/checks/posterior_reference.py figures            # table and figures
    # any campaign (e.g. one kept outside the repository), results in --results:
    python experiments/checks/spread_reference.py reference --campaign C.toml --results DIR

Why. ``posterior_reference.py reference`` samples the spreads ``sd_rel_<regime>`` jointly
with the model parameters (emcee's ``DEMove``, spreads on the log scale): the funnel that
the spreads make with the parameters they inform is crossed in rare excursions, and on a
one-regime funnel with a quadrature answer that construction missed the sd by -14% / +40%
(tests/unit/test_calibration_spreads.py). So where that reference and the campaign disagree on
a spread, it does not say which one is right.

Here a regime's spread ``s_r`` (uniform prior on ``[0, S]``) enters the likelihood only
through its own regime's outputs, so given the model parameters ``theta`` (and so the
simulator's outputs) the spreads are independent and each has a one-dimensional
conditional that costs no simulator run. This script

1. integrates every spread out by a fine deterministic quadrature (:class:`Collapsed`:
   trapezoid rule in ``log s``, 40 nodes per e-fold, down to ``1e-4`` of the smallest
   relative data spread, plus the cell ``[0, s_min]`` on which the likelihood is constant),
   which gives the collapsed posterior ``p(theta | data)``: no funnel, no noise;
2. samples ``theta`` with plain emcee (``DEMove``; four ensembles; exchangeable groups
   folded and symmetrised as in ``posterior_reference.py``) until every parameter's ESS
   reaches ``--ess``, the ESS counted on each ensemble's walker-mean trace
   (:func:`walker_mean_ess`, which does not assume walkers are independent);
3. gives the spreads' marginals by Rao-Blackwellisation over the ``theta`` draws: mean and
   sd from the conditional moments by quadrature (``E[s] = E[E[s | theta]]``,
   ``Var s = E[Var(s | theta)] + Var(E[s | theta])``), quantiles from 20 exact conditional
   draws per ``theta`` draw; every stored draw carries one exact conditional draw of each
   spread, so the stored draws are joint posterior draws.

None of the campaign's sampler code is used (not :mod:`mpiuq.calibration.sampling.spreads`, not the
population sampler); the only shared code is the campaign's log-likelihood itself
(``LogPosterior.loglik_at``), which is the target's definition. ``known-answer`` checks the
whole construction against the 3-D quadrature of ``known_answer.py`` (its own grids, linear
in ``a`` and ``b``), ``resolution`` the spread grid against one of twice the resolution.

``rao-blackwell`` needs no new run: it takes the ``theta`` columns of the stored draws of
the joint reference and of the campaign (``results/posterior_check/<case>/``) and gives the
spreads' moments their ``theta`` draws imply, which shows directly whether each sampler's
spread draws are consistent with its own parameter draws.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Quadrature nodes per e-fold of ``s`` (cells of 0.025 in ``log s``; a four-output
#: regime's conditional has an sd of at least 0.35 in ``log s``).
NODES_PER_EFOLD = 40
#: The grid's lower end relative to the smallest relative data spread ``sigma_i / |y_i|``.
LOWER_END_FRACTION = 1e-4


@dataclass(frozen=True)
class Collapsed:
    """The campaign's log-posterior with every spread integrated out on a fixed grid.

    Attributes
    ----------
    target
        The campaign's log-posterior over all sampled columns (simulator as predictor).
    theta_cols
        Positions of the non-spread parameters among the sampled columns.
    spread_cols
        Positions of the spreads among the sampled columns.
    spread_outputs
        For every spread, the positions of its regime's outputs among the selected outputs.
    upper
        Upper prior bound of the spreads.
    nodes, log_w
        Quadrature nodes in ``s`` (0 first) and the log of their weights (``s_min`` for
        the node at 0, ``h s_k`` with halved ends on the ``log s`` part).
    """

    target: Any
    theta_cols: np.ndarray
    spread_cols: np.ndarray
    spread_outputs: tuple[np.ndarray, ...]
    upper: float
    nodes: np.ndarray
    log_w: np.ndarray

    @staticmethod
    def of(target: Any, names: list[str], per_efold: float = NODES_PER_EFOLD) -> Collapsed:
        """The collapsed form of ``target`` (sampled columns named ``names``)."""
        disc = target.discrepancy
        nd = disc.dim
        if disc.bias_rel > 0 or target.nominal.size > target.n_model + nd:
            raise SystemExit("spread_reference handles relative spreads only (no bias, no noise)")
        regime_of = np.asarray(disc.output_regime, dtype=np.int64)[list(target.outputs)]
        cols, outs = [], []
        for r, reg in enumerate(disc.regimes):
            name = f"sd_rel_{reg}"
            if name in names and np.any(regime_of == r):
                cols.append(names.index(name))
                outs.append(np.flatnonzero(regime_of == r))
        covered = np.concatenate(outs) if outs else np.zeros(0, dtype=np.int64)
        if covered.size != len(target.outputs):
            raise SystemExit("every selected output must belong to a sampled spread's regime")
        theta = np.array([j for j in range(len(names)) if j not in cols], dtype=np.int64)
        upper = float(disc.sd_rel)
        rel = np.sqrt(target.data_var) / np.maximum(np.abs(target.data_mean), 1e-300)
        s_min = min(1e-4 * upper, LOWER_END_FRACTION * float(np.min(rel)))
        n = math.ceil(per_efold * math.log(upper / s_min)) + 1
        u = np.linspace(math.log(s_min), math.log(upper), n)
        h = u[1] - u[0]
        log_w = math.log(h) + u
        log_w[[0, -1]] += math.log(0.5)
        return Collapsed(
            target,
            theta,
            np.asarray(cols, dtype=np.int64),
            tuple(outs),
            upper,
            np.concatenate([[0.0], np.exp(u)]),
            np.concatenate([[math.log(s_min)], log_w]),
        )

    def node_loglik(self, theta: np.ndarray) -> np.ndarray:
        """Log-likelihood of every regime at every node plus the log weight.

        ``theta`` (m, n_theta) inside the box; returns (m, n_spreads, nodes), NaN rows where
        the simulator failed.
        """
        t = self.target
        m, k = theta.shape[0], self.nodes.size
        x = np.zeros((m, len(t.columns)))
        x[:, self.theta_cols] = theta
        full = t.full(x)
        f = np.asarray(t.predictor.predict(full[:, : t.n_model]), dtype=np.float64)
        sel = f[:, list(t.outputs)]
        spread_full = [t.columns[c] for c in self.spread_cols]
        rep = np.repeat(full, k, axis=0)
        rep[:, spread_full] = np.tile(self.nodes, m)[:, None]
        ll = t.loglik_at(np.repeat(sel, k, axis=0), rep).reshape(m, k, -1)
        out = np.stack([ll[:, :, o].sum(axis=2) for o in self.spread_outputs], axis=1)
        return out + self.log_w

    def log_density(self, theta: np.ndarray, chunk: int = 256) -> np.ndarray:
        """``log p(theta | data)`` up to a constant; ``-inf`` outside the box or where the
        simulator failed."""
        theta = np.atleast_2d(theta)
        lo = self.target.lower[self.theta_cols]
        hi = self.target.upper[self.theta_cols]
        out = np.full(theta.shape[0], -np.inf)
        idx = np.flatnonzero(np.all((theta >= lo) & (theta <= hi), axis=1))
        for a in range(0, idx.size, chunk):
            rows = idx[a : a + chunk]
            lz = logsumexp(self.node_loglik(theta[rows]), axis=2).sum(axis=1)
            out[rows] = np.where(np.isfinite(lz), lz, -np.inf)
        return out - self.spread_cols.size * math.log(self.upper)

    def conditionals(self, theta: np.ndarray, chunk: int = 256) -> np.ndarray:
        """Normalised node masses of every spread's conditional, (m, n_spreads, nodes)."""
        parts = []
        for a in range(0, theta.shape[0], chunk):
            lp = self.node_loglik(theta[a : a + chunk])
            parts.append(np.exp(lp - logsumexp(lp, axis=2, keepdims=True)))
        return np.concatenate(parts)

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Every node's cell in ``log s`` (the node at 0: ``[0, s_min]`` in ``s``)."""
        u = np.log(self.nodes[1:])
        h = u[1] - u[0]
        lo = np.concatenate([[-np.inf], np.maximum(u - h / 2, u[0])])
        hi = np.concatenate([[u[0]], np.minimum(u + h / 2, u[-1])])
        return lo, hi

    def draw(self, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw per row of the node masses ``p`` (m, nodes): a node with its mass, then
        uniformly in its cell (in ``log s``; in ``s`` on ``[0, s_min]``)."""
        cdf = np.cumsum(p, axis=1)
        u = rng.random(p.shape[0]) * cdf[:, -1]
        k = np.minimum(np.sum(cdf < u[:, None], axis=1), p.shape[1] - 1)
        lo, hi = self.cells()
        lo[0] = hi[0]  # the cell next to 0 is drawn in s below
        v = rng.random(k.size)
        inner = np.exp(lo[k] + (hi[k] - lo[k]) * v)
        return np.where(k == 0, self.nodes[1] * v, inner)

    def the_moments(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Conditional mean and second moment of ``s`` per row of node masses (m, nodes):
        exact for the piecewise density of :meth:`draw`."""
        lo, hi = self.cells()
        s1 = np.empty(self.nodes.size)
        s2 = np.empty(self.nodes.size)
        s1[0], s2[0] = self.nodes[1] / 2, self.nodes[1] ** 2 / 3
        d = hi[1:] - lo[1:]
        s1[1:] = (np.exp(hi[1:]) - np.exp(lo[1:])) / d
        s2[1:] = (np.exp(2 * hi[1:]) - np.exp(2 * lo[1:])) / (2 * d)
        return p @ s1, p @ s2


def rao_blackwell(
    col: Collapsed, theta: np.ndarray, rng: np.random.Generator, per_draw: int = 20
) -> tuple[dict[str, Any], np.ndarray]:
    """Marginal moments and quantiles of every spread over ``theta`` draws, and one exact
    conditional draw of every spread per ``theta`` draw.

    Returns ``(stats per spread position, draws (m, n_spreads))``.
    """
    p = col.conditionals(theta)
    stats: dict[str, Any] = {}
    one = np.empty((theta.shape[0], col.spread_cols.size))
    for j in range(col.spread_cols.size):
        m1, m2 = col.the_moments(p[:, j])
        mean = float(m1.mean())
        var = float(m2.mean() - mean**2)
        many = np.concatenate([col.draw(p[:, j], rng) for _ in range(per_draw)])
        one[:, j] = col.draw(p[:, j], rng)
        stats[str(j)] = {
            "mean": mean,
            "sd": math.sqrt(max(var, 0.0)),
            "quantiles": {
                str(q): float(v)
                for q, v in zip(
                    (5, 25, 50, 75, 95), np.percentile(many, [5, 25, 50, 75, 95]), strict=True
                )
            },
            # between-draw part of the variance: how much theta's uncertainty contributes
            "var_of_conditional_mean_fraction": float(m1.var() / var) if var > 0 else 0.0,
        }
    return stats, one


def walker_mean_ess(chain: np.ndarray) -> float:
    """ESS of the mean of one ensemble's trace (n_steps, n_walkers) from its walker-mean
    trace: ``n Var(x) / (Var(m) tau_m)``, ``m_t`` the mean over walkers at step ``t`` and
    ``tau_m`` its integrated autocorrelation time (emcee, c = 5). Walkers that move
    together make ``Var(m)`` larger than ``Var(x) / W``, which this counts."""
    from emcee.autocorr import integrated_time

    m = chain.mean(axis=1)
    tau = float(integrated_time(m, c=5, quiet=True)[0])
    vm = float(m.var())
    if vm <= 0:
        return float("inf")
    return chain.shape[0] * float(chain.var()) / (vm * max(tau, 1.0))


def sample_collapsed(
    col: Collapsed,
    groups: list[list[int]],
    x_start: np.ndarray,
    rng: np.random.Generator,
    *,
    ensembles: int = 4,
    walkers: int = 40,
    burn: int = 1000,
    block: int = 1000,
    ess: float = 10000.0,
    max_steps: int = 20000,
    log: Any = print,
) -> tuple[np.ndarray, dict[str, Any]]:
    """emcee (``DEMove``) on ``p(theta | data)``, exchangeable groups in one order.

    ``groups`` are column positions among ``theta``; ``x_start`` a point of ``theta``
    inside the support (e.g. a MAP). Returns the post-burn chain (ensembles, n, walkers,
    n_theta) and run facts (steps, ESS per column, autocorrelation times, acceptance).
    """
    import logging

    import emcee

    logging.getLogger("emcee").setLevel(logging.ERROR)

    def log_prob(v: np.ndarray) -> np.ndarray:
        v = np.atleast_2d(v)
        ok = np.ones(v.shape[0], dtype=bool)
        for g in groups:
            ok &= np.all(np.diff(v[:, g], axis=1) >= 0.0, axis=1)
        out = np.full(v.shape[0], -np.inf)
        if ok.any():
            out[ok] = col.log_density(v[ok])
        return out

    lo = col.target.lower[col.theta_cols]
    hi = col.target.upper[col.theta_cols]
    dim = lo.size
    samplers, states = [], []
    for _ in range(ensembles):
        s = emcee.EnsembleSampler(
            walkers, dim, log_prob, vectorize=True, moves=[(emcee.moves.DEMove(), 1.0)]
        )
        s.random_state = np.random.RandomState(int(rng.integers(2**31 - 1))).get_state()
        ball = x_start + 1e-4 * (hi - lo) * rng.standard_normal((walkers, dim))
        ball = np.clip(ball, lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))
        for g in groups:
            ball[:, g] = np.sort(ball[:, g], axis=1)
        samplers.append(s)
        states.append(ball)
    t0 = time.perf_counter()
    steps = 0
    while True:
        n_block = burn + block if steps == 0 else block
        for k, s in enumerate(samplers):
            states[k] = s.run_mcmc(states[k], n_block, progress=False)
        steps += n_block
        chain = np.stack([s.get_chain(discard=burn) for s in samplers])
        tau = np.array(
            [
                [
                    emcee.autocorr.integrated_time(chain[k, :, :, j], quiet=True)[0]
                    for j in range(dim)
                ]
                for k in range(ensembles)
            ]
        )
        ess_wm = np.array(
            [sum(walker_mean_ess(chain[k, :, :, j]) for k in range(ensembles)) for j in range(dim)]
        )
        ess_walkers = (chain.shape[1] * walkers / tau).sum(axis=0)
        e = np.minimum(ess_wm, ess_walkers)
        log(
            f"{steps} steps, {time.perf_counter() - t0:.0f} s: min ESS {e.min():.0f}, "
            f"max tau {tau.max():.1f}"
        )
        if (e.min() >= ess and chain.shape[1] >= 50 * tau.max()) or steps >= max_steps:
            break
    facts = {
        "sampler": "emcee 3 EnsembleSampler, DEMove, vectorize=True, on p(theta | data)",
        "ensembles": ensembles,
        "walkers": walkers,
        "burn": burn,
        "steps": steps,
        "evaluations": int(steps * walkers * ensembles),
        "seconds": round(time.perf_counter() - t0, 1),
        "acceptance": [float(np.mean(s.acceptance_fraction)) for s in samplers],
        "ess": e.tolist(),
        "tau_steps": tau.max(axis=0).tolist(),
    }
    return chain, facts


def _map(col: Collapsed, groups: list[list[int]], rng: np.random.Generator) -> np.ndarray:
    from scipy.optimize import minimize

    lo = col.target.lower[col.theta_cols]
    hi = col.target.upper[col.theta_cols]
    x = rng.uniform(lo, hi, size=(4000, lo.size))
    for g in groups:
        x[:, g] = np.sort(x[:, g], axis=1)
    lp = col.log_density(x)
    best = x[np.argsort(lp)[::-1][:3]]
    ends = []
    for x0 in best:
        r = minimize(
            lambda v: -float(col.log_density(v[None])[0]),
            x0,
            method="Powell",
            bounds=list(zip(lo, hi, strict=True)),
            options={"maxfev": 2000},
        )
        ends.append((float(-r.fun), r.x))
    return np.asarray(max(ends, key=lambda e: e[0])[1], dtype=np.float64)


def reference_draws(
    col: Collapsed,
    names: list[str],
    groups_full: list[list[int]],
    rng: np.random.Generator,
    keep: int = 4000,
    rb_draws: int = 8000,
    **run: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The collapsed reference: full draws (keep, dim) and per-parameter statistics.

    ``groups_full`` are exchangeable groups as positions among all sampled columns.
    """
    pos = {int(c): i for i, c in enumerate(col.theta_cols)}
    groups = [[pos[c] for c in g] for g in groups_full]
    x_map = _map(col, groups, rng)
    chain, facts = sample_collapsed(col, groups, x_map, rng, **run)
    dim_t = col.theta_cols.size
    flat = chain.reshape(-1, dim_t).copy()
    for g in groups:  # every draw gets a uniformly random order of each group
        perm = np.argsort(rng.random((flat.shape[0], len(g))), axis=1)
        flat[:, g] = np.take_along_axis(flat[:, g], perm, axis=1)
    # every walker of every ensemble at evenly spaced steps (rows of the flattened chain
    # evenly spaced would follow the one or two walkers their spacing lands on)
    n_ens, n_steps, n_walk = chain.shape[:3]
    per_ensemble = min(n_steps, -(-rb_draws // (n_ens * n_walk)))
    steps = np.linspace(0, n_steps - 1, per_ensemble).round().astype(int)
    ens_i, step_i, walk_i = np.meshgrid(np.arange(n_ens), steps, np.arange(n_walk), indexing="ij")
    rb_pick = ((ens_i * n_steps + step_i) * n_walk + walk_i).ravel()
    rb, s_draws = rao_blackwell(col, flat[rb_pick], rng)
    keep_pick = np.linspace(0, rb_pick.size - 1, min(keep, rb_pick.size)).round().astype(int)
    draws = np.empty((keep_pick.size, len(names)))
    draws[:, col.theta_cols] = flat[rb_pick][keep_pick]
    draws[:, col.spread_cols] = s_draws[keep_pick]
    params: dict[str, Any] = {}
    for i, c in enumerate(col.theta_cols):
        v = flat[:, i]
        params[names[c]] = {
            "mean": float(v.mean()),
            "sd": float(v.std(ddof=1)),
            "quantiles": {
                str(q): float(a)
                for q, a in zip(
                    (5, 25, 50, 75, 95), np.percentile(v, [5, 25, 50, 75, 95]), strict=True
                )
            },
            "ess": float(facts["ess"][i]),
            "tau_steps": float(facts["tau_steps"][i]),
        }
    min_ess = float(min(facts["ess"]))
    for j, c in enumerate(col.spread_cols):
        params[names[c]] = {
            **rb[str(j)],
            # Rao-Blackwellised over the theta draws: at least theta's smallest ESS
            "ess": min_ess,
            "method": f"Rao-Blackwellised over {rb_pick.size} theta draws",
        }
    facts["nodes"] = int(col.nodes.size)
    facts["s_min"] = float(col.nodes[1])
    return draws, {**facts, "parameters": params}


# --- cases --------------------------------------------------------------------------------


#: Campaign files given with ``--campaign`` (any campaign, e.g. one kept outside the
#: repository), by case name (the file's stem).
OUTSIDE: dict[str, Path] = {}


def _case_target(case: str, work: Path) -> tuple[Collapsed, list[str], list[list[int]], Path]:
    from posterior_reference import campaign_file, target_of

    path = OUTSIDE[case] if case in OUTSIDE else campaign_file(case, work)
    target, problem, groups = target_of(path)
    names = list(problem.names)
    return Collapsed.of(target, names), names, groups, path


def cmd_rao_blackwell(cases: list[str], results: Path, work: Path) -> None:
    """Spread moments implied by the theta columns of the stored joint-reference and
    campaign draws, against those draws' own spread moments (``spread_check.json``)."""
    for case in cases:
        col, names, _, _ = _case_target(case, work)
        out: dict[str, Any] = {}
        for which in ("reference_joint", "reference", "campaign"):
            f = results / case / f"{which}.npz"
            if not f.exists():
                continue
            z = np.load(f)
            x = np.asarray(z["draws"], dtype=np.float64)
            rb, _ = rao_blackwell(col, x[:, col.theta_cols], np.random.default_rng(5))
            out[which] = {
                names[c]: {
                    "draws_mean": float(x[:, c].mean()),
                    "draws_sd": float(x[:, c].std(ddof=1)),
                    "rb_mean": rb[str(j)]["mean"],
                    "rb_sd": rb[str(j)]["sd"],
                    "sd_ratio_draws_to_rb": float(x[:, c].std(ddof=1) / rb[str(j)]["sd"]),
                }
                for j, c in enumerate(col.spread_cols)
            }
            for n, r in out[which].items():
                print(
                    f"{case} {which:<16} {n:<18} draws mean {r['draws_mean']:.5f} sd "
                    f"{r['draws_sd']:.5f} | RB mean {r['rb_mean']:.5f} sd {r['rb_sd']:.5f} | "
                    f"sd ratio {r['sd_ratio_draws_to_rb']:.3f}",
                    flush=True,
                )
        (results / case / "spread_check.json").write_text(json.dumps(out, indent=1))


def cmd_resolution(cases: list[str], work: Path, results: Path) -> None:
    """Change of the collapsed log-density and of the spreads' conditional moments when the
    grid's resolution doubles, at 200 stored draws."""
    for case in cases:
        col, names, _, _ = _case_target(case, work)
        fine = Collapsed.of(col.target, names, 2 * NODES_PER_EFOLD)
        x = np.asarray(np.load(results / case / "campaign.npz")["draws"], dtype=np.float64)
        x = x[np.linspace(0, x.shape[0] - 1, 200).round().astype(int)][:, col.theta_cols]
        d = col.log_density(x) - fine.log_density(x)
        pa, pb = col.conditionals(x), fine.conditionals(x)
        worst = 0.0
        for j in range(col.spread_cols.size):
            ma, _ = col.the_moments(pa[:, j])
            mb, qb = fine.the_moments(pb[:, j])
            sdb = np.sqrt(np.maximum(qb - mb**2, 1e-300))
            worst = max(worst, float(np.max(np.abs(ma - mb) / sdb)))
        print(
            f"{case}: {col.nodes.size} vs {fine.nodes.size} nodes: log-density change "
            f"(centred) max {np.max(np.abs(d - d.mean())):.2e}; conditional means change "
            f"max {worst:.2e} conditional sd"
        )


def cmd_reference(cases: list[str], work: Path, results: Path, args: argparse.Namespace) -> None:
    """Long collapsed runs; ``reference.npz``/``reference.json`` (the joint run's kept as
    ``reference_joint.json``)."""
    for case in cases:
        col, names, groups, path = _case_target(case, work)
        out = results / case
        out.mkdir(parents=True, exist_ok=True)
        old = out / "reference.json"
        if old.exists() and "Rao-Blackwell" not in old.read_text():
            old.rename(out / "reference_joint.json")
        rng = np.random.default_rng(args.seed)
        draws, stats = reference_draws(
            col,
            names,
            groups,
            rng,
            ess=args.ess,
            max_steps=args.max_steps,
            log=lambda s, c=case: print(f"{c}: {s}", flush=True),
        )
        stats["campaign"] = (
            str(path)
            if case in OUTSIDE
            else path.name
            if case != "main"
            else "experiments/stampede-ib.toml"
        )
        stats["folded"] = [[names[j] for j in g] for g in groups]
        np.savez_compressed(
            out / "reference.npz", draws=draws.astype(np.float32), names=np.array(names)
        )
        (out / "reference.json").write_text(json.dumps(stats, indent=1))
        print(f"{case}: collapsed reference stored ({stats['seconds']} s)", flush=True)


def cmd_known_answer(seeds: list[int], ess: float) -> dict[str, Any]:
    """The collapsed reference on the known-answer posterior against its 3-D quadrature."""
    import known_answer as ka

    truth = ka.quadrature()
    prob = ka.problem()
    names = list(prob.names)
    col = Collapsed.of(prob.log_posterior(), names)
    rows = []
    for seed in seeds:
        _, stats = reference_draws(
            col,
            names,
            [],
            np.random.default_rng(seed),
            ess=ess,
            burn=500,
            block=500,
            walkers=16,
            log=lambda s: None,
        )
        row = {"seed": seed, "steps": stats["steps"]}
        for n in names:
            r, t = stats["parameters"][n], truth[n]
            row[n] = {
                "mean_shift_sd": (r["mean"] - t["mean"]) / t["sd"],
                "sd_ratio": r["sd"] / t["sd"],
                "ess": r["ess"],
            }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"quadrature": truth, "runs": rows}


def cmd_sampler(cases: list[str], work: Path, results: Path, seeds: list[int]) -> None:
    """The campaign's direct sampler (its ``[posterior]`` settings, ESS target 2,000) on
    each case's simulator posterior, started from the collapsed reference's draws, against
    that reference; ``sampler_check.json``. Isolates the sampler from the campaign's
    surrogate stage (which only supplies start draws)."""
    from posterior_reference import target_of

    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.sampling.direct import direct_posterior
    from mpiuq.calibration.sampling.posterior_path import population_settings

    for case in cases:
        _, names, groups, path = _case_target(case, work)
        target, _, _ = target_of(path)
        settings = population_settings(load_campaign(path).posterior, 2000.0, 1.01)
        ref = json.loads((results / case / "reference.json").read_text())["parameters"]
        start = np.asarray(np.load(results / case / "reference.npz")["draws"], dtype=np.float64)
        rows = []
        for seed in seeds:
            t0 = time.perf_counter()
            ex, st = direct_posterior(
                target,
                start,
                settings,
                tuple(tuple(g) for g in groups),
                8000,
                np.random.default_rng(seed),
                tuple(names),
            )
            x = ex.draws
            row: dict[str, Any] = {
                "seed": seed,
                "steps": st.steps,
                "converged": st.converged,
                "seconds": round(time.perf_counter() - t0, 1),
                "parameters": {},
            }
            for j, n in enumerate(names):
                r = ref[n]
                row["parameters"][n] = {
                    "mean_shift_ref_sd": float((x[:, j].mean() - r["mean"]) / r["sd"]),
                    "sd_ratio": float(x[:, j].std(ddof=1) / r["sd"]),
                    "ess_bulk": float(st.ess_bulk[j]),
                    "ess_tail": float(st.ess_tail[j]),
                    # expected Monte Carlo sd of the shift from the reported ESS
                    "shift_mc_sd": float(1.0 / math.sqrt(max(st.ess_bulk[j], 1.0))),
                }
            rows.append(row)
            print(
                f"{case} seed {seed}: {st.steps} steps, {row['seconds']} s; "
                + "; ".join(
                    f"{n} {v['mean_shift_ref_sd']:+.3f}/{v['sd_ratio']:.3f} (ESS {v['ess_bulk']:.0f})"
                    for n, v in row["parameters"].items()
                ),
                flush=True,
            )
        (results / case / "sampler_check.json").write_text(json.dumps(rows, indent=1))


def cmd_ensembles(cases: list[str], results: Path, n_ensembles: int = 4) -> None:
    """How far the collapsed reference's own independent ensembles scatter, per parameter,
    next to the sampler checks' sd ratios; ``ensemble_scatter.json``. No new run.

    ``reference.npz`` keeps its draws in ensemble order (evenly thinned from the chain of
    shape (ensembles, steps, walkers, dim)), so its ``n_ensembles`` equal blocks are the
    independent ensembles. Where the ensembles' sds scatter by more than the rule's 10%,
    a sampler's sd ratio against the pooled reference is not decided by this reference.
    """
    for case in cases:
        z = np.load(results / case / "reference.npz")
        draws = np.asarray(z["draws"], dtype=np.float64)
        names = [str(n) for n in z["names"]]
        ref = json.loads((results / case / "reference.json").read_text())["parameters"]
        checks_file = results / case / "sampler_check.json"
        checks = json.loads(checks_file.read_text()) if checks_file.exists() else []
        blocks = np.array_split(np.arange(draws.shape[0]), n_ensembles)
        rows: dict[str, Any] = {}
        for j, n in enumerate(names):
            sd = float(ref[n]["sd"])
            ratios = [float(draws[b, j].std(ddof=1) / sd) for b in blocks]
            shifts = [float((draws[b, j].mean() - ref[n]["mean"]) / sd) for b in blocks]
            sampler = [float(c["parameters"][n]["sd_ratio"]) for c in checks]
            rows[n] = {
                "ensemble_sd_ratios": ratios,
                "ensemble_mean_shifts_ref_sd": shifts,
                "sampler_sd_ratios": sampler,
                "decided_by_reference": bool(max(ratios) <= 1.1 and min(ratios) >= 0.9),
            }
            print(
                f"{case} {n}: reference ensembles sd {min(ratios):.2f}-{max(ratios):.2f}x"
                f" (means {min(shifts):+.2f}..{max(shifts):+.2f} sd); sampler "
                + ", ".join(f"{r:.2f}x" for r in sampler),
                flush=True,
            )
        (results / case / "ensemble_scatter.json").write_text(json.dumps(rows, indent=1))


def main() -> int:
    """Run the chosen command."""
    from posterior_reference import CASES, RESULTS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "command",
        choices=(
            "known-answer",
            "resolution",
            "rao-blackwell",
            "reference",
            "sampler",
            "ensembles",
        ),
    )
    ap.add_argument("--case", default="all", choices=(*CASES, "all"))
    ap.add_argument("--campaign", type=Path, help="any campaign file instead of --case")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--ess", type=float, default=6000.0)
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    args = ap.parse_args()
    import tempfile

    tmp = tempfile.TemporaryDirectory(prefix="spread_reference_") if args.work is None else None
    work = Path(tmp.name) if tmp is not None else args.work
    cases = list(CASES) if args.case == "all" else [args.case]
    if args.campaign is not None:
        OUTSIDE[args.campaign.stem] = args.campaign.resolve()
        cases = [args.campaign.stem]
    if args.command == "known-answer":
        res = cmd_known_answer(args.seeds, args.ess)
        (args.results / "known_answer_collapsed.json").write_text(json.dumps(res, indent=1))
    elif args.command == "resolution":
        cmd_resolution(cases, work, args.results)
    elif args.command == "rao-blackwell":
        cmd_rao_blackwell(cases, args.results, work)
    elif args.command == "sampler":
        cmd_sampler(cases, work, args.results, args.seeds)
    elif args.command == "ensembles":
        cmd_ensembles(cases, args.results)
    else:
        cmd_reference(cases, work, args.results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
