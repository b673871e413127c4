"""Whole-process replay with the flow model against SimGrid's, on the same platform.

For each trace (default ``ti_lulesh_512r``) and SimGrid platform (default the fat-tree
``experiments/simgrid_refs/platforms/cluster_fattree.xml``, ranks on ``node-r``), it
runs, each command as its own process, started the way a user starts it:

* ``mpiuq replay TRACE --platform P --hostfile H --like simgrid --quiet`` (the flow model
  with SimGrid's semantics), **first run**: an empty trace cache (a fresh
  ``MPIUQ_CACHE_DIR``), so the text trace is parsed; the compiled loops come from
  numba's cache (warmed once before timing);
* the same command again, **second run**: the lowered program from the program cache;
* SimGrid 3.32 ``smpirun -np N -platform P -hostfile H -replay INDEX smpireplaymain`` on
  the trace's SimGrid-replayable variant (decompressed beforehand, as SimGrid needs).

Wall time (interpreter start included), CPU time and peak RSS of each process are
measured by a wrapper interpreter (``perf_whole_process.mpiuq_run``). Runs are paired: per
repetition the three commands run back to back; best of ``--repeat`` per column
(median in brackets), and the speed-ups SimGrid wall / mpiuq wall. Prints the table and
both simulated times.

Usage::

    python experiments/perf/perf_flow_whole_process.py [--traces ti_lulesh_512r]
        [--platform fattree] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simgrid_refs"))
from perf_replay import DATA, compile_bytecode, index_of
from perf_whole_process import cell, mpiuq_run
from record import record_shared

REFS = Path(__file__).resolve().parents[1] / "simgrid_refs"


def flow_run(trace: Path, platform: str, cache_dir: Path, env: dict[str, str]) -> dict[str, float]:
    """``mpiuq replay TRACE --model flow --platform P --hostfile H --like simgrid -q``."""
    options = (
        "--platform", str(REFS / "platforms" / f"cluster_{platform}.xml"),
        "--hostfile", str(REFS / "platforms" / "hostfile"), "--like", "simgrid",
    )  # fmt: skip
    return mpiuq_run(trace, cache_dir, env, model="flow", options=options)


def simgrid_run(name: str, platform: str, timeout: float) -> dict[str, float]:
    """SimGrid's replay of the trace on the platform (wall of the whole ``smpirun``, the
    trace's files decompressed and copied beforehand)."""
    entry = record_shared(name, platform, timeout)
    return {"wall_s": float(entry["simgrid_wall_s"]), "simulated": float(entry["simulated_s"])}  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--traces", default="ti_lulesh_512r")
    ap.add_argument("--platform", default="fattree")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=7200.0)
    args = ap.parse_args()
    if shutil.which("smpirun") is None:
        raise SystemExit("smpirun not found (apt-get install simgrid)")
    env = dict(os.environ)
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} at start; "
        f"platform {args.platform}; each cell: best of {args.repeat} paired runs (median)"
    )
    print(f"bytecode: compiled beforehand in {', '.join(compile_bytecode())}")
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(args.traces.split(",")):
            trace = index_of(DATA / name, replayable=False)
            flow_run(trace, args.platform, Path(tmp) / f"warm-{k}", env)  # loops loaded once
            first, second, sg = [], [], []
            for i in range(args.repeat):
                cache = Path(tmp) / f"cache-{k}-{i}"
                first.append(flow_run(trace, args.platform, cache, env))
                second.append(flow_run(trace, args.platform, cache, env))
                sg.append(simgrid_run(name, args.platform, args.timeout))
            best_sg = min(r["wall_s"] for r in sg)
            print(f"{name} on {args.platform}:")
            print(f"  mpiuq first run : wall {cell(first, 'wall_s', '.2f')} s, CPU "
                  f"{cell(first, 'cpu_s', '.2f')} s, peak RSS {cell(first, 'maxrss_MiB', '.0f')} MiB")  # fmt: skip
            print(f"  mpiuq second run: wall {cell(second, 'wall_s', '.2f')} s, CPU "
                  f"{cell(second, 'cpu_s', '.2f')} s, peak RSS {cell(second, 'maxrss_MiB', '.0f')} MiB")  # fmt: skip
            print(f"  SimGrid         : wall {cell(sg, 'wall_s', '.2f')} s")
            print(
                f"  speed-up (SimGrid wall / mpiuq wall, best vs best): first run "
                f"{best_sg / min(r['wall_s'] for r in first):.1f}x, second run "
                f"{best_sg / min(r['wall_s'] for r in second):.1f}x"
            )
            print(
                f"  simulated time: mpiuq {first[0]['simulated']:.6g} s, SimGrid "
                f"{sg[0]['simulated']:.6g} s ({first[0]['simulated'] / sg[0]['simulated'] - 1:+.2%})"
            )


if __name__ == "__main__":
    main()
