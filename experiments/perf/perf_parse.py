"""TI parse rate: the compiled parser against the pure-Python one it replaced, per trace.

For every shared SimGrid TI trace (each ``ti_*`` / ``gen_ti_*`` folder, read as
``mpiuq`` reads it: the raw recording, gzip included) it times a cold parse of the
whole trace (no parse cache; files read from disk and decompressed inside the
timed call) with the compiled parser (:func:`mpiuq.simulator.trace.read_ti`, best
of ``--repeat``) and with the previous Python parser
(``experiments/perf/ti_reference.py``, one run; ``--no-old`` skips it), and prints
trace lines per second (lines of the files read, comments and blank lines
included) for both, the speed-up and whether both produced the same
:meth:`Trace.digest` (every column, bit for bit). Both run single-threaded in this
process (``read_ti(..., threads=1)``), one after the other, so those figures are per
core; for the compiled parser the rate is also given from CPU time
(``time.process_time``), which is what a core delivers when other work shares the
machine. The last columns time the compiled parser as ``mpiuq`` runs it, on two
threads (``threads=2``: files read and scanned in two halves, traces of 2 MiB or more
parsed in two file groups; best of ``--repeat``), and check that it gives the same
trace. Loading the compiled code from numba's cache (or compiling it on a new
machine) is done once before timing and shown apart.

Usage::

    python experiments/perf/perf_parse.py [--traces ti_lulesh_512r,...] [--repeat 3] [--no-old]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

from mpiuq.simulator.trace.ti.files import find_ti_files, read_text_bytes
from mpiuq.simulator.trace.ti.reader import read_ti

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"


def _reference() -> ModuleType:
    path = Path(__file__).with_name("ti_reference.py")
    spec = importlib.util.spec_from_file_location("ti_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ti_reference"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _lines(trace: Path) -> int:
    files, _notes = find_ti_files(trace)
    total = 0
    for f in files:
        text = read_text_bytes(f)
        total += text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="all", help="comma-separated folder names, or all")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the compiled parser (best)")
    ap.add_argument("--no-old", action="store_true", help="skip the pure-Python parser")
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"shared traces not found at {DATA}")
        return 1
    if args.traces == "all":
        names = sorted(
            p.name
            for p in DATA.glob("*ti_*")
            if p.is_dir() and p.name != "ti_simgrid_replay_examples"
        )
    else:
        names = args.traces.split(",")
    old = None if args.no_old else _reference()
    t0 = time.perf_counter()
    read_ti(DATA / "gen_ti_lulesh_8r")
    print(f"load (or first compile) of the compiled parser: {time.perf_counter() - t0:.2f} s\n")
    head = f"{'trace':32s} {'lines':>9s} {'new s':>7s} {'new Ml/s':>9s} {'CPU Ml/s':>9s}"
    head += f" {'2 thr s':>7s} {'2 thr Ml/s':>10s} {'same':>4s}"
    if old is not None:
        head += f" {'old s':>7s} {'old Ml/s':>9s} {'speed-up':>8s} {'identical':>9s}"
    print(head)
    sum_lines = sum_new = sum_old = sum_cpu = sum_two = 0.0
    for name in names:
        trace = DATA / name
        n = _lines(trace)
        best = cpu = two = float("inf")
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            new = read_ti(trace, threads=1)
            best = min(best, time.perf_counter() - t)
            cpu = min(cpu, time.process_time() - c)
        for _ in range(args.repeat):
            t = time.perf_counter()
            paired = read_ti(trace, threads=2)
            two = min(two, time.perf_counter() - t)
        row = f"{name:32s} {n:9d} {best:7.3f} {n / best / 1e6:9.2f} {n / cpu / 1e6:9.2f}"
        same2 = "yes" if paired.digest() == new.digest() else "NO"
        row += f" {two:7.3f} {n / two / 1e6:10.2f} {same2:>4s}"
        sum_two += two
        sum_cpu += cpu
        sum_lines += n
        sum_new += best
        if old is not None:
            t = time.perf_counter()
            ref = old.read_ti(trace)
            t_old = time.perf_counter() - t
            sum_old += t_old
            same = "yes" if ref.digest() == new.digest() else "NO"
            row += f" {t_old:7.2f} {n / t_old / 1e6:9.3f} {t_old / best:7.1f}x {same:>9s}"
        print(row, flush=True)
    total = f"{'all':32s} {int(sum_lines):9d} {sum_new:7.2f} {sum_lines / sum_new / 1e6:9.2f}"
    total += f" {sum_lines / sum_cpu / 1e6:9.2f} {sum_two:7.2f} {sum_lines / sum_two / 1e6:10.2f}"
    total += " " * 5
    if old is not None:
        total += f" {sum_old:7.1f} {sum_lines / sum_old / 1e6:9.3f} {sum_old / sum_new:7.1f}x"
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
