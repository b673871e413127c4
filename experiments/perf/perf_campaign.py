"""Time every stage of the stampede-ib campaign (the README's main job).

Usage (from the repository root)::

    python experiments/perf/perf_campaign.py [--campaign experiments/stampede-ib.toml]
                                             [--out DIR] [--workers N]

Runs the whole campaign from scratch in a fresh folder (a temporary one unless ``--out``
is given; an existing ``design.h5`` there is reused, as ``mpiuq campaign run`` would),
writes the figures as the CLI does, and prints the wall time of each stage. Target: the
whole job in 2 minutes or less on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.pipeline.campaign import CampaignProgress, run_campaign
from mpiuq.calibration.reporting.artefacts import write_result_files
from mpiuq.plots.campaign import write_figures
from mpiuq.surrogate.executors import make_executor

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    """Run and time the campaign; prints one line per stage."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaign", type=Path, default=ROOT / "experiments" / "stampede-ib.toml")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--profile", action="store_true", help="print the 15 costliest functions")
    args = ap.parse_args()
    campaign = load_campaign(args.campaign)
    tmp = tempfile.TemporaryDirectory(prefix="perf_campaign_") if args.out is None else None
    out = Path(tmp.name) if tmp is not None else args.out
    blocks: dict[str, int] = {}

    def on_progress(p: CampaignProgress) -> None:
        blocks[p.stage] = blocks.get(p.stage, 0) + 1

    load_before = os.getloadavg()
    executor = make_executor(args.workers, None)
    prof = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    try:
        if prof is not None:
            prof.enable()
        result = run_campaign(campaign, out, executor=executor, on_progress=on_progress)
        t_files = time.perf_counter()
        write_result_files(result, out)
        t_plots = time.perf_counter()
        write_figures(result, out)
        t_end = time.perf_counter()
        if prof is not None:
            prof.disable()
    finally:
        executor.close()
    load = os.getloadavg()
    print(
        f"campaign {campaign.name}: {result.surrogate.train_x.shape[0]} design points x "
        f"{result.observations.sizes_bytes.size} sizes, {result.surrogate.n_terms} PCE terms, "
        f"{len(result.grouping.groups)} groups, converged={result.posterior.converged}; "
        f"load average before/after {load_before[0]:.2f}/{load[0]:.2f} on {os.cpu_count()} CPUs"
    )
    for stage, seconds in result.timings_s:
        print(f"  {stage:<30}{seconds:8.2f} s")
    print(f"  {'result files':<30}{t_plots - t_files:8.2f} s")
    print(f"  {'plots':<30}{t_end - t_plots:8.2f} s")
    print(f"  {'total':<30}{t_end - t0:8.2f} s   (target <= 120 s)")
    for g, gp in enumerate(result.posterior.groups):
        print(
            f"  grouped {g}: {gp.samples.total_steps} steps x {campaign.calibration.ensembles} "
            f"ensembles x {campaign.calibration.walkers} walkers"
        )
    for v in (result.main, *result.alternatives):
        rounds = [f"{r.n_design} pts -> {r.check.worst_sd:.2g} sd" for r in v.proposal.rounds]
        steps = v.proposal.posterior.groups[0].samples.total_steps
        w = v.exact.weights
        print(
            f"  {v.name}: refinement [{'; '.join(rounds)}], final MCMC {steps} steps, "
            f"IS k-hat {w.khat if w else float('nan'):.2f} ESS {w.ess if w else 0:.0f}"
        )
    if prof is not None:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(15)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
