"""Old versus new: run a perf script of two checkouts alternately and compare its figures.

The machine is shared and timings drift by a third from run to run, so the two
versions run in turns (old, new, old, new, ...) in the same session, each with its
own interpreter (virtualenv) and numba cache, and the best and median of every
figure are compared. Figures understood:

* ``perf_simulator.py``: seconds (wall and, where printed, CPU) of the single stream
  run, the pingpong and the stream designs;
* ``perf_replay.py``: per trace, the simulation seconds and the replay seconds
  (cached read + lowering + simulation), wall and CPU, best of the script's own repeats;
* ``perf_engine_cpu.py``: CPU seconds per workload, best of the script's own repeats
  (run it with ``--script-of new``: it uses only the public API of both versions).

Usage::

    python experiments/perf/ab_versions.py --old /work/venv-old/bin/python:/work/wt-old:/work/numba-old \\
        --new /work/venv-new/bin/python:/work/wt-new:/work/numba-new --rounds 3 \\
        perf_replay.py --traces all --no-simgrid --repeat 2

Each side is ``PYTHON:CHECKOUT:NUMBA_CACHE_DIR``; the script runs as
``PYTHON CHECKOUT/experiments/perf/SCRIPT ARGS...`` with the trace parse cache in
``NUMBA_CACHE_DIR-traces`` (other jobs on the machine cannot evict it).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
from pathlib import Path

_SIM = re.compile(r"^\s*(single run|pingpong|stream)\b.*? in ([0-9.]+) s(?: \(CPU ([0-9.]+) s)?")
_TRACE = re.compile(r"^(\S+): \d+ actions")
_REPLAY = re.compile(r"simulate ([0-9.]+) s = ([0-9.]+) s")
_CPU = re.compile(r"^cpu (.+?): ([0-9.]+) s")
_REPLAY_CPU = re.compile(r"CPU seconds, best of \d+: simulate ([0-9.]+) s, replay ([0-9.]+) s")


def figures(output: str) -> dict[str, float]:
    """Figures (seconds) printed by perf_simulator.py or perf_replay.py."""
    out: dict[str, float] = {}
    trace = "?"
    for line in output.splitlines():
        if m := _CPU.match(line):
            out[m.group(1)] = float(m.group(2))
        elif m := _SIM.match(line):
            out[m.group(1)] = float(m.group(2))
            if m.group(3):
                out[f"{m.group(1)} (CPU)"] = float(m.group(3))
        elif m := _TRACE.match(line):
            trace = m.group(1)
        elif "mpiuq   :" in line and (m := _REPLAY.search(line)):
            out[f"{trace} simulate"] = float(m.group(1))
            out[f"{trace} replay"] = float(m.group(2))
        elif m := _REPLAY_CPU.search(line):
            out[f"{trace} simulate (CPU)"] = float(m.group(1))
            out[f"{trace} replay (CPU)"] = float(m.group(2))
    return out


def run(side: str, script: str, args: list[str], script_side: str | None) -> dict[str, float]:
    python, checkout, cache = side.split(":")
    if script_side is not None:
        checkout = script_side.split(":")[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["MPIUQ_CACHE_DIR"] = f"{cache}-traces"  # each side its own trace parse cache
    cmd = [python, str(Path(checkout) / "experiments" / "perf" / script), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return figures(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--old", required=True, help="PYTHON:CHECKOUT:NUMBA_CACHE_DIR")
    ap.add_argument("--new", required=True, help="PYTHON:CHECKOUT:NUMBA_CACHE_DIR")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--script-of", choices=("old", "new"), help="run this side's copy of the script for both"
    )
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    results: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for i in range(a.rounds):
        for name, side in (("old", a.old), ("new", a.new)):
            script_side = {"old": a.old, "new": a.new}.get(a.script_of or "")
            for key, value in run(side, a.script, a.args, script_side).items():
                results[name].setdefault(key, []).append(value)
        print(f"round {i + 1}/{a.rounds} done", flush=True)
    print(
        f"{'figure (s)':<34} {'old best':>9} {'old med':>9} {'new best':>9} {'new med':>9} {'new/old':>8}"
    )
    for key in results["old"]:
        old, new = results["old"][key], results["new"].get(key, [float("nan")])
        print(
            f"{key:<34} {min(old):9.3f} {statistics.median(old):9.3f} {min(new):9.3f} "
            f"{statistics.median(new):9.3f} {min(new) / min(old):8.3f}"
        )


if __name__ == "__main__":
    main()
