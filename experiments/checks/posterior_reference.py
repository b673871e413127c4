"""Long direct MCMC on a campaign's simulator posterior, and the campaign's posterior against it.

Usage (from the repository root)::

    python experiments/checks/posterior_reference.py reference [--case main|inj|link|all]
    python experiments/checks/posterior_reference.py compare   [--case ...]
    python experiments/checks/posterior_reference.py figures
    # any campaign (e.g. one kept outside the repository), results in --results:
    python experiments/checks/posterior_reference.py reference --campaign C.toml --results DIR
    python experiments/checks/posterior_reference.py compare   --campaign C.toml --results DIR

``reference`` runs plain emcee (its differential-evolution move ``DEMove``; not its
``DESnookerMove``, which shrinks the target: see ``run_reference``; no surrogate, none of
the campaign's sampler code) directly
on the campaign's log-posterior with the simulator as predictor
(:func:`mpiuq.calibration.model.target.simulator_problem`), four independent ensembles started
in a small ball around a MAP found by scipy's Powell search from the best of 20,000 prior
draws. Parameters the campaign declares exchangeable (``[posterior] exchangeable``; its
run checks that swapping them leaves the outputs unchanged) are sampled in one order
(a constraint in this script's wrapper of the log-posterior) and every draw then gets a
random order; ``--no-fold`` samples them unordered, which mixes far more slowly across
the corner of the ``min(a, b)`` ridge (emcee's autocorrelation time for the bandwidths
620-680 steps against 120-180 ordered). Parameters whose prior starts at 0 (the discrepancy spreads, with long
upper tails: kurtosis up to 20) are sampled on the log scale with the Jacobian, a plain
change of variables here (``--linear`` turns it off: their autocorrelation time is then
about twice as long and the far tail is visited in rare excursions). It runs blocks of steps until every parameter's effective sample size (emcee's
integrated autocorrelation time per ensemble, summed over ensembles) reaches ``--ess``
(default 10,000; at least 2,000) and the post-burn chain is at least 50 autocorrelation
times long, and stores thinned draws (``reference.npz``) and statistics
(``reference.json``) under ``results/posterior_check/<case>/``. It is run once; the other
commands reuse the stored draws.

``compare`` runs the campaign itself (``mpiuq campaign run``'s pipeline, whatever posterior
path the campaign's ``[posterior]`` table selects), stores its draws, and compares per
parameter (mean and sd, 5/25/50/75/95% quantiles, all in reference sd) and jointly (the
multivariate energy distance of standardised draws with a permutation test), and
exchangeable parameters against each other. The rule of the check: every parameter's
mean within 0.1 reference sd and its sd within 10% of the reference.

Cases: ``main`` is experiments/stampede-ib.toml on the Stampede data; ``inj`` and
``link`` are the same campaign on synthetic ``mpiuq simulate --replicas`` data at the two
truths of tests/e2e/test_campaign_blind_recovery_stock.py (injection or link bandwidth the
bottleneck).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "posterior_check"
STOCK = ROOT / "experiments" / "stampede-ib.toml"


def _stock_truths() -> tuple[tuple[int, ...], dict[str, dict[str, float]]]:
    """The sizes and the two truths of tests/e2e/test_campaign_blind_recovery_stock.py."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "stock_truths", ROOT / "tests" / "e2e" / "test_campaign_blind_recovery_stock.py"
    )
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise SystemExit("tests/e2e/test_campaign_blind_recovery_stock.py not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    t = module.TRUTHS
    return module.SIZES, {"inj": t["inj-bottleneck"], "link": t["link-bottleneck"]}


SIZES, TRUTHS = _stock_truths()
CASES = ("main", "inj", "link")
#: Pass rule of the comparison.
MAX_MEAN_SHIFT_SD = 0.1
MAX_SD_RATIO_ERROR = 0.10


# --- cases --------------------------------------------------------------------------------


def synthetic_campaign(truth: dict[str, float], work: Path, name: str, seed: int = 3) -> Path:
    """Synthetic data at ``truth`` (40 replicas, 1% noise, 6% warm-up) and the stock campaign
    on them, written under ``work``; returns the campaign file."""
    from mpiuq.main import main

    work.mkdir(parents=True, exist_ok=True)
    args = ["simulate", "--benchmark", "pingpong", "--sizes", ",".join(map(str, SIZES))]
    args += [a for k, v in truth.items() for a in ("--param", f"{k}={v}")]
    args += ["--param", "eager_max_bytes=17408", "--param", "small_max_bytes=150"]
    args += ["--replicas", "40", "--noise-cv", "0.01", "--seed", str(seed)]
    args += ["--warmup-excess", "0.06", "--csv", str(work / "synthetic.csv")]
    if main(args) != 0:
        raise SystemExit(f"mpiuq simulate failed for {name}")
    text = STOCK.read_text()
    text = text.replace('name = "stampede-ib"', f'name = "{name}"')
    text = text.replace(
        'path = "data/simgrid_stampede_ib_mvapich2/data.csv"', 'path = "synthetic.csv"'
    )
    (work / "campaign.toml").write_text(text)
    return work / "campaign.toml"


def campaign_file(case: str, work: Path) -> Path:
    """The campaign file of a named case."""
    if case == "main":
        return STOCK
    return synthetic_campaign(TRUTHS[case], work / case, f"check-{case}")


# --- the target ---------------------------------------------------------------------------


def target_of(path: Path, threads: int = 2) -> tuple[Any, Any, list[list[int]]]:
    """The campaign's simulator log-posterior (all parameters), its problem and the column
    indices of its declared exchangeable groups."""
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.model.target import simulator_problem
    from mpiuq.calibration.pipeline.campaign import discrepancy_for, model_for, observations_for

    campaign = load_campaign(path)
    obs = observations_for(campaign)
    model = model_for(campaign, obs, threads)
    problem = simulator_problem(campaign, obs, model, discrepancy_for(campaign, obs))
    groups = [[problem.names.index(n) for n in g] for g in campaign.posterior.exchangeable]
    return problem.log_posterior(), problem, groups


# --- reference ----------------------------------------------------------------------------


def _map(
    log_post: Any, lo: np.ndarray, hi: np.ndarray, rng: Any, groups: list[list[int]]
) -> np.ndarray:
    from scipy.optimize import minimize

    x = rng.uniform(lo, hi, size=(20000, lo.size))
    for g in groups:
        x[:, g] = np.sort(x[:, g], axis=1)
    lp = log_post(x)
    best = x[np.argsort(lp)[::-1][:4]]
    ends = []
    for x0 in best:
        r = minimize(
            lambda v: -float(log_post(v[None])[0]),
            x0,
            method="Powell",
            bounds=list(zip(lo, hi, strict=True)),
            options={"maxfev": 3000},
        )
        ends.append((float(-r.fun), r.x))
    return np.asarray(max(ends, key=lambda e: e[0])[1], dtype=np.float64)


def _ball(
    x_map: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    walkers: int,
    rng: Any,
    groups: list[list[int]],
) -> np.ndarray:
    ball = x_map + 1e-4 * (hi - lo) * rng.standard_normal((walkers, lo.size))
    ball = np.clip(ball, lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))
    for g in groups:
        ball[:, g] = np.sort(ball[:, g], axis=1)
    return ball


def run_reference(path: Path, out: Path, args: argparse.Namespace) -> None:
    """Plain emcee on the simulator posterior until the ESS target; store draws and stats."""
    import logging

    import emcee

    logging.getLogger("emcee").setLevel(logging.ERROR)  # short-chain notes while it grows
    campaign_log_post, problem, groups = target_of(path)
    if args.no_fold:
        groups = []

    # zero-bounded parameters (discrepancy spreads) on the log scale unless --linear:
    # v = log(x), density p(exp(v)) exp(v)
    logs = np.flatnonzero(problem.lower == 0.0) if args.log_scale else np.zeros(0, dtype=int)

    def to_x(v: np.ndarray) -> np.ndarray:
        x = np.array(v, dtype=np.float64)
        x[..., logs] = np.exp(x[..., logs])
        return x

    def log_post(v: np.ndarray) -> np.ndarray:
        # exchangeable groups (declared by the campaign and swap-checked by its run): the
        # posterior restricted to one ordering, symmetrised at the end (plain numpy here)
        v = np.atleast_2d(v)
        x = to_x(v)
        ok = np.ones(x.shape[0], dtype=bool)
        for g in groups:
            ok &= np.all(np.diff(x[:, g], axis=1) >= 0.0, axis=1)
        out = np.full(x.shape[0], -np.inf)
        if ok.any():
            out[ok] = campaign_log_post(x[ok]) + v[ok][:, logs].sum(axis=1)
        return out

    names = list(problem.names)
    lo, hi = problem.lower, problem.upper
    dim = lo.size
    rng = np.random.default_rng(args.seed)
    samplers = []
    states = []
    t0 = time.perf_counter()
    lo_v, hi_v = lo.copy(), hi.copy()
    lo_v[logs], hi_v[logs] = np.log(1e-6 * hi[logs]), np.log(hi[logs])
    x_map = _map(log_post, lo_v, hi_v, rng, groups)
    print(f"MAP search: {time.perf_counter() - t0:.0f} s", flush=True)
    for _ in range(args.ensembles):
        # emcee's own DEMove only: its DESnookerMove (emcee 3.1.6) does not keep the target
        # invariant (alone on a 10-D target of 9 standard normals and a log-normal it gave
        # sds of 0.79 and 0.53 instead of 1 and 1.30), so it is not used here
        moves = [(emcee.moves.DEMove(), 1.0)]
        s = emcee.EnsembleSampler(args.walkers, dim, log_post, vectorize=True, moves=moves)
        s.random_state = np.random.RandomState(int(rng.integers(2**31 - 1))).get_state()
        samplers.append(s)
        states.append(_ball(x_map, lo_v, hi_v, args.walkers, rng, groups))
    burn = args.burn
    steps = 0
    while True:
        block = burn + args.block if steps == 0 else args.block
        for k, s in enumerate(samplers):
            states[k] = s.run_mcmc(states[k], block, progress=False)
        steps += block
        chain = np.stack([s.get_chain(discard=burn) for s in samplers])  # (K, n, W, d)
        n = chain.shape[1]
        tau = np.array(
            [
                [
                    emcee.autocorr.integrated_time(chain[k, :, :, j], quiet=True)[0]
                    for j in range(dim)
                ]
                for k in range(len(samplers))
            ]
        )
        ess = (n * args.walkers / tau).sum(axis=0)
        print(
            f"{steps} steps, {time.perf_counter() - t0:.0f} s: min ESS {ess.min():.0f}, "
            f"max tau {tau.max():.1f}",
            flush=True,
        )
        if (ess.min() >= args.ess and n >= 50 * tau.max()) or steps >= args.max_steps:
            break
    acc = [float(np.mean(s.acceptance_fraction)) for s in samplers]
    thin = max(1, int(np.ceil(tau.max() / 2)))
    chain = to_x(chain)
    flat = chain.reshape(-1, dim).copy()
    for g in groups:  # a uniformly random order of every group's values in every draw
        perm = np.argsort(rng.random((flat.shape[0], len(g))), axis=1)
        flat[:, g] = np.take_along_axis(flat[:, g], perm, axis=1)
    chain = flat.reshape(chain.shape)
    kept = chain[:, ::thin].reshape(-1, dim)
    if kept.shape[0] > args.keep:
        kept = kept[np.linspace(0, kept.shape[0] - 1, args.keep).round().astype(int)]
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "reference.npz", draws=kept.astype(np.float32), names=np.array(names))
    stats = {
        "campaign": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
        "sampler": "emcee 3 EnsembleSampler, DEMove, vectorize=True",
        "folded": [[names[j] for j in g] for g in groups],
        "log_scale": [names[j] for j in logs],
        "ensembles": args.ensembles,
        "walkers": args.walkers,
        "burn": burn,
        "steps": steps,
        "evaluations": int(steps * args.walkers * args.ensembles),
        "seconds": round(time.perf_counter() - t0, 1),
        "acceptance": acc,
        "thin": thin,
        "parameters": {
            nm: {
                "mean": float(flat[:, j].mean()),
                "sd": float(flat[:, j].std(ddof=1)),
                "quantiles": {
                    str(q): float(v)
                    for q, v in zip(
                        (5, 25, 50, 75, 95),
                        np.percentile(flat[:, j], [5, 25, 50, 75, 95]),
                        strict=True,
                    )
                },
                "ess": float(ess[j]),
                "tau_steps": float(tau[:, j].max()),
            }
            for j, nm in enumerate(names)
        },
    }
    (out / "reference.json").write_text(json.dumps(stats, indent=1))
    print(f"reference stored in {out}", flush=True)


# --- entry point --------------------------------------------------------------------------


def main() -> int:
    """Run the chosen command for the chosen cases."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("reference", "compare", "figures"))
    ap.add_argument("--case", default="all", choices=(*CASES, "all"))
    ap.add_argument("--campaign", type=Path, help="any campaign file instead of --case")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--work", type=Path, default=None, help="folder for synthetic data and runs")
    ap.add_argument("--ensembles", type=int, default=4)
    ap.add_argument("--walkers", type=int, default=40)
    ap.add_argument("--burn", type=int, default=2000)
    ap.add_argument("--block", type=int, default=2000)
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--ess", type=float, default=10000.0)
    ap.add_argument("--keep", type=int, default=4000, help="thinned reference draws stored")
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument(
        "--linear",
        dest="log_scale",
        action="store_false",
        help="sample parameters whose prior starts at 0 on their own scale (default: log "
        "scale, which mixes their long upper tails far better)",
    )
    ap.add_argument(
        "--no-fold",
        action="store_true",
        help="sample exchangeable parameters unordered (both mirror images) as well",
    )
    args = ap.parse_args()
    if args.ess < 2000:
        ap.error("--ess must be at least 2000")
    tmp = tempfile.TemporaryDirectory(prefix="posterior_check_") if args.work is None else None
    work = Path(tmp.name) if tmp is not None else args.work
    if args.campaign is not None:
        cases = [(args.campaign.stem, args.campaign.resolve())]
    else:
        names = CASES if args.case == "all" else (args.case,)
        cases = [(c, campaign_file(c, work)) for c in names]
    for case, path in cases:
        out = args.results / case
        if args.command == "reference":
            run_reference(path, out, args)
        elif args.command == "compare":
            compare_case(case, path, out, work)
    if args.command in ("compare", "figures"):
        write_table(args.results)
        figures(args.results)
    return 0


def compare_case(case: str, path: Path, out: Path, work: Path) -> None:
    """Run the campaign, store its draws and write ``comparison.json`` against the reference."""
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.pipeline.campaign import run_campaign

    ref_file = out / "reference.npz"
    if not ref_file.exists():
        raise SystemExit(f"no reference for {case}: run the 'reference' command first")
    t0 = time.perf_counter()
    result = run_campaign(load_campaign(path), work / case / "run")
    seconds = time.perf_counter() - t0
    v = result.main
    names = list(v.problem.names)
    np.savez_compressed(
        out / "campaign.npz", draws=v.exact.draws.astype(np.float32), names=np.array(names)
    )
    checks = {c.name: c.passed for c in result.checks if c.severity == "fail"}
    d = v.direct
    run_info = {
        "path": result.path.path if result.path is not None else "surrogate",
        "reason": result.path.reason if result.path is not None else "",
        "exact_for_simulator": v.verified,
        "seconds": round(seconds, 1),
        "must_pass_checks": checks,
        "direct": None
        if d is None
        else {
            "steps": d.steps,
            "evaluations": d.evaluations,
            "max_rhat": float(np.max(d.rhat)),
            "min_ess_bulk": float(np.min(d.ess_bulk)),
            "min_ess_tail": float(np.min(d.ess_tail)),
            "ess_bulk": {n: float(e) for n, e in zip(names, d.ess_bulk, strict=True)},
        },
    }
    run_info["below_ref_q05"] = below_reference_q05(path, out / "reference.npz", v.exact.draws)
    (out / "campaign.json").write_text(json.dumps(run_info, indent=1))
    print(f"{case}: campaign ran in {seconds:.0f} s ({run_info['path']} path)", flush=True)


def below_reference_q05(path: Path, reference: Path, draws: np.ndarray) -> float:
    """Fraction of ``draws`` whose simulator log-posterior lies below the 5% quantile of
    the reference draws' (0.05 expected; more means too much mass in the tails)."""
    log_post, _, _ = target_of(path)
    ref = np.asarray(np.load(reference)["draws"], dtype=np.float64)
    cut = float(np.quantile(log_post(ref), 0.05))
    return float(np.mean(log_post(np.asarray(draws, dtype=np.float64)) < cut))


def _load(out: Path, which: str) -> tuple[np.ndarray, list[str]]:
    z = np.load(out / f"{which}.npz")
    return np.asarray(z["draws"], dtype=np.float64), [str(n) for n in z["names"]]


def energy_test(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n: int = 1000, perms: int = 300
) -> tuple[float, float]:
    """Multivariate energy distance of two samples (standardised by ``y``'s sd) and its
    permutation p-value, on ``n`` evenly spaced draws of each (nearly independent draws)."""
    from scipy.spatial.distance import cdist

    sd = y.std(axis=0)
    a = x[np.linspace(0, x.shape[0] - 1, n).round().astype(int)] / sd
    b = y[np.linspace(0, y.shape[0] - 1, n).round().astype(int)] / sd
    z = np.concatenate([a, b])
    dist = cdist(z, z)

    def stat(idx: np.ndarray) -> float:
        i, j = idx[:n], idx[n:]
        return float(
            2 * dist[np.ix_(i, j)].mean() - dist[np.ix_(i, i)].mean() - dist[np.ix_(j, j)].mean()
        )

    observed = stat(np.arange(2 * n))
    null = np.array([stat(rng.permutation(2 * n)) for _ in range(perms)])
    return observed, float((1 + np.sum(null >= observed)) / (1 + perms))


def compare_draws(out: Path) -> dict[str, Any]:
    """Per-parameter and joint comparison of the stored campaign and reference draws."""
    from scipy.stats import energy_distance, ks_2samp, kurtosis

    ref, names = _load(out, "reference")
    cam, names_c = _load(out, "campaign")
    campaign_info = json.loads((out / "campaign.json").read_text())
    if names != names_c:
        raise SystemExit(f"{out}: parameter names differ: {names} vs {names_c}")
    stats = json.loads((out / "reference.json").read_text())
    rows = {}
    ok = True
    for j, n in enumerate(names):
        r = stats["parameters"][n]  # the full reference chain's moments
        shift = (cam[:, j].mean() - r["mean"]) / r["sd"]
        ratio = cam[:, j].std(ddof=1) / r["sd"]
        q = np.percentile(cam[:, j], [5, 25, 50, 75, 95])
        qr = [r["quantiles"][k] for k in ("5", "25", "50", "75", "95")]
        passed = abs(shift) <= MAX_MEAN_SHIFT_SD and abs(ratio - 1) <= MAX_SD_RATIO_ERROR
        # Monte Carlo error of the sd ratio from both sides' ESS and the excess kurtosis
        # (se(sd) / sd = sqrt((kurtosis + 2) / (4 ESS)) for nearly independent draws)
        ess_c = (campaign_info.get("direct") or {}).get("ess_bulk", {}).get(n, float("nan"))
        kurt = float(kurtosis(ref[:, j]))
        se_ratio = float(np.sqrt((kurt + 2) / 4 * (1 / ess_c + 1 / r["ess"])))
        ok &= bool(passed)
        rows[n] = {
            "ref_mean": r["mean"],
            "ref_sd": r["sd"],
            "ref_ess": r["ess"],
            "mean": float(cam[:, j].mean()),
            "sd": float(cam[:, j].std(ddof=1)),
            "mean_shift_ref_sd": float(shift),
            "sd_ratio": float(ratio),
            "quantile_shift_ref_sd": [float((a - b) / r["sd"]) for a, b in zip(q, qr, strict=True)],
            "energy_distance_ref_sd": float(
                energy_distance(cam[:, j] / r["sd"], ref[:, j] / r["sd"])
            ),
            "kurtosis": kurt,
            "campaign_ess": ess_c,
            "sd_ratio_mc_se": se_ratio,
            "passed": bool(passed),
        }
    e, p = energy_test(cam, ref, np.random.default_rng(0))
    sym = []
    for c in _exchangeable_pairs(names):
        i, k = names.index(c[0]), names.index(c[1])
        for label, x in (("campaign", cam), ("reference", ref)):
            sd = 0.5 * (x[:, i].std() + x[:, k].std())
            sym.append(
                {
                    "draws": label,
                    "parameters": list(c),
                    "mean_diff_sd": float(abs(x[:, i].mean() - x[:, k].mean()) / sd),
                    "ks_p": float(ks_2samp(x[:, i], x[:, k]).pvalue),
                }
            )
    return {
        "rule": f"|mean shift| <= {MAX_MEAN_SHIFT_SD} reference sd and |sd ratio - 1| <= "
        f"{MAX_SD_RATIO_ERROR} for every parameter",
        "passed": bool(ok),
        "campaign": campaign_info,
        "reference": {k: v for k, v in stats.items() if k != "parameters"},
        "energy": {"statistic": e, "permutation_p": p, "n_each": 1000},
        "symmetry": sym,
        "parameters": rows,
    }


def _exchangeable_pairs(names: list[str]) -> list[tuple[str, str]]:
    pair = ("injection_bw_GBps", "link_bw_GBps")
    return [pair] if all(n in names for n in pair) else []


def write_table(results: Path) -> None:
    """``comparison.json`` per case and ``table.md`` over all cases with both draw sets."""
    lines = [
        "| case | path | parameter | ref mean | ref sd | ref ESS | campaign ESS | kurtosis "
        "| mean shift (ref sd) | sd ratio (MC se) | q05/q50/q95 shift (ref sd) | pass |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    tail = []
    for out in sorted(p for p in results.iterdir() if (p / "campaign.npz").exists()):
        if not (out / "reference.npz").exists():
            continue
        c = compare_draws(out)
        (out / "comparison.json").write_text(json.dumps(c, indent=1))
        for n, r in c["parameters"].items():
            q = r["quantile_shift_ref_sd"]
            lines.append(
                f"| {out.name} | {c['campaign']['path']} | {n} | {r['ref_mean']:.4g} | "
                f"{r['ref_sd']:.4g} | {r['ref_ess']:.0f} | {r['campaign_ess']:.0f} | "
                f"{r['kurtosis']:.1f} | {r['mean_shift_ref_sd']:+.3f} | "
                f"{r['sd_ratio']:.3f} ({r['sd_ratio_mc_se']:.3f}) | "
                f"{q[0]:+.2f}/{q[2]:+.2f}/{q[4]:+.2f} | "
                f"{'yes' if r['passed'] else 'NO'} |"
            )
        sym = "; ".join(
            f"{s['draws']}: {s['parameters'][0]} vs {s['parameters'][1]} means differ by "
            f"{s['mean_diff_sd']:.3f} sd, KS p = {s['ks_p']:.2g}"
            for s in c["symmetry"]
        )
        tail.append(
            f"- **{out.name}**: rule {'met' if c['passed'] else 'NOT met'}; joint energy "
            f"distance {c['energy']['statistic']:.4f}, permutation p = "
            f"{c['energy']['permutation_p']:.3f} (1,000 draws each, standardised); "
            + (
                f"{c['campaign']['below_ref_q05']:.3f} of the campaign's draws below the "
                "reference's 5% log-posterior quantile (0.05 expected); "
                if "below_ref_q05" in c["campaign"]
                else ""
            )
            + "campaign "
            f"{c['campaign']['seconds']} s on the {c['campaign']['path']} path, exact for the "
            f"simulator: {c['campaign']['exact_for_simulator']}; reference "
            f"{c['reference']['evaluations']} simulator runs" + (f"; {sym}" if sym else "")
        )
    text = "# Campaign posterior against a long direct MCMC\n\n"
    text += "Written by `experiments/checks/posterior_reference.py compare`.\n\n"
    (results / "table.md").write_text(text + "\n".join(lines) + "\n\n" + "\n".join(tail) + "\n")


def figures(results: Path) -> None:
    """One figure per case: every parameter's marginal, campaign against reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for out in sorted(p for p in results.iterdir() if (p / "comparison.json").exists()):
        ref, names = _load(out, "reference")
        cam, _ = _load(out, "campaign")
        c = json.loads((out / "comparison.json").read_text())
        cols = 5
        rows = -(-len(names) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.4 * rows))
        for j, (n, ax) in enumerate(zip(names, axes.ravel(), strict=False)):
            r = c["parameters"][n]
            lo, hi = np.percentile(ref[:, j], [0.2, 99.8])
            bins = np.linspace(lo, hi, 50)
            ax.hist(ref[:, j], bins=bins, density=True, color="0.6", label="reference")
            ax.hist(
                cam[:, j],
                bins=bins,
                density=True,
                histtype="step",
                color="tab:blue",
                lw=1.4,
                label="campaign",
            )
            ax.set_title(n, fontsize=8)
            ax.text(
                0.02,
                0.97,
                f"mean {r['mean_shift_ref_sd']:+.3f} sd\nsd x{r['sd_ratio']:.3f}",
                transform=ax.transAxes,
                va="top",
                fontsize=7,
                color="k" if r["passed"] else "red",
            )
            ax.tick_params(labelsize=6)
            ax.set_yticks([])
        for ax in axes.ravel()[len(names) :]:
            ax.set_visible(False)
        axes.ravel()[0].legend(fontsize=6, loc="upper right")
        fig.suptitle(
            f"{out.name}: campaign ({c['campaign']['path']} path) vs long direct MCMC; energy "
            f"test p = {c['energy']['permutation_p']:.3f}",
            fontsize=9,
        )
        fig.tight_layout()
        fig.savefig(out / "marginals.png", dpi=80)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
