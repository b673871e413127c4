"""Where the peak memory of ``mpiuq replay TRACE --model analytic`` goes, stage by stage.

Issue 15 asks for a peak resident memory of a whole ``mpiuq replay`` of ti_lulesh_512r
at most twice SimGrid's. This script accounts for that peak: it runs the command as a
user does (``mpiuq.main.main`` in a fresh interpreter, the compiled loops in numba's
cache, the parsed trace in the trace cache: a second run), with the stages of the
replay wrapped so that at the end of each it reads ``/proc/self/status``:

* ``VmRSS`` (resident now), split into ``RssAnon`` (heap, NumPy arrays, the loaded
  machine code of the loops) and ``RssFile`` (mapped files: shared libraries such as
  ``libllvmlite.so``, and the trace cache's columns, which are memory-mapped);
* the stage's own peak: ``VmHWM`` is reset to the current RSS before every stage
  (``echo 5 > /proc/self/clear_refs``), so a stage's peak is its own, temporaries
  included;

and what the stage holds in arrays (the trace's columns, the lowered program). For the
stage of the peak it splits the resident memory by mapping (``/proc/self/smaps``):
LLVM's library, the mapped trace cache file, h5py, other libraries, the heap. With
``--tracemalloc`` a second run of the same command traces Python and NumPy allocations
(slower; its RSS figures include tracemalloc's own memory and are not shown) and prints
the peak of traced allocations per stage.

The first run (parsing the text trace into the cache) is made beforehand and not
measured here; ``perf_whole_process.py`` measures both runs' whole-process peaks
against SimGrid, ``perf_floor.py`` the floor of any replay.

Usage::

    python experiments/perf/perf_memory.py [--trace ti_lulesh_512r] [--tracemalloc]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_replay import DATA, index_of

#: Run in the child: the stages of ``mpiuq replay`` wrapped with memory readings.
_PROBE = r"""
import collections, json, os, sys
TRACEMALLOC = os.environ.get("PERF_MEMORY_TRACEMALLOC") == "1"
if TRACEMALLOC:
    import tracemalloc
    tracemalloc.start()

def status():
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out

def reset_peak():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")

stages = []
held = {}

def mappings():
    groups = collections.Counter()
    name = None
    with open("/proc/self/smaps") as fh:
        for line in fh:
            parts = line.split()
            if parts and "-" in parts[0] and not parts[0].endswith(":"):
                path = parts[5] if len(parts) > 5 else ""
                if "libllvmlite" in path:
                    name = "libllvmlite.so (LLVM, numba's code generator)"
                elif path.endswith(".h5"):
                    name = "trace cache file (mapped columns)"
                elif "h5py" in path:
                    name = "h5py, libhdf5"
                elif ".so" in path:
                    name = "other shared libraries (Python, NumPy, libc...)"
                elif path in ("", "[heap]"):
                    name = "heap and anonymous (Python objects, arrays, loops' code)"
                else:
                    name = path
            elif parts and parts[0] == "Rss:":
                groups[name] += int(parts[1]) / 1024
    return groups.most_common(8)

def mark(name, **arrays):
    s = status()
    s["maps"] = mappings()
    s["stage"] = name
    s["arrays_MiB"] = {k: v / 2**20 for k, v in arrays.items()}
    if TRACEMALLOC:
        s["traced_peak_MiB"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.reset_peak()
    stages.append(s)
    reset_peak()

def nbytes(obj, names):
    return sum(getattr(obj, n).nbytes for n in names)

reset_peak()
mark("interpreter")
import mpiuq.main
mark("import mpiuq.main (CLI)")
from mpiuq.simulator.runtime.numba_import import import_numba
import_numba()
mark("import numba (llvmlite, NumPy)")
import mpiuq.runtime.replay_progress as rp
import mpiuq.simulator.engine as engine
import mpiuq.simulator.replay.run as rep
import mpiuq.simulator.trace.read  # the trace reader (h5py only if the cache lacks a layout)
mark("import replay engine")

from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS
from mpiuq.simulator.program.table import Program

def program_bytes(p):
    return sum(a.nbytes for a in (p.rank_ptr, p.ops, p.nbytes, p.wait_list))

read = rp.read_with_progress
def read_wrapped(*a, **k):
    trace = read(*a, **k)
    mark("read trace (cache, mapped)", trace=nbytes(trace, (*OP_COLUMNS, *AUX_COLUMNS)))
    return trace
rp.read_with_progress = read_wrapped

lower = rep.lower_for_replay
def lower_wrapped(trace, *a, **k):
    low, s = lower(trace, *a, **k)
    held["low"] = low
    mark(
        "lower (trace + program)",
        trace=nbytes(trace, (*OP_COLUMNS, *AUX_COLUMNS)),
        program=program_bytes(low.program),
        row_ptr=low.row_ptr.nbytes,
    )
    return low, s
rep.lower_for_replay = lower_wrapped

replay_lowered = rep.replay_lowered
def replay_lowered_wrapped(origin, low, *a, **k):
    mark("trace let go", program=program_bytes(low.program), row_ptr=low.row_ptr.nbytes)
    result = replay_lowered(origin, low, *a, **k)
    mark("result (per rank, per call)")
    return result
rep.replay_lowered = replay_lowered_wrapped

state_for = engine.kernel.state_for
def state_for_wrapped(prog, net):
    mark("network, program arrays")
    state = state_for(prog, net)
    mark("kernel state (loops loaded)")
    return state
engine.kernel.state_for = state_for_wrapped

simulate = rep.simulate
def simulate_wrapped(*a, **k):
    run = simulate(*a, **k)
    mark("simulate (event loop)")
    return run
rep.simulate = simulate_wrapped

import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = mpiuq.main.main(sys.argv[1:])
mark("table printed")
held.clear()
print(json.dumps({"code": code, "stages": stages}))
"""


def run_probe(trace: Path, env: dict[str, str], tracemalloc: bool) -> dict:
    """The probe's stages for ``mpiuq replay trace --model analytic --quiet``."""
    argv = ["replay", str(trace), "--model", "analytic", "--quiet"]
    env = {**env, "PERF_MEMORY_TRACEMALLOC": "1" if tracemalloc else "0"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed ({proc.returncode}): {proc.stderr[-800:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["code"] != 0:
        raise RuntimeError(f"mpiuq replay exited {out['code']}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trace", default="ti_lulesh_512r", help="shared trace folder name")
    ap.add_argument("--tracemalloc", action="store_true", help="also trace allocations")
    args = ap.parse_args()
    trace = index_of(DATA / args.trace, replayable=False)
    load = os.getloadavg()
    print(f"mpiuq replay {args.trace} --model analytic, second run (trace cache and numba cache")
    print(f"warm); load average {load[0]:.2f}; MiB")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MPIUQ_CACHE_DIR": str(Path(tmp) / "trace-cache")}
        mpiuq = shutil.which("mpiuq") or "mpiuq"
        cmd = [mpiuq, "replay", str(trace), "--model", "analytic", "--quiet"]
        subprocess.run(cmd, env=env, check=True, capture_output=True)  # first run: the cache
        out = run_probe(trace, env, tracemalloc=False)
        traced = run_probe(trace, env, tracemalloc=True) if args.tracemalloc else None
    head = (
        f"{'stage (end of)':<34}{'RSS':>6}{'anon':>6}{'file':>6}{'stage peak':>11}"
        f"{'  held in arrays'}"
    )
    print(head)
    print("-" * (len(head) + 30))
    prev = None
    for k, s in enumerate(out["stages"]):
        arrays = ", ".join(f"{n} {v:.1f}" for n, v in s["arrays_MiB"].items())
        peak = s["VmHWM"] if prev is not None else s["VmRSS"]
        extra = ""
        if traced is not None:
            extra = f"  [traced peak {traced['stages'][k]['traced_peak_MiB']:.1f}]"
        print(
            f"{s['stage']:<34}{s['VmRSS']:>6.0f}{s['RssAnon']:>6.0f}{s['RssFile']:>6.0f}"
            f"{peak:>11.0f}  {arrays}{extra}"
        )
        prev = s
    top = max(out["stages"][1:], key=lambda s: s["VmHWM"])
    print(f"process peak: {top['VmHWM']:.0f} MiB, in stage {top['stage']!r}; resident at its")
    print(f"end ({top['VmRSS']:.0f} MiB), by mapping:")
    for name, mib in top["maps"]:
        print(f"  {mib:7.1f}  {name}")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f}")


if __name__ == "__main__":
    main()
