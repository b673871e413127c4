"""Do calibrated parameters transfer? Leave-one-series-out and unfitted-size checks.

For a campaign file whose ``[[data]]`` tables are several series of one machine (the
ping-pong, the MPI_Send and MPI_Isend calls, the receive of an arrived message; or OSU
latency and bandwidth), this script fits the campaign's simulator model to a subset of
the series and scores the others with the full posterior predictive:

* fit: the campaign's likelihood (data means and replica variances of the selected sizes,
  the campaign's likelihood family per series, its ``[discrepancy]``: a relative
  model-error spread per protocol regime, shared by the series or one per series), on
  the simulator itself (no surrogate): the posterior mode in logit coordinates of the
  prior box, then importance sampling from a Student-t around it with Pareto-smoothed
  weights by the simulator's posterior (k-hat and ESS reported; ``--method mcmc``: emcee
  ensembles with differential-evolution moves instead, R-hat and ESS reported, the
  independent reference for the fast path);
* score: for every measured size of a series, the simulator at 400 posterior draws, the
  draw's discrepancy spread of the size's regime (a series fitted with terms of its own
  uses them; a held-out series takes the regime's shared term, or the largest spread of
  that regime among the fitted series) and the measurement noise of that size (its
  replica variance, or the series' floor, as the in-sample predictive uses): the 90%
  band, whether the measured mean lies in it, and the relative error of the predictive
  median.

Folds per data set: ``all`` (every series fitted: in-sample at the fitted sizes, and the
same-benchmark sizes that were not fitted), one fold per series left out, and any extra
folds named on the command line (``--fold latency`` fits only the series labelled
``latency``). Done-when thresholds (issue "Calibration that transfers"): a held-out series
has >= 80% of its sizes inside and a median relative error <= 15%; unfitted sizes of a
fitted series >= 90% inside.

Usage (from the repository root; one campaign file per run; results are small JSON and
Markdown files)::

    python experiments/checks/transfer_check.py experiments/stampede-ib-joint.toml \\
        --out results/validation

Run time: a few minutes per fold on one core (the simulator is called ~10^5 times).

``--pipeline`` runs the campaign through mpiuq's own pipeline instead (``run_campaign``:
surrogate design, the campaign's posterior path, by default forced to ``surrogate``: the
refined surrogate's posterior corrected by importance weights and moves on the simulator)
with a ``[validation]`` table: every measured size of a fitted series that the fit did
not select is scored (same benchmark, sizes not fitted: sizes between the fitted ones and
beyond the fitted range), plus the ``--holdout SERIES`` or ``--holdout SERIES:MIN-MAX``
entries (a whole series, or a size range in bytes, either bound may be empty). With
``--loso`` every fitted series is held out in turn (the folds share one design), as
``mpiuq campaign validate --leave-one-series-out`` does::

    python experiments/checks/transfer_check.py experiments/sirocco-openmpi.toml \
        --out results/validation --pipeline
    python experiments/checks/transfer_check.py experiments/openmpi-ucx-ib.toml \
        --out results/validation --pipeline --holdout bandwidth --holdout bibw \
        --holdout imb --tag latency-only

The JSON (``pipeline_<name>[_<tag>].json``) has the same folds/scores layout as the
simulator-fit folds, so ``transfer_table.py`` reads both.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import emcee
import numpy as np
import numpy.typing as npt
from scipy.optimize import differential_evolution, minimize
from scipy.special import gammaln

from mpiuq.calibration.config import Campaign, parse_campaign, read_toml
from mpiuq.calibration.config.validation_spec import Holdout, ValidationSpec
from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
from mpiuq.calibration.data.observations import Observations, load_observations
from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.likelihood import ModelPredictor
from mpiuq.calibration.pipeline.campaign import (
    discrepancy_for,
    model_for,
    noise_for,
    regime_thresholds,
)
from mpiuq.calibration.sampling.exact import psis_weights, systematic_resample
from mpiuq.calibration.sampling.posterior import Problem
from mpiuq.calibration.sampling.sampler import diagnose

FloatArray = npt.NDArray[np.float64]
INSIDE_HELD_OUT = 0.80
MEDIAN_ERROR_HELD_OUT = 0.15
INSIDE_UNFITTED = 0.90


@dataclass(frozen=True)
class Fit:
    """Posterior draws of one fold and how they were obtained."""

    names: tuple[str, ...]
    draws: FloatArray  # (n, dim): model parameters, then discrepancy spreads
    discrepancy: Discrepancy
    map_x: FloatArray
    max_rhat: float
    min_ess: float
    evaluations: int
    seconds: float


def subset(campaign: Campaign, labels: tuple[str, ...]) -> Campaign:
    """The campaign with only the data tables of ``labels``."""
    return replace(campaign, datasets=tuple(d for d in campaign.datasets if d.label in labels))


def regime_labels(campaign: Campaign, sizes: npt.ArrayLike) -> tuple[str, ...]:
    base = campaign.simulator.base_params()
    return tuple(base.protocol_of(int(s)) for s in np.asarray(sizes))


def spread_columns(names: tuple[str, ...], label: str, regime: str, shared: bool) -> list[int]:
    """Columns of the discrepancy spread that applies to series ``label`` in ``regime``:
    the shared term, the series' own, or (held out) every fitted series' term of it."""
    if shared:
        return [names.index(f"sd_rel_{regime}")] if f"sd_rel_{regime}" in names else []
    own = f"sd_rel_{label}_{regime}"
    if own in names:
        return [names.index(own)]
    return [j for j, n in enumerate(names) if n.startswith("sd_rel_") and n.endswith(f"_{regime}")]


def problem(campaign: Campaign, obs: Observations, disc: Discrepancy) -> Problem:
    p = campaign.parameters
    noise = noise_for(campaign, obs)
    model = model_for(campaign, obs)
    return Problem(
        predictor=ModelPredictor(model),
        names=p.names + disc.names + noise.names,
        lower=np.concatenate([np.asarray(p.lower), disc.lower, noise.lower]),
        upper=np.concatenate([np.asarray(p.upper), disc.upper, noise.upper]),
        nominal=np.concatenate([np.asarray(p.nominal), disc.nominal, noise.nominal]),
        data_mean=obs.mean,
        data_var=obs.var,
        loo_rmse=np.zeros_like(obs.mean),
        discrepancy=disc,
        noise=noise,
    )


def _logit(u: FloatArray) -> FloatArray:
    return np.log(u) - np.log1p(-u)


def _expit(z: FloatArray) -> FloatArray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def fit(
    campaign: Campaign,
    labels: tuple[str, ...],
    rng: np.random.Generator,
    steps: int,
    burn: int,
    method: str = "laplace",
    n_draws: int = 4000,
) -> Fit:
    """The posterior of the series ``labels`` on the simulator.

    ``method = "laplace"``: the mode of the posterior in logit coordinates of the prior
    box (differential evolution over the box, each generation one simulator batch, then
    L-BFGS with gradients by batched differences),
    as proposal a mixture of a Student-t (5 degrees of freedom) with the inverse Hessian
    there (80%) and the prior (20%), adapted twice to the weighted draws (population Monte
    Carlo), and Pareto-smoothed importance weights by the simulator's posterior:
    ``n_draws`` resampled draws; ``max_rhat`` is then the Pareto k-hat and ``min_ess`` the ESS of the
    weights. ``method = "mcmc"``: two emcee ensembles with differential-evolution moves
    started around that mode, ``burn`` + ``steps`` steps (R-hat and ESS reported).
    """
    t0 = time.perf_counter()
    sub = subset(campaign, labels)
    obs = load_observations(sub.datasets, regime_thresholds(sub))
    prob = problem(sub, obs, discrepancy_for(sub, obs))
    logp = prob.log_posterior()
    lo, hi = prob.lower, prob.upper
    dim = lo.size
    scale = hi - lo
    calls = 0

    def lp(x: FloatArray) -> FloatArray:
        nonlocal calls
        calls += x.shape[0]
        return np.asarray(logp(x), dtype=np.float64)

    def lp_z(z: FloatArray) -> FloatArray:
        """Log density of the logit coordinates (the box's Jacobian included)."""
        u = _expit(z)
        jac = np.sum(np.log(u) + np.log1p(-u), axis=1)
        return lp(lo + u * scale) + jac

    h = 1e-4

    def value_and_grad(z: FloatArray) -> tuple[float, FloatArray]:
        pts = np.vstack([z[None, :], z[None, :] + h * np.eye(dim)])
        v = lp_z(pts)
        if not np.isfinite(v[0]):
            return 1e300, np.zeros(dim)
        g = (v[1:] - v[0]) / h
        g = np.where(np.isfinite(g), g, 0.0)
        return -float(v[0]), -g

    # global search: differential evolution over the unit box, the population evaluated
    # in one simulator batch per generation; then L-BFGS in z from its best point
    def neg_batch(u: FloatArray) -> FloatArray:  # (dim, n) -> (n,)
        v = lp(lo + u.T * scale)
        return np.where(np.isfinite(v), -v, 1e300)

    de = differential_evolution(
        neg_batch,
        [(0.0, 1.0)] * dim,
        popsize=max(10, 150 // dim),
        maxiter=400,
        tol=1e-8,
        polish=False,
        vectorized=True,
        updating="deferred",
        seed=int(rng.integers(0, 2**31 - 1)),
    )
    u0 = np.clip(de.x, 1e-6, 1 - 1e-6)
    res = minimize(value_and_grad, _logit(u0), jac=True, method="L-BFGS-B")
    best_z = res.x if np.isfinite(res.fun) and res.fun < 1e299 else _logit(u0)
    x_map = lo + _expit(best_z) * scale
    if steps == 0:
        return Fit(
            prob.names,
            x_map[None, :],
            prob.discrepancy,
            x_map,
            np.nan,
            np.nan,
            calls,
            time.perf_counter() - t0,
        )
    # Hessian of -log p in z by central differences, one batch
    e = np.eye(dim) * 1e-3
    pts = [best_z]
    for i in range(dim):
        for j in range(i, dim):
            pts += [
                best_z + e[i] + e[j],
                best_z + e[i] - e[j],
                best_z - e[i] + e[j],
                best_z - e[i] - e[j],
            ]
    vals = lp_z(np.asarray(pts))
    hess = np.zeros((dim, dim))
    k = 1
    for i in range(dim):
        for j in range(i, dim):
            a, b, c, d = vals[k : k + 4]
            hess[i, j] = hess[j, i] = -(a - b - c + d) / (4e-6)
            k += 4
    w_eig, vec = np.linalg.eigh(hess)
    w_eig = np.maximum(w_eig, 1e-2)  # flat directions: a wide proposal (sd <= 10 in z)
    cov = (vec / w_eig) @ vec.T
    if method == "laplace":
        # proposal: a defensive mixture of a Student-t (80%) and the prior (20%: uniform in
        # the box, logistic in z, so that directions no fitted series informs are
        # covered); first around the mode with the Laplace covariance, then twice around
        # the weighted mean and covariance of the previous round's draws (a ridge that
        # ends at a bound is covered along its length); weights Pareto-smoothed
        df, alpha, n_q = 5.0, 0.2, 3 * n_draws
        mu = best_z
        for _ in range(3):
            chol = np.linalg.cholesky(cov)
            n_t = round((1 - alpha) * n_q)
            gauss = rng.standard_normal((n_t, dim))
            chi = rng.chisquare(df, size=(n_t, 1))
            z_t = mu + (gauss @ chol.T) / np.sqrt(chi / df)
            z_p = _logit(rng.uniform(1e-9, 1 - 1e-9, size=(n_q - n_t, dim)))
            z = np.clip(np.vstack([z_t, z_p]), -30.0, 30.0)
            maha = np.sum(np.linalg.solve(chol, (z - mu).T) ** 2, axis=0)
            log_t = (
                gammaln((df + dim) / 2)
                - gammaln(df / 2)
                - 0.5 * dim * np.log(df * np.pi)
                - np.sum(np.log(np.diag(chol)))
                - 0.5 * (df + dim) * np.log1p(maha / df)
            )
            u = _expit(z)
            log_prior = np.sum(np.log(u) + np.log1p(-u), axis=1)
            logq = np.logaddexp(np.log(1 - alpha) + log_t, np.log(alpha) + log_prior)
            weights = psis_weights(lp_z(z) - logq)
            w = np.exp(weights.log_weights)
            mu = w @ z
            cov = ((z - mu).T * w) @ (z - mu) + 1e-6 * np.eye(dim)
        idx = systematic_resample(weights.log_weights, n_draws, rng)
        draws = lo + _expit(z[idx]) * scale
        return Fit(
            prob.names,
            draws,
            prob.discrepancy,
            x_map,
            weights.khat,
            weights.ess,
            calls,
            time.perf_counter() - t0,
        )
    walkers = max(2 * dim + 2, 40)
    moves = [(emcee.moves.DEMove(), 0.8), (emcee.moves.DESnookerMove(), 0.2)]
    chains, accs = [], []
    chol = np.linalg.cholesky(cov)
    for _ in range(2):
        z0 = best_z + rng.standard_normal((walkers, dim)) @ chol.T
        sampler = emcee.EnsembleSampler(walkers, dim, lp_z, vectorize=True, moves=moves)
        sampler.random_state = np.random.RandomState(int(rng.integers(0, 2**31 - 1))).get_state()
        sampler.run_mcmc(z0, burn + steps, progress=False)
        chains.append(lo + _expit(sampler.get_chain(discard=burn)) * scale)
        accs.append(float(np.mean(sampler.acceptance_fraction)))
    chain = np.stack(chains)  # (ens, steps, walkers, dim)
    diag = diagnose(chain, np.asarray(accs), 1.01, 400.0)
    return Fit(
        names=prob.names,
        draws=chain.reshape(-1, dim),
        discrepancy=prob.discrepancy,
        map_x=x_map,
        max_rhat=float(np.max(diag.rhat)),
        min_ess=float(min(np.min(diag.ess_bulk), np.min(diag.ess_tail))),
        evaluations=calls,
        seconds=time.perf_counter() - t0,
    )


def all_sizes(campaign: Campaign, label: str) -> tuple[int, ...]:
    spec = next(d for d in campaign.datasets if d.label == label)
    raw = read_benchmark_csv(spec.path, spec.benchmark)
    sizes = np.unique(np.asarray(raw.size_bytes))
    keep = (sizes >= spec.min_size_bytes) & (sizes <= spec.max_size_bytes)
    return tuple(int(s) for s in sizes[keep])


def score(
    campaign: Campaign,
    result: Fit,
    label: str,
    sizes: tuple[int, ...],
    rng: np.random.Generator,
    n_draws: int = 400,
) -> dict[str, Any]:
    """Full posterior predictive of series ``label`` at ``sizes``: coverage and errors."""
    spec = next(d for d in campaign.datasets if d.label == label)
    one = replace(campaign, datasets=(replace(spec, sizes=sizes, sizes_per_protocol=None),))
    obs = load_observations(one.datasets, regime_thresholds(one))
    per_output = regime_labels(one, obs.sizes_bytes)
    prob = problem(one, obs, Discrepancy())
    pick = rng.choice(
        result.draws.shape[0], size=min(n_draws, result.draws.shape[0]), replace=False
    )
    draws = result.draws[pick]
    n_model = len(campaign.parameters.names)
    f = np.asarray(prob.predictor.predict(draws[:, :n_model]), dtype=np.float64)
    shared = not campaign.discrepancy.per_series or len(campaign.datasets) == 1
    sd = np.zeros_like(f)
    for i, r in enumerate(per_output):
        cols = spread_columns(result.names, label, r, shared)
        if cols:
            sd[:, i] = draws[:, cols].max(axis=1)
    nu = np.zeros((f.shape[0], 0))
    zero = np.zeros_like(prob.data_var)
    y = prob.noise.draw(f, (sd * f) ** 2, f, prob.data_var, zero, nu, rng)
    lo, hi = np.quantile(y, [0.05, 0.95], axis=0)
    med = np.median(y, axis=0)
    inside = (obs.mean >= lo) & (obs.mean <= hi)
    rel = np.abs(med - obs.mean) / obs.mean
    by_regime: dict[str, list[int]] = {}
    for r, ok in zip(per_output, inside, strict=True):
        by_regime.setdefault(r, [0, 0])
        by_regime[r][0] += int(ok)
        by_regime[r][1] += 1
    return {
        "series": label,
        "sizes": len(sizes),
        "inside": int(inside.sum()),
        "inside_fraction": float(inside.mean()),
        "median_rel_error": float(np.median(rel)),
        "max_rel_error": float(np.max(rel)),
        "inside_by_regime": {r: f"{a}/{b}" for r, (a, b) in by_regime.items()},
        "band_rel_width_median": float(np.median((hi - lo) / obs.mean)),
    }


def fitted_sizes(campaign: Campaign, label: str) -> tuple[int, ...]:
    spec = next(d for d in campaign.datasets if d.label == label)
    one = replace(campaign, datasets=(spec,))
    obs = load_observations(one.datasets, regime_thresholds(one))
    return tuple(int(s) for s in obs.sizes_bytes)


def score_fold(
    campaign: Campaign,
    result: Fit,
    fitted: tuple[str, ...],
    rng: np.random.Generator,
    beyond_range: bool = False,
) -> list[dict[str, Any]]:
    """Scores of every series of ``campaign`` with the posterior ``result`` of ``fitted``:
    in-sample at the fitted sizes, the same benchmark's sizes not fitted, held-out series
    (``beyond_range``: the unfitted sizes include measured sizes outside the table's
    ``min_size_bytes``-``max_size_bytes`` range, from 1 B)."""
    scores: list[dict[str, Any]] = []
    for lab in (d.label for d in campaign.datasets):
        every = measured(campaign, lab) if beyond_range else all_sizes(campaign, lab)
        if lab in fitted:
            used = set(fitted_sizes(campaign, lab))
            s_in = score(campaign, result, lab, tuple(sorted(used)), rng)
            s_in["kind"] = "in-sample (fitted sizes)"
            scores.append(s_in)
            rest = tuple(s for s in every if s not in used)
            if rest:
                s_out = score(campaign, result, lab, rest, rng)
                s_out["kind"] = "same benchmark, sizes not fitted"
                s_out["pass"] = s_out["inside_fraction"] >= INSIDE_UNFITTED
                scores.append(s_out)
        else:
            s_out = score(campaign, result, lab, every, rng)
            s_out["kind"] = "held-out series"
            s_out["pass"] = bool(
                s_out["inside_fraction"] >= INSIDE_HELD_OUT
                and s_out["median_rel_error"] <= MEDIAN_ERROR_HELD_OUT
            )
            scores.append(s_out)
    return scores


def measured(campaign: Campaign, label: str) -> tuple[int, ...]:
    """Every measured size of series ``label`` from 1 B (its size range ignored)."""
    spec = next(d for d in campaign.datasets if d.label == label)
    raw = read_benchmark_csv(spec.path, spec.benchmark)
    sizes = np.unique(np.asarray(raw.size_bytes))
    return tuple(int(s) for s in sizes[sizes >= 1])


def run_from_results(path: Path, results: Path, out: Path, seed: int) -> dict[str, Any]:
    """Fold ``all`` scored with the posterior draws of a finished campaign run
    (``results/posterior_draws.nc``: model parameters and discrepancy spreads), without
    fitting again: every fitted size in sample, every other measured size (between the
    fitted ones and outside the fitted range) out of sample."""
    import arviz as az

    campaign = parse_campaign(read_toml(path), base_dir=path.parent)
    posterior = az.from_netcdf(results / "posterior_draws.nc").posterior
    names = tuple(str(n) for n in posterior.data_vars)
    draws = np.column_stack([np.asarray(posterior[n]).reshape(-1) for n in names])
    model = tuple(campaign.parameters.names)
    if names[: len(model)] != model:
        raise SystemExit(f"{results}: draws {names[: len(model)]} are not the campaign's {model}")
    result = Fit(names, draws, Discrepancy(), np.median(draws, axis=0), np.nan, np.nan, 0, 0.0)
    rng = np.random.default_rng(seed)
    labels = tuple(d.label for d in campaign.datasets)
    scores = score_fold(campaign, result, labels, rng, beyond_range=True)
    report: dict[str, Any] = {
        "campaign": campaign.name,
        "file": str(path),
        "folds": [
            {
                "fold": "all",
                "fitted": list(labels),
                "method": f"posterior draws of {results}",
                "khat_or_rhat": float("nan"),
                "draws": int(draws.shape[0]),
                "scores": scores,
            }
        ],
    }
    print(f"{campaign.name} / all: {draws.shape[0]} posterior draws of {results}", flush=True)
    for s in scores:
        print(
            f"    {s['series']:10s} {s['kind']:34s} {s['inside']:4d}/{s['sizes']:<4d} inside, "
            f"median error {100 * s['median_rel_error']:.1f}%",
            flush=True,
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / f"draws_{campaign.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def at_medians(path: Path, folders: list[Path]) -> None:
    """Print every series of the campaign simulated at the posterior median of each results
    folder (its ``summary.json``), against the data at the series' fitted sizes: whether
    parameters fitted on different series lie on the same ridge of one series."""
    campaign = parse_campaign(read_toml(path), base_dir=path.parent)
    names = campaign.parameters.names
    x = np.array(
        [
            [json.loads((f / "summary.json").read_text())["parameters"][n]["median"] for n in names]
            for f in folders
        ]
    )
    for row, f in zip(x, folders, strict=True):
        print(f"{f}: " + ", ".join(f"{n} {v:.4g}" for n, v in zip(names, row, strict=True)))
    for spec in campaign.datasets:
        sub = subset(campaign, (spec.label,))
        obs = load_observations(sub.datasets, regime_thresholds(sub))
        y = np.asarray(problem(sub, obs, Discrepancy()).predictor.predict(x))
        print(spec.label)
        for i, (size, data) in enumerate(zip(obs.sizes_bytes, obs.mean, strict=True)):
            cols = "  ".join(
                f"{y[k, i]:10.4g} ({100 * (y[k, i] / data - 1):+6.1f}%)"
                for k in range(len(folders))
            )
            print(f"  {int(size):>10} data {data:10.4g}  {cols}")


def run(
    path: Path,
    out: Path,
    extra_folds: list[str],
    steps: int,
    burn: int,
    seed: int,
    method: str = "laplace",
    only: list[str] | None = None,
    tag: str | None = None,
) -> dict[str, Any]:
    campaign = parse_campaign(read_toml(path), base_dir=path.parent)
    labels = tuple(d.label for d in campaign.datasets)
    rng = np.random.default_rng(seed)
    folds: list[tuple[str, tuple[str, ...]]] = [("all", labels)]
    if len(labels) > 1:
        folds += [(f"without {lab}", tuple(x for x in labels if x != lab)) for lab in labels]
    for fold in extra_folds:
        folds.append((f"only {fold}", tuple(fold.split("+"))))
    report: dict[str, Any] = {"campaign": campaign.name, "file": str(path), "folds": []}
    for name, fitted in folds:
        if only and name not in only:
            continue
        result = fit(campaign, fitted, rng, steps, burn, method)
        entry: dict[str, Any] = {
            "fold": name,
            "fitted": list(fitted),
            "method": method,
            # laplace: Pareto k-hat and ESS of the importance weights; mcmc: R-hat, ESS
            "khat_or_rhat": result.max_rhat,
            "ess": result.min_ess,
            "evaluations": result.evaluations,
            "seconds": round(result.seconds, 1),
            "map": dict(zip(result.names, (float(v) for v in result.map_x), strict=True)),
            "posterior_median": dict(
                zip(result.names, (float(v) for v in np.median(result.draws, axis=0)), strict=True)
            ),
            "scores": [],
        }
        scores = score_fold(campaign, result, fitted, rng)
        entry["scores"] = scores
        report["folds"].append(entry)
        print(
            f"{campaign.name} / {name}: {'k-hat' if method == 'laplace' else 'R-hat'} "
            f"{result.max_rhat:.3f}, ESS {result.min_ess:.0f}, "
            f"{result.evaluations} evaluations, {result.seconds:.0f} s",
            flush=True,
        )
        for s in scores:
            print(
                f"    {s['series']:10s} {s['kind']:34s} {s['inside']:4d}/{s['sizes']:<4d} inside, "
                f"median error {100 * s['median_rel_error']:.1f}%",
                flush=True,
            )
        out.mkdir(parents=True, exist_ok=True)  # after every fold: a stopped run keeps its folds
        suffix = f"_{tag}" if tag else ""
        (out / f"transfer_{campaign.name}{suffix}.json").write_text(
            json.dumps(report, indent=1) + "\n"
        )
    return report


def parse_holdout(text: str) -> Holdout:
    """``SERIES`` (the whole series) or ``SERIES:MIN-MAX`` (bytes, inclusive; a bound may be
    empty) as a hold-out entry."""
    series, _, rng_text = text.partition(":")
    if not rng_text:
        return Holdout(series)
    lo_text, sep, hi_text = rng_text.partition("-")
    if not sep:
        raise argparse.ArgumentTypeError(f"--holdout {text!r}: expected SERIES or SERIES:MIN-MAX")
    return Holdout(
        series,
        int(lo_text) if lo_text else None,
        int(hi_text) if hi_text else None,
    )


def _pipeline_fold(name: str, campaign: Campaign, out: Path, design: Any = None) -> dict[str, Any]:
    """One campaign run through the pipeline with its ``[validation]``; the fold's entry."""
    from mpiuq.calibration.pipeline.campaign import run_campaign
    from mpiuq.calibration.reporting.report import summary_dict

    t0 = time.perf_counter()
    result = run_campaign(campaign, out, design=design)
    seconds = time.perf_counter() - t0
    summary = summary_dict(result)
    val = summary["validation"]
    scores: list[dict[str, Any]] = []
    ins = val["in_sample"]
    scores.append(
        {
            "series": "(all fitted)",
            "kind": "in-sample (fitted sizes)",
            "sizes": ins["n_sizes"],
            "inside": ins["n_inside_90"],
            "inside_fraction": ins["n_inside_90"] / ins["n_sizes"],
            "median_rel_error": ins["median_relative_error"],
        }
    )
    for g in val["groups"]:
        held_series = g["kind"] == "held-out series"
        frac = g["coverage"]
        entry = {
            "series": g["series"] if held_series else g["name"],
            "kind": "held-out series" if held_series else "same benchmark, sizes not fitted",
            "group_kind": g["kind"],
            "sizes": g["n_sizes"],
            "inside": g["n_inside_90"],
            "inside_fraction": frac,
            "median_rel_error": g["median_relative_error"],
            "binomial_threshold": g["threshold"],
            "binomial_passed": g["passed"],
            "fitted_range_bytes": g["fitted_range_bytes"],
            "n_outside_fitted_range": g["n_outside_fitted_range"],
            "inside_by_regime": _by_regime(g["sizes"]),
        }
        if held_series:
            entry["pass"] = bool(
                frac >= INSIDE_HELD_OUT and g["median_relative_error"] <= MEDIAN_ERROR_HELD_OUT
            )
        else:
            entry["pass"] = bool(frac >= INSIDE_UNFITTED)
        scores.append(entry)
    failed = [k for k, c in summary["checks"].items() if not c["passed"]]
    return {
        "fold": name,
        "fitted": [d.label for d in result.campaign.datasets],
        "method": f"pipeline ({campaign.posterior.sampler})",
        "posterior_source": summary.get("posterior_source"),
        "posterior": summary.get("posterior"),
        "khat_or_rhat": float("nan"),
        "checks_failed": failed,
        "seconds": round(seconds, 1),
        "scores": scores,
    }


def _by_regime(columns: dict[str, Any]) -> dict[str, str]:
    counts: dict[str, list[int]] = {}
    for r, ok in zip(columns["regime"], columns["inside_90"], strict=True):
        counts.setdefault(r, [0, 0])
        counts[r][0] += int(ok)
        counts[r][1] += 1
    return {r: f"{a}/{b}" for r, (a, b) in counts.items()}


def run_pipeline(
    path: Path,
    out: Path,
    holdouts: list[Holdout],
    sampler: str,
    loso: bool,
    tag: str | None = None,
) -> dict[str, Any]:
    """The campaign through mpiuq's pipeline with a ``[validation]`` of its unselected
    sizes and ``holdouts`` (``loso``: one fold per fitted series held out in turn)."""
    from mpiuq.calibration.checking.loso import fold_campaigns, shared_design

    campaign = parse_campaign(read_toml(path), base_dir=path.parent)
    posterior = (
        campaign.posterior
        if sampler == "campaign"
        else replace(campaign.posterior, sampler=sampler)
    )
    spec = ValidationSpec(tuple(holdouts), unselected_sizes=True, present=True)
    campaign = replace(campaign, posterior=posterior, validation=spec)
    suffix = f"_{tag}" if tag else ""
    work = out / f"pipeline_{campaign.name}{suffix}"
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"campaign": campaign.name, "file": str(path), "folds": []}
    held = ", ".join(h.describe() for h in holdouts) or "nothing"
    if loso:
        design = shared_design(campaign, work / "design.h5")
        runs = [(f"without {label}", c, design) for label, c in fold_campaigns(campaign)]
    else:
        runs = [(f"all (held out: {held})", campaign, None)]
    for name, fold_campaign, design in runs:
        fold_dir = work / (name.replace(" ", "-") if loso else "all")
        fold_dir.mkdir(parents=True, exist_ok=True)
        entry = _pipeline_fold(name, fold_campaign, fold_dir, design)
        report["folds"].append(entry)
        print(
            f"{campaign.name} / {name}: {entry['method']}, posterior from "
            f"{entry['posterior_source']}, {entry['seconds']:.0f} s, failed checks: "
            f"{', '.join(entry['checks_failed']) or 'none'}",
            flush=True,
        )
        for s in entry["scores"]:
            print(
                f"    {s['series']:28s} {s['kind']:34s} {s['inside']:4d}/{s['sizes']:<4d} "
                f"inside, median error {100 * s['median_rel_error']:.1f}%",
                flush=True,
            )
        (out / f"pipeline_{campaign.name}{suffix}.json").write_text(
            json.dumps(report, indent=1, default=_json_default) + "\n"
        )
    return report


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--fold", action="append", default=[], help="extra fold: labels fitted, joined by +"
    )
    ap.add_argument(
        "--method",
        choices=("laplace", "mcmc"),
        default="laplace",
        help="laplace: mode + Student-t proposal + PSIS weights (default); mcmc: DE-MCMC",
    )
    ap.add_argument("--steps", type=int, default=1500, help="MCMC steps kept (0: MAP only)")
    ap.add_argument("--burn", type=int, default=1000, help="MCMC burn-in steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", action="append", default=[], help="run only the folds of these names")
    ap.add_argument(
        "--pipeline",
        action="store_true",
        help="fit with mpiuq's campaign pipeline and score through its [validation]",
    )
    ap.add_argument(
        "--sampler",
        choices=("surrogate", "direct", "auto", "campaign"),
        default="surrogate",
        help="--pipeline: posterior path (campaign: the file's [posterior] sampler)",
    )
    ap.add_argument(
        "--holdout",
        action="append",
        type=parse_holdout,
        default=[],
        help="--pipeline: SERIES or SERIES:MIN-MAX held out (repeatable)",
    )
    ap.add_argument(
        "--loso", action="store_true", help="--pipeline: hold out each fitted series in turn"
    )
    ap.add_argument("--tag", default=None, help="suffix of the JSON file name")
    ap.add_argument(
        "--from-results",
        type=Path,
        default=None,
        help="score fold 'all' with the posterior draws of this results folder (no fit)",
    )
    ap.add_argument(
        "--at-medians",
        type=Path,
        nargs="+",
        default=None,
        help="simulate every series at the posterior median of these results folders",
    )
    a = ap.parse_args()
    if a.at_medians:
        at_medians(a.campaign, a.at_medians)
        return
    if a.from_results is not None:
        run_from_results(a.campaign, a.from_results, a.out, a.seed)
        return
    if a.pipeline:
        run_pipeline(a.campaign, a.out, a.holdout, a.sampler, a.loso, a.tag)
        return
    run(a.campaign, a.out, a.fold, a.steps, a.burn, a.seed, a.method, a.only, a.tag)


if __name__ == "__main__":
    main()
