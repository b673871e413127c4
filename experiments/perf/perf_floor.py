"""The fixed floor of any ``mpiuq`` process, beside what issue 15's targets allow.

Issue 15 asks, for whole-process ``mpiuq replay TRACE --model analytic`` against
SimGrid's ``smpirun -replay``: at least 10x SimGrid's wall time on a second run, and
a peak memory on ti_lulesh_512r at most twice SimGrid's. Part of every ``mpiuq``
process does not depend on the trace at all: the interpreter, NumPy, and numba
(which loads LLVM, ``libllvmlite.so``, about 180 MB on disk). This script measures
that floor, each step in its own process, so the targets can be read against it:

* ``python -c pass``; ``import numpy``; ``import numpy, numba`` (the libraries the
  compiled loops need); ``mpiuq --version`` (the CLI's own start);
* ``mpiuq replay`` of a tiny synthetic trace (``mpiuq trace synth halo3d --ranks 8
  --iterations 1``: 8 ranks, a few dozen operations) on the analytic model, numba's
  cache warm: everything a replay pays besides the work on the trace itself.

With ``--simgrid`` it also runs SimGrid on the four traces of the issue (one run each)
and prints, per trace, the wall time a second run may take to be 10x faster and the
peak memory allowed (2x SimGrid's), beside the floor.

mpiuq's modules are byte-compiled first, as ``pip install`` leaves them. Each cell
is the best of ``--repeat`` runs (median in brackets); wall and CPU in
seconds, peak resident memory in MiB (``getrusage`` of a wrapper's only child).

Usage::

    python experiments/perf/perf_floor.py [--repeat 5] [--simgrid]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_replay import _WRAPPER, DATA, compile_bytecode, simgrid
from perf_whole_process import cell

ISSUE_TRACES = ("ti_lulesh_512r", "ti_nas_mg_A_256r", "ti_nekbone_64r", "ti_comd_256r")
TINY = "halo3d, 8 ranks x 1 iteration"


def measure(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall, CPU and peak RSS of ``cmd`` run as its own process."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-600:]}")
    usage = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "cpu_s": usage["cpu_s"], "maxrss_MiB": usage["maxrss_KiB"] / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--simgrid", action="store_true", help="also time SimGrid on the issue's traces"
    )
    args = ap.parse_args()
    mpiuq = shutil.which("mpiuq") or "mpiuq"
    py = sys.executable
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} at start; "
        f"best of {args.repeat} (median)"
    )
    print(f"bytecode: compiled beforehand in {', '.join(compile_bytecode())}")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MPIUQ_CACHE_DIR": str(Path(tmp) / "trace-cache")}
        tiny = str(Path(tmp) / "tiny.h5")
        synth = [mpiuq, "trace", "synth", "halo3d", "--ranks", "8", "--iterations", "1"]
        measure([*synth, "--out", tiny], env)
        replay_tiny = [mpiuq, "replay", tiny, "--model", "analytic", "--quiet"]
        measure(replay_tiny, env)  # fills numba's cache, if empty
        steps = {
            "python -c pass": [py, "-c", "pass"],
            "import numpy": [py, "-c", "import numpy"],
            "import numpy, numba": [py, "-c", "import numpy, numba"],
            "mpiuq --version": [mpiuq, "--version"],
            f"mpiuq replay ({TINY})": replay_tiny,
        }
        rows = {
            name: [measure(cmd, env) for _ in range(args.repeat)] for name, cmd in steps.items()
        }
    head = f"{'step':<44}{'wall s':>16}{'CPU s':>16}{'peak MiB':>14}"
    print(head)
    print("-" * len(head))
    for name, runs in rows.items():
        print(
            f"{name:<44}{cell(runs, 'wall_s', '.3f'):>16}{cell(runs, 'cpu_s', '.3f'):>16}"
            f"{cell(runs, 'maxrss_MiB', '.0f'):>14}"
        )
    floor = rows[f"mpiuq replay ({TINY})"]
    floor_wall = min(r["wall_s"] for r in floor)
    floor_mem = min(r["maxrss_MiB"] for r in floor)
    libs_mem = min(r["maxrss_MiB"] for r in rows["import numpy, numba"])
    if args.simgrid:
        print()
        print(
            f"{'trace':<20}{'SimGrid wall s':>16}{'10x allows s':>14}{'SimGrid MiB':>13}"
            f"{'2x allows MiB':>15}{'  floor: wall s, MiB (libs MiB)'}"
        )
        for name in ISSUE_TRACES:
            sg = simgrid(DATA / name, timeout_s=600.0)
            if sg is None:
                raise SystemExit("smpirun not found (apt-get install libsimgrid-dev)")
            print(
                f"{name:<20}{sg['wall_s']:>16.2f}{sg['wall_s'] / 10:>14.3f}{sg['maxrss_MiB']:>13.0f}"
                f"{2 * sg['maxrss_MiB']:>15.0f}  {floor_wall:.3f}, {floor_mem:.0f} ({libs_mem:.0f})"
            )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
