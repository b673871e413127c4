"""Long direct MCMC on a campaign's simulator posterior, and the campaign's posterior against it.

Usage (from the repository root)::

    python experiments/checks/posterior_reference.py reference [--case main|inj|link|all]
    python experiments/checks/posterior_reference.py compare   [--case ...]
    python experiments/checks/posterior_reference.py figures
    # any campaign (e.g. one kept outside the repository), results in --results:
    python experiments/checks/posterior_reference.py reference --campaign C.toml --results DIR
    python experiments/checks/posterior_reference.py compare   --campaign C.toml --results DIR

``reference`` runs plain emcee (differential-evolution 80% + snooker 20% moves, the
library's own implementation; no symmetry folding, no surrogate) directly on the
campaign's log-posterior with the simulator as predictor
(:func:`mpiuq.calibration.target.simulator_problem`), four independent ensembles started
in a small ball around a MAP found by scipy's Powell search from the best of 20,000 prior
draws. It runs blocks of steps until every parameter's effective sample size (emcee's
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
truths of tests/test_campaign_blind_recovery_stock.py (injection or link bandwidth the
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
SIZES = (
    1,
    3,
    7,
    20,
    54,
    146,
    158,
    400,
    1054,
    2593,
    6798,
    17107,
    17498,
    39686,
    87444,
    197051,
    440936,
    989921,
)
TRUTHS = {
    "inj": {
        "injection_bw_GBps": 5.5,
        "link_bw_GBps": 7.0,
        "memory_bw_GBps": 8.0,
        "post_header_delay_us": 0.6,
        "post_rdma_delay_us": 1.5,
        "rdma_pin_latency_us": 3.0,
        "rdma_pin_per_page_ns": 20.0,
    },
    "link": {
        "injection_bw_GBps": 7.5,
        "link_bw_GBps": 4.0,
        "memory_bw_GBps": 18.0,
        "post_header_delay_us": 1.8,
        "post_rdma_delay_us": 0.3,
        "rdma_pin_latency_us": 6.0,
        "rdma_pin_per_page_ns": 70.0,
    },
}
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


def target_of(path: Path, threads: int = 2) -> tuple[Any, Any]:
    """The campaign's simulator log-posterior (all parameters) and its problem."""
    from mpiuq.calibration.campaign import discrepancy_for, model_for, observations_for
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.target import simulator_problem

    campaign = load_campaign(path)
    obs = observations_for(campaign)
    model = model_for(campaign, obs, threads)
    problem = simulator_problem(campaign, obs, model, discrepancy_for(campaign, obs))
    return problem.log_posterior(), problem


# --- reference ----------------------------------------------------------------------------


def _map(log_post: Any, lo: np.ndarray, hi: np.ndarray, rng: Any) -> np.ndarray:
    from scipy.optimize import minimize

    x = rng.uniform(lo, hi, size=(20000, lo.size))
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


def _ball(x_map: np.ndarray, lo: np.ndarray, hi: np.ndarray, walkers: int, rng: Any) -> np.ndarray:
    ball = x_map + 1e-4 * (hi - lo) * rng.standard_normal((walkers, lo.size))
    return np.clip(ball, lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))


def run_reference(path: Path, out: Path, args: argparse.Namespace) -> None:
    """Plain emcee on the simulator posterior until the ESS target; store draws and stats."""
    import logging

    import emcee

    logging.getLogger("emcee").setLevel(logging.ERROR)  # short-chain notes while it grows
    log_post, problem = target_of(path)
    names = list(problem.names)
    lo, hi = problem.lower, problem.upper
    dim = lo.size
    rng = np.random.default_rng(args.seed)
    samplers = []
    states = []
    t0 = time.perf_counter()
    x_map = _map(log_post, lo, hi, rng)
    print(f"MAP search: {time.perf_counter() - t0:.0f} s", flush=True)
    for _ in range(args.ensembles):
        moves = [(emcee.moves.DEMove(), 0.8), (emcee.moves.DESnookerMove(), 0.2)]
        s = emcee.EnsembleSampler(args.walkers, dim, log_post, vectorize=True, moves=moves)
        s.random_state = np.random.RandomState(int(rng.integers(2**31 - 1))).get_state()
        samplers.append(s)
        states.append(_ball(x_map, lo, hi, args.walkers, rng))
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
    kept = chain[:, ::thin].reshape(-1, dim)
    if kept.shape[0] > args.keep:
        kept = kept[np.linspace(0, kept.shape[0] - 1, args.keep).round().astype(int)]
    flat = chain.reshape(-1, dim)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "reference.npz", draws=kept.astype(np.float32), names=np.array(names))
    stats = {
        "campaign": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
        "sampler": "emcee 3 EnsembleSampler, DEMove 0.8 + DESnookerMove 0.2, vectorize=True",
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
    ap.add_argument("--keep", type=int, default=10000, help="thinned reference draws stored")
    ap.add_argument("--seed", type=int, default=20261127)
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
    """Placeholder until the comparison lands (next commit)."""
    raise SystemExit("compare: not implemented yet")


def write_table(results: Path) -> None:
    """Placeholder until the comparison lands (next commit)."""


def figures(results: Path) -> None:
    """Placeholder until the comparison lands (next commit)."""


if __name__ == "__main__":
    sys.exit(main())
