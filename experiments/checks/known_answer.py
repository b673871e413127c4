"""A posterior with a known answer: latency + per-unit cost with a relative spread, by quadrature.

The model has the structure of one protocol regime of the campaigns: outputs
``f_i(a, b) = a + b x_i`` at a few sizes ``x_i``, data with a 1% replica spread and a
misfit the model cannot follow, and a relative discrepancy spread ``s`` (uniform prior on
``[0, 0.2]``) in the likelihood ``y_i ~ N(f_i, sigma_i^2 + (s f_i)^2)``. With four
outputs and two model parameters the spread's posterior has a long upper tail
(``~ s^-2`` until the prior box of ``a`` and ``b`` cuts it), and ``a`` and ``b`` widen
with it: the funnel that made the stock campaign's spreads hard to sample.

:func:`quadrature` integrates this 3-D posterior deterministically: a trapezoid rule in
``log s`` (plus the piece near 0) and, for every ``s`` node, a trapezoid rule on a
``(a, b)`` grid centred on that node's weighted least-squares fit and spanning 12 of its
standard deviations each way (clipped to the prior box); ``python known_answer.py
resolution`` prints how much doubling every resolution changes the moments.
:func:`exact_draws` draws independently from the same discretisation.

``python known_answer.py compare --seeds 1 2 3`` runs the campaign's direct sampler
(the spread drawn from its conditional in every proposal, :mod:`mpiuq.calibration.sampling.spreads`)
and round 1's (all columns moved jointly, the spread on the log scale) on this posterior and
compares each with the quadrature (mean shift in sd, sd ratio) and with 4,000 exact draws
(the fraction of its draws below the exact draws' 5% log-posterior quantile, 0.05
expected, and the energy-distance permutation test of ``posterior_reference.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

#: Sizes (arbitrary units), truth and the data's relative misfit (percent of the truth).
SIZES = np.array([1.0, 2.0, 4.0, 8.0])
TRUTH = {"a_us": 1.3, "b_us_per_unit": 0.25}
MISFIT_PCT = np.array([0.6, -1.4, 1.6, -0.5])
NOISE_REL = 0.01
BOX = {"a_us": (0.5, 3.0), "b_us_per_unit": (0.05, 1.0)}
SPREAD_MAX = 0.2


def data() -> tuple[np.ndarray, np.ndarray]:
    """Data means and replica variances."""
    f = TRUTH["a_us"] + TRUTH["b_us_per_unit"] * SIZES
    return f * (1.0 + MISFIT_PCT / 100.0), (NOISE_REL * f) ** 2


def model(x: np.ndarray) -> np.ndarray:
    """Batch model: rows ``(a, b)`` -> outputs (n, 4)."""
    x = np.atleast_2d(x)
    return x[:, :1] + x[:, 1:2] * SIZES[None, :]


def problem() -> Any:
    """The known-answer posterior as a campaign likelihood problem (one regime)."""
    from mpiuq.calibration.model.discrepancy import Discrepancy
    from mpiuq.calibration.model.likelihood import ModelPredictor
    from mpiuq.calibration.sampling.posterior import Problem

    mean, var = data()
    disc = Discrepancy(("r",), (0, 0, 0, 0), 0.0, SPREAD_MAX)
    lo = [BOX["a_us"][0], BOX["b_us_per_unit"][0]]
    hi = [BOX["a_us"][1], BOX["b_us_per_unit"][1]]
    return Problem(
        predictor=ModelPredictor(model),
        names=("a_us", "b_us_per_unit", "sd_rel_r"),
        lower=np.array([*lo, 0.0]),
        upper=np.array([*hi, SPREAD_MAX]),
        nominal=np.array([TRUTH["a_us"], TRUTH["b_us_per_unit"], 0.0]),
        data_mean=mean,
        data_var=var,
        loo_rmse=np.zeros(4),
        discrepancy=disc,
    )


def _loglik(a: np.ndarray, b: np.ndarray, s: float, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    f = a[..., None] + b[..., None] * SIZES
    v = var + (s * f) ** 2
    return np.asarray(-0.5 * np.sum((mean - f) ** 2 / v + np.log(2 * np.pi * v), axis=-1))


def _node_grid(
    s: float, mean: np.ndarray, var: np.ndarray, ab_nodes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The ``(a, b)`` grid of one ``s`` node: points, log-likelihood plus log trapezoid
    weights, and the grid spacings. Centred on the node's weighted least-squares fit and
    spanning 12 of its sds each way (clipped to the prior box)."""
    (alo, ahi), (blo, bhi) = BOX["a_us"], BOX["b_us_per_unit"]
    design = np.stack([np.ones_like(SIZES), SIZES], axis=1)
    v = var + (s * mean) ** 2
    cov = np.linalg.inv(design.T @ (design / v[:, None]))
    centre = cov @ design.T @ (mean / v)
    sd = np.sqrt(np.diag(cov))
    ga = np.linspace(max(alo, centre[0] - 12 * sd[0]), min(ahi, centre[0] + 12 * sd[0]), ab_nodes)
    gb = np.linspace(max(blo, centre[1] - 12 * sd[1]), min(bhi, centre[1] + 12 * sd[1]), ab_nodes)
    wa = np.full(ab_nodes, ga[1] - ga[0])
    wa[[0, -1]] *= 0.5
    wb = np.full(ab_nodes, gb[1] - gb[0])
    wb[[0, -1]] *= 0.5
    aa, bb = np.meshgrid(ga, gb, indexing="ij")
    ll = _loglik(aa, bb, s, mean, var) + np.log(wa)[:, None] + np.log(wb)[None, :]
    return aa, bb, ll, float(ga[1] - ga[0]), float(gb[1] - gb[0])


def _spread_nodes(s_nodes: int, span: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``s`` nodes (0, then evenly spaced in ``log s`` over ``span`` e-folds below the prior's
    upper end), their trapezoid weights, and the nodes' ``log s``."""
    u = np.linspace(math.log(SPREAD_MAX) - span, math.log(SPREAD_MAX), s_nodes)
    h = u[1] - u[0]
    s_all = np.concatenate([[0.0], np.exp(u)])
    ws = np.concatenate([[math.exp(u[0])], h * np.exp(u)])
    ws[1] *= 0.5
    ws[-1] *= 0.5
    return s_all, ws, u


def quadrature(s_nodes: int = 600, ab_nodes: int = 400, span: float = 24.0) -> dict[str, Any]:
    """Posterior mean and sd of ``a``, ``b`` and ``s`` by deterministic quadrature, plus
    the 5/50/95% quantiles of ``s`` and the tail probabilities ``P(s > c)``."""
    mean, var = data()
    s_all, ws, _ = _spread_nodes(s_nodes, span)
    log_z = np.empty(s_all.size)
    mom = np.empty((s_all.size, 4))  # E[a], E[a^2], E[b], E[b^2] given s
    for k, s in enumerate(s_all):
        aa, bb, ll, _, _ = _node_grid(float(s), mean, var, ab_nodes)
        lz = logsumexp(ll)
        p = np.exp(ll - lz)
        log_z[k] = lz
        mom[k] = [np.sum(p * aa), np.sum(p * aa**2), np.sum(p * bb), np.sum(p * bb**2)]
    logp = log_z + np.log(ws)
    ps = np.exp(logp - logsumexp(logp))
    out: dict[str, Any] = {}
    for name, (i1, i2) in (("a_us", (0, 1)), ("b_us_per_unit", (2, 3))):
        m = float(ps @ mom[:, i1])
        out[name] = {"mean": m, "sd": math.sqrt(float(ps @ mom[:, i2]) - m * m)}
    m = float(ps @ s_all)
    out["sd_rel_r"] = {"mean": m, "sd": math.sqrt(float(ps @ s_all**2) - m * m)}
    cdf = np.cumsum(ps)
    out["sd_rel_r"]["quantiles"] = {
        str(q): float(s_all[np.searchsorted(cdf, q / 100)]) for q in (5, 50, 95, 99)
    }
    out["sd_rel_r"]["tail"] = {str(c): float(ps[s_all > c].sum()) for c in (0.05, 0.1, 0.15)}
    return out


def exact_draws(
    n: int, rng: np.random.Generator, s_nodes: int = 600, ab_nodes: int = 300, span: float = 24.0
) -> np.ndarray:
    """Independent draws ``(a, b, s)`` of the known-answer posterior, shape (n, 3).

    ``s`` is drawn from its quadrature marginal (a node with its mass, then uniformly in
    ``log s`` within the node's cell, or uniformly on ``[0, s_min]`` for the node at 0),
    then ``(a, b)`` from the node's grid (a grid point with its mass, then uniformly within
    its cell). The discretisation is far finer than any posterior spread (cells of 0.04
    in ``log s`` and 1/12 of a conditional sd in ``a`` and ``b``).
    """
    mean, var = data()
    s_all, ws, u = _spread_nodes(s_nodes, span)
    log_z = np.array([logsumexp(_node_grid(float(s), mean, var, ab_nodes)[2]) for s in s_all])
    logp = log_z + np.log(ws)
    ps = np.exp(logp - logsumexp(logp))
    node = rng.choice(s_all.size, size=n, p=ps / ps.sum())
    h = u[1] - u[0]
    out = np.empty((n, 3))
    for k in np.unique(node):
        rows = np.flatnonzero(node == k)
        aa, bb, ll, da, db = _node_grid(float(s_all[k]), mean, var, ab_nodes)
        p = np.exp(ll - logsumexp(ll)).ravel()
        pick = rng.choice(p.size, size=rows.size, p=p / p.sum())
        jitter = rng.uniform(-0.5, 0.5, (rows.size, 2))
        out[rows, 0] = aa.ravel()[pick] + da * jitter[:, 0]
        out[rows, 1] = bb.ravel()[pick] + db * jitter[:, 1]
        if k == 0:
            out[rows, 2] = s_all[1] * rng.random(rows.size)
        else:
            lo = max(u[k - 1] - h / 2, u[0])
            hi = min(u[k - 1] + h / 2, u[-1])
            out[rows, 2] = np.exp(rng.uniform(lo, hi, rows.size))
    lo = np.array([BOX["a_us"][0], BOX["b_us_per_unit"][0], 0.0])
    hi = np.array([BOX["a_us"][1], BOX["b_us_per_unit"][1], SPREAD_MAX])
    return np.clip(out, lo, hi)


def joint_sampler(
    target: Any, start: np.ndarray, settings: Any, n_draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, Any]:
    """Round 1's direct sampler: all columns moved jointly, the spread on the log scale
    (kept here to show what the collapsed spreads changed)."""
    from mpiuq.calibration.sampling.direct import (
        from_log,
        log_scale_columns,
        log_scale_density,
        simulator_density,
        start_positions,
        to_log,
    )
    from mpiuq.calibration.sampling.population import run_populations

    density = simulator_density(target, ())
    x0 = start_positions(density, start, (), settings.populations, settings.walkers, rng)
    logs = log_scale_columns(target.lower, target.upper)
    run = run_populations(log_scale_density(density, logs), to_log(x0, logs), settings, rng)
    flat = from_log(run.chain.reshape(-1, run.chain.shape[-1]), logs)
    pick = np.linspace(0, flat.shape[0] - 1, n_draws).round().astype(np.int64)
    return flat[pick], run.diagnostics


def collapsed_sampler(
    target: Any, start: np.ndarray, settings: Any, n_draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, Any]:
    """The campaign's direct sampler (:func:`mpiuq.calibration.sampling.direct.direct_posterior`:
    the spread drawn from its conditional inside every proposal)."""
    from mpiuq.calibration.sampling.direct import direct_posterior

    ex, stats = direct_posterior(target, start, settings, (), n_draws, rng)
    return ex.draws, stats


def compare(seeds: tuple[int, ...], n_draws: int = 4000) -> dict[str, Any]:
    """Both samplers against independent exact draws and the quadrature moments.

    Per parameter: mean shift in reference sd and sd ratio; jointly: the fraction of the
    sampler's draws whose log-posterior lies below the 5% quantile of the exact draws'
    (0.05 expected) and the energy-distance permutation test
    (:func:`posterior_reference.energy_test`).
    """
    from posterior_reference import energy_test

    from mpiuq.calibration.sampling.population import PopulationSettings

    ref = quadrature()
    names = ("a_us", "b_us_per_unit", "sd_rel_r")
    prob = problem()
    target = prob.log_posterior()
    exact = exact_draws(n_draws, np.random.default_rng(100))
    cut = float(np.quantile(target(exact), 0.05))
    settings = PopulationSettings(walkers=16, target_ess=2000, max_steps=20000)
    out: dict[str, Any] = {"reference": ref, "runs": []}
    exact_row: dict[str, Any] = {"sampler": "exact draws", "seed": 100}
    samplers = (("joint (round 1)", joint_sampler), ("collapsed", collapsed_sampler))
    for label, x in [("exact draws", exact)] + [
        (f"{name}:{seed}", None) for name, _ in samplers for seed in seeds
    ]:
        row: dict[str, Any] = {"sampler": label}
        if x is None:
            name, seed = label.rsplit(":", 1)
            fn = dict(samplers)[name]
            rng = np.random.default_rng(int(seed))
            start = rng.uniform(prob.lower, prob.upper, (4000, 3))
            x, diag = fn(target, start, settings, n_draws, rng)
            row["converged"] = bool(diag.converged)
            row["min_ess"] = float(min(np.min(diag.ess_bulk), np.min(diag.ess_tail)))
            row["max_rhat"] = float(np.max(diag.rhat))
        else:
            row = exact_row
        row["parameters"] = {
            n: {
                "mean_shift_ref_sd": float((x[:, j].mean() - ref[n]["mean"]) / ref[n]["sd"]),
                "sd_ratio": float(x[:, j].std() / ref[n]["sd"]),
            }
            for j, n in enumerate(names)
        }
        row["below_ref_q05"] = float(np.mean(target(x) < cut))
        row["energy_p"] = energy_test(x, exact, np.random.default_rng(0))[1]
        out["runs"].append(row)
    return out


def main() -> int:
    """``resolution``: the quadrature's convergence; ``compare``: the samplers against it."""
    import argparse
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("command", choices=("resolution", "compare"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    if args.command == "resolution":
        base = quadrature()
        fine = quadrature(1200, 800, 28.0)
        for n in base:
            print(
                n,
                f"mean change {abs(base[n]['mean'] - fine[n]['mean']) / fine[n]['sd']:.2e} sd,",
                f"sd change {abs(base[n]['sd'] / fine[n]['sd'] - 1):.2e} (relative)",
            )
        return 0
    res = compare(tuple(args.seeds))
    for r in res["runs"]:
        p = r["parameters"]
        print(
            f"{r['sampler']:<22}",
            " ".join(f"{n}: shift {v['mean_shift_ref_sd']:+.3f} sd ratio {v['sd_ratio']:.3f};"
                     for n, v in p.items()),
            f"below ref q05 {r['below_ref_q05']:.3f}; energy p {r['energy_p']:.3f}",
            f"(converged {r.get('converged', '-')}, min ESS {r.get('min_ess', float('nan')):.0f})",
        )
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
