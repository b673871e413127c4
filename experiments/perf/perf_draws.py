"""Cost of replaying posterior draws against one replay, and Dask against in-process.

For each trace it times, in this process after loading the compiled loops from numba's
cache and the trace from the parse cache:

* one replay (``mpiuq.simulator.replay.run.replay``: lowering + one simulation, analytic model);
* ``--draws`` posterior draws of ``--params`` (``replay_draws``: one lowering, the kernel's
  batch path), in process, and with ``--workers N`` through N local worker processes;

and prints the ratio draws / one replay (target: 64 draws of ti_lulesh_512r at most 10x).
``--commands`` also times the user's view, whole ``mpiuq replay`` commands in fresh
processes (trace from the parse cache): ``--estimate median`` (one replay) against
``--draws N`` (the same command over the posterior).
With ``--dask`` it replays the same draws through a Dask LocalCluster on loopback
(127.0.0.1, TCP, 2 worker processes) and prints whether every result is identical to
the in-process one. Best of ``--repeat`` runs per figure (this machine is shared).

Usage::

    python experiments/perf/perf_draws.py [--traces ti_lulesh_512r,...] [--draws 64]
        [--params results/stampede-ib] [--repeat 3] [--workers 2] [--dask]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "traces"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="ti_lulesh_512r")
    ap.add_argument("--draws", type=int, default=64)
    ap.add_argument("--params", type=Path, default=ROOT / "results" / "stampede-ib")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--dask", action="store_true")
    ap.add_argument("--commands", action="store_true")
    args = ap.parse_args()

    from mpiuq.calibration.reporting.calibrated import load_posterior_draws
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay.draws import replay_draws
    from mpiuq.simulator.replay.run import ReplaySetup, replay
    from mpiuq.simulator.trace import read_trace
    from mpiuq.surrogate.executors import DaskExecutor, ProcessExecutor

    draws = load_posterior_draws(args.params, args.draws, seed=0)
    sets = [SimParams.from_mapping(draws.mapping(k)) for k in range(args.draws)]
    setup = ReplaySetup(models=("analytic",))
    warm = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=1))
    replay(warm, sets[0], setup)
    replay_draws(warm, sets[:2], setup)  # numba cache -> memory for both paths

    print(f"{args.draws} posterior draws of {draws.source}; analytic model; best of {args.repeat}")
    for name in args.traces.split(","):
        trace_dir = DATA / name
        if not trace_dir.is_dir():
            print(f"{name}: not found in {DATA}, skipped")
            continue
        trace = read_trace(trace_dir)

        one = best(partial(replay, trace, sets[0], setup), args.repeat)
        many = best(partial(replay_draws, trace, sets, setup), args.repeat)
        print(
            f"{name}: one replay (lower + simulate) {one:.2f} s; {args.draws} draws in process "
            f"{many:.2f} s = {many / one:.1f}x one replay "
            f"({many / args.draws * 1e3:.0f} ms per draw)"
        )
        if args.workers > 1:
            with ProcessExecutor(args.workers) as ex:
                replay_draws(trace, sets[:2], setup, executor=ex, chunks=args.workers)  # warm
                par = best(
                    partial(replay_draws, trace, sets, setup, executor=ex, chunks=args.workers),
                    args.repeat,
                )
            print(
                f"  {args.workers} worker processes: {par:.2f} s = {par / one:.1f}x one replay "
                "(pool already started; the lowered program is shipped once per chunk)"
            )
        if args.commands:
            base = ["mpiuq", "replay", str(trace_dir), "--model", "analytic"]
            base += ["--params", str(args.params)]
            one_cmd = best(partial(_command, [*base, "--estimate", "median"]), args.repeat)
            many_cmd = best(partial(_command, [*base, "--draws", str(args.draws)]), args.repeat)
            print(
                f"  commands: 'mpiuq replay ... --estimate median' {one_cmd:.2f} s; "
                f"'--draws {args.draws}' {many_cmd:.2f} s = {many_cmd / one_cmd:.1f}x"
            )
        if args.dask:
            local = replay_draws(trace, sets, setup).models[0]
            with DaskExecutor(workers=2) as ex:
                remote = replay_draws(trace, sets, setup, executor=ex, chunks=2).models[0]
            same = (
                np.array_equal(local.simulated_time_s, remote.simulated_time_s)
                and np.array_equal(local.parts_s, remote.parts_s)
                and np.array_equal(local.per_call_s, remote.per_call_s)
            )
            print(
                f"  Dask LocalCluster on loopback (2 worker processes): results "
                f"{'identical' if same else 'DIFFERENT'} to in-process "
                f"(simulated time {local.simulated_time_s.mean():.6g} s mean over draws)"
            )


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn``, seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _command(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


if __name__ == "__main__":
    main()
