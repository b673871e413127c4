"""Is the campaign's exact posterior stationary under the simulator's Metropolis kernel?

Usage (from the repository root)::

    python experiments/validate_exact_posterior.py [--campaign experiments/stampede-ib.toml]
                                                    [--steps 200] [--out DIR]

Runs the campaign, then moves its final draws ``--steps`` more differential-evolution
Metropolis steps on the simulator's posterior (10x the stock ``exact.move_steps``) and
prints, per parameter, how far the median moved (in posterior sd) and the 5%/95%
quantiles before and after. Shifts of about 0.1 sd or less (the Monte Carlo error of
2,000 correlated draws) mean the importance weights and the stock moves already
delivered the simulator's posterior.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from mpiuq.calibration.campaign import run_campaign
from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.exact import de_moves

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Run the campaign and the extra moves; print the shifts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaign", type=Path, default=ROOT / "experiments" / "stampede-ib.toml")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="validate_exact_") if args.out is None else None
    out = Path(tmp.name) if tmp is not None else args.out
    result = run_campaign(load_campaign(args.campaign), out)
    v = result.main
    before = v.exact.draws
    t0 = time.perf_counter()
    after, _f, _ll, stats = de_moves(
        v.problem.log_posterior(),
        before.copy(),
        v.exact.outputs.copy(),
        v.exact.loglik.copy(),
        args.steps,
        np.random.default_rng(12345),
    )
    print(
        f"{args.steps} further moves of {before.shape[0]} draws on the simulator's posterior: "
        f"{time.perf_counter() - t0:.1f} s, acceptance {stats.acceptance:.2f}"
    )
    sd = before.std(axis=0)
    for j, name in enumerate(v.problem.names):
        q0 = np.quantile(before[:, j], [0.05, 0.5, 0.95])
        q1 = np.quantile(after[:, j], [0.05, 0.5, 0.95])
        print(
            f"  {name:<24} median shift {abs(q1[1] - q0[1]) / sd[j]:.3f} sd; 5%/95% "
            f"{q0[0]:.4g}/{q0[2]:.4g} -> {q1[0]:.4g}/{q1[2]:.4g}"
        )
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
