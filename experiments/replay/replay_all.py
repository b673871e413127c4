"""Replay every trace in ../shared/data/traces with every network model; print one row per run.

Usage: python experiments/replay/replay_all.py [--compute-scale 0.1] [--models analytic,...]

Traces that cannot be replayed print the reason (e.g. partial single-rank DUMPI files).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mpiuq.simulator.errors import SimulatorError
from mpiuq.simulator.replay.run import ReplaySetup, replay
from mpiuq.simulator.trace import read_trace

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"


def trace_paths(root: Path) -> list[Path]:
    """One entry per trace set: the as-recorded index of TI sets, else the directory."""
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        if d.name == "ti_simgrid_replay_examples":  # one trace per file, plus one split trace
            out += [*sorted(f for f in d.glob("actions_*.txt")), d / "split_traces"]
            continue
        if d.name.startswith("dumpi_anacinx"):  # two runs of the same program
            out += sorted(p for p in d.iterdir() if p.is_dir())
            continue
        if d.name.startswith("dumpi_designforward"):
            out += sorted(d.glob("*.meta")) or sorted(d.glob("*.bin"))
            continue
        index = [f for f in d.glob("*.txt") if not f.name.endswith("_replayable.txt")]
        out.append(index[0] if d.name.startswith("ti_") and len(index) == 1 else d)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--compute-scale", type=float, default=1.0)
    ap.add_argument("--models", default="analytic,compute-only,packet")
    args = ap.parse_args()
    setup = ReplaySetup(models=tuple(args.models.split(",")), compute_scale=args.compute_scale)
    print(
        f"{'trace':<58}{'ranks':>6}{'ops':>9}  {'model':<13}{'sim s':>11}{'events':>9}"
        f"{'lower s':>8}{'sim wall s':>11}  compute/network/stack/sync share"
    )
    for path in trace_paths(TRACES):
        name = str(path.relative_to(TRACES))
        try:
            trace = read_trace(path)
            t0 = time.perf_counter()
            res = replay(trace, setup=setup)
        except (SimulatorError, ValueError) as exc:
            print(f"{name:<58} FAILED: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        for m in res.models:
            d = m.decomposition
            tot = d.total_s or 1.0
            shares = "/".join(f"{100 * v / tot:.1f}" for v in d.as_dict().values())
            warn = f"  UNMATCHED {m.n_unmatched}" if m.n_unmatched else ""
            print(
                f"{name:<58}{res.n_ranks:>6}{res.n_trace_ops:>9}  {m.model:<13}"
                f"{m.simulated_time_s:>11.5g}{m.events:>9}{res.lowering_s:>8.2f}{m.wall_s:>11.2f}"
                f"  {shares}{warn}"
            )
        del t0


if __name__ == "__main__":
    main()
