"""The issue-15 replay streamed end to end, as a whole process: block lowering into a program
file, then the windowed kernel, never the trace or the program in memory.

``mpiuq trace synth halo3d --ranks R --iterations I --out $SCRATCH/halo.h5`` (its own
process), then in a fresh process: the trace's origin (rank offsets and calls, read
from the HDF5 columns), ``lower_trace_blocks`` into ``$SCRATCH/halo.mpiuqprog``, and
``replay_lowered`` of a ``FileLowering`` of it with the models ``--models`` (in
``--threads`` threads, windows of ``--window`` rows per rank). Prints the wall time of
each step and of each model, the whole process's peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and the load average. This is the path
``mpiuq replay`` does not take yet (it lowers into memory).

Usage::

    python experiments/perf/perf_stream_replay.py --scratch DIR [--ranks 16384]
        [--iterations 40] [--models packet,analytic,compute-only] [--threads 2]
        [--window 256] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def child(args: argparse.Namespace, h5: Path) -> None:
    import numpy as np

    from mpiuq.simulator.lowering.blocks import lower_trace_blocks
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.program.file import ProgramFile
    from mpiuq.simulator.replay.run import ReplayProgress, ReplaySetup, TraceOrigin, replay_lowered
    from mpiuq.simulator.replay.windowed import FileLowering
    from mpiuq.simulator.trace.cache.h5_reader import open_trace_h5, read_column

    t0 = time.perf_counter()
    params = SimParams()
    setup = ReplaySetup(models=tuple(args.models.split(",")))
    with open_trace_h5(h5) as head:
        origin = TraceOrigin(
            source=head.source,
            format=head.format,
            n_ranks=head.n_ranks,
            n_ops=head.n_ops,
            rank_ptr=np.asarray(read_column(head, "rank_ptr", 0, head.n_ranks + 1), np.int64),
            call=read_column(head, "call", 0, head.n_ops),
            call_names=tuple(head.call_names),
            unsupported=dict(head.unsupported),
            notes=tuple(head.notes),
        )
    t_origin = time.perf_counter() - t0
    out = h5.with_suffix(".mpiuqprog")
    t1 = time.perf_counter()
    written = lower_trace_blocks(h5, setup.lowering_options(params), out)
    t_lower = time.perf_counter() - t1
    walls: dict[str, float] = {}

    def report(p: ReplayProgress) -> None:
        if p.done >= 1.0 and p.stage != "lowering":
            walls[p.stage] = p.elapsed_s

    t2 = time.perf_counter()
    with ProgramFile.open(written.path) as pf:
        res = replay_lowered(
            origin,
            FileLowering(pf),
            params,
            setup,
            on_progress=report,
            threads=args.threads,
            window_rows=args.window,
        )
    t_replay = time.perf_counter() - t2
    if not args.keep:
        shutil.rmtree(written.path)
    print(
        json.dumps(
            {
                "origin_s": t_origin,
                "lowering_s": t_lower,
                "replay_s": t_replay,
                "total_s": time.perf_counter() - t0,
                "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "rows": written.n_ops,
                "models": {
                    m.model: {"events": m.events, "wall_s": walls.get(m.model, m.wall_s)}
                    for m in res.models
                },
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, required=True)
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--models", default="packet,analytic,compute-only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--child", type=Path)
    args = ap.parse_args()
    if args.child:
        child(args, args.child)
        return
    args.scratch.mkdir(parents=True, exist_ok=True)
    h5 = args.scratch / f"halo_{args.ranks}r_{args.iterations}i.h5"
    if not h5.exists():
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "mpiuq", "trace", "synth", "halo3d"]
        cmd += ["--ranks", str(args.ranks), "--iterations", str(args.iterations)]
        subprocess.run([*cmd, "--out", str(h5)], check=True, capture_output=True)
        print(f"synthesis {time.perf_counter() - t0:.1f} s -> {h5}")
    load = os.getloadavg()[0]
    cmd = [sys.executable, __file__, "--scratch", str(args.scratch), "--child", str(h5)]
    cmd += ["--models", args.models, "--threads", str(args.threads), "--window", str(args.window)]
    if args.keep:
        cmd.append("--keep")
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"streamed replay of {r['rows']} program rows: {wall:.1f} s as a process "
        f"(origin {r['origin_s']:.1f} s, block lowering {r['lowering_s']:.1f} s, "
        f"replay {r['replay_s']:.1f} s), peak RSS {r['peak_bytes'] / 2**30:.2f} GiB "
        f"({r['peak_bytes'] / 1e9:.2f} GB); load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after"
    )
    for name, m in r["models"].items():
        print(f"  {name}: {m['events']} events, {m['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
