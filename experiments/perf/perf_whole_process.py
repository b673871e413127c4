"""Whole-process replay as a user runs it: ``mpiuq replay`` against ``smpirun -replay``.

For each trace (default: ti_lulesh_512r, ti_nas_mg_A_256r, ti_nekbone_64r,
ti_comd_256r) it runs, one after the other in the same script, each command as its
own process, started the way a user starts it:

* ``mpiuq replay TRACE --model analytic --quiet``, **first run**: an empty trace
  cache (a fresh ``MPIUQ_CACHE_DIR``), so the text trace is parsed (and its lowered
  program stored in the program cache, written while the model runs); the compiled
  loops come from numba's cache (warmed once before timing; a new machine compiles
  them once, which ``--cold-numba`` measures separately);
* the same command again, **second run**: the trace's lowered program comes from the
  program cache (the trace is neither read nor lowered);
  in both, mpiuq's modules are byte-compiled beforehand, as ``pip install`` leaves
  them (an editable install run with ``PYTHONDONTWRITEBYTECODE=1``, as on the shared
  machine, would otherwise compile every module's source in every run: 0.2-0.7 s);
* SimGrid 3.32 ``smpirun -replay`` with ``smpireplaymain`` on the same platform (the
  command line of the trace README; files decompressed beforehand, as SimGrid needs).

mpiuq's loops load from numba's on-disk cache (compiled by the install; the first
run below warms it, in case a source changed since).

Each side's wall time (the whole process, interpreter start included), CPU time
(user + system of the process and its children) and peak resident memory are
measured in its own process (``resource.getrusage(RUSAGE_CHILDREN)`` in a wrapper
interpreter whose only child is the command), so no side inherits another's peak.
Runs are paired: for every repetition the three commands run back to back, and the
best of ``--repeat`` is shown per column (median in brackets). Prints the table.

Usage::

    python experiments/perf/perf_whole_process.py [--traces a,b,...] [--repeat 3]
        [--cold-numba]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_replay import _WRAPPER, DATA, compile_bytecode, index_of, simgrid

DEFAULT = ("ti_lulesh_512r", "ti_nas_mg_A_256r", "ti_nekbone_64r", "ti_comd_256r")


def mpiuq_run(
    trace: Path,
    cache_dir: Path,
    env: dict[str, str],
    mpiuq: str | None = None,
    model: str = "analytic",
    options: tuple[str, ...] = (),
) -> dict[str, float]:
    """``mpiuq replay TRACE --model MODEL [OPTIONS] -q`` in its own process: wall, CPU, peak
    RSS, and the model's simulated time, events and event-loop seconds (``mpiuq``: the
    console script, by default the one on the path)."""
    mpiuq = mpiuq or shutil.which("mpiuq") or "mpiuq"
    cmd = [mpiuq, "replay", str(trace), "--model", model, *options, "--quiet"]
    wrapper = [sys.executable, "-c", _WRAPPER, *cmd]
    t0 = time.perf_counter()
    proc = subprocess.run(
        wrapper,
        capture_output=True,
        text=True,
        check=False,
        env={**env, "MPIUQ_CACHE_DIR": str(cache_dir)},
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"mpiuq replay failed ({proc.returncode}): {proc.stderr[-800:]}")
    usage = json.loads(proc.stdout.strip().splitlines()[-1])
    sim = [ln for ln in proc.stdout.splitlines() if ln.startswith(model)]
    fields = sim[0].split() if sim else []
    return {
        "wall_s": wall,
        "cpu_s": usage["cpu_s"],
        "maxrss_MiB": usage["maxrss_KiB"] / 1024,
        "simulated": float(fields[1]) if fields else float("nan"),
        # the table's events and the model's wall seconds (its event loop)
        "events": float(fields[6]) if fields else float("nan"),
        "loop_s": float(fields[7]) if fields else float("nan"),
    }


def cell(runs: list[dict[str, float]], key: str, fmt: str) -> str:
    values = sorted(r[key] for r in runs)
    return f"{format(values[0], fmt)} ({format(statistics.median(values), fmt)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--traces", default=",".join(DEFAULT))
    ap.add_argument("--repeat", type=int, default=3, help="paired repetitions per trace")
    ap.add_argument("--timeout", type=float, default=600.0, help="SimGrid time limit, s")
    ap.add_argument(
        "--cold-numba",
        action="store_true",
        help="also time one first run with an empty numba cache (a new machine)",
    )
    args = ap.parse_args()
    env = dict(os.environ)
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} at start; "
        f"each cell: best of {args.repeat} paired runs (median); wall and CPU in s, peak RSS in MiB"
    )
    print(f"bytecode: compiled beforehand in {', '.join(compile_bytecode())}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.cold_numba:
            cold_env = {**env, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba-cold")}
            trace = index_of(DATA / args.traces.split(",")[0], replayable=False)
            cold = mpiuq_run(trace, Path(tmp) / "cold-cache", cold_env)
            print(
                f"new machine (empty numba cache), first run of {trace.parent.name}: "
                f"{cold['wall_s']:.1f} s wall, {cold['cpu_s']:.1f} s CPU"
            )
        for k, name in enumerate(args.traces.split(",")):
            trace_dir = DATA / name
            trace = index_of(trace_dir, replayable=False)
            # numba cache warm (the one-off compile is not part of a user's every first run)
            mpiuq_run(trace, Path(tmp) / f"warm-{k}", env)
            first, second, sg = [], [], []
            for i in range(args.repeat):
                cache = Path(tmp) / f"trace-cache-{k}-{i}"
                first.append(mpiuq_run(trace, cache, env))
                second.append(mpiuq_run(trace, cache, env))
                result = simgrid(trace_dir, args.timeout)
                if result is None:
                    raise SystemExit("smpirun not found (apt-get install simgrid)")
                sg.append(result)
            rows.append((name, first, second, sg))
    head = (
        f"{'trace':<18}{'side':<22}{'wall s':>16}{'CPU s':>16}{'peak MiB':>14}"
        f"{'wall vs SimGrid':>17}{'simulated s':>13}"
    )
    print(head)
    print("-" * len(head))
    for name, first, second, sg in rows:
        sg_wall = min(r["wall_s"] for r in sg)
        for side, runs in (
            ("mpiuq, first run", first),
            ("mpiuq, second run", second),
            ("SimGrid smpirun", sg),
        ):
            speed = sg_wall / min(r["wall_s"] for r in runs)
            print(
                f"{name:<18}{side:<22}{cell(runs, 'wall_s', '.2f'):>16}"
                f"{cell(runs, 'cpu_s', '.2f'):>16}{cell(runs, 'maxrss_MiB', '.0f'):>14}"
                f"{speed:>16.1f}x{runs[0]['simulated']:>13.6g}"
            )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
