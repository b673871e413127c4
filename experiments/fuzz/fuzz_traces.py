"""Fuzzing the trace readers with thousands of damaged traces per kind (issue 14).

Seeds, damage and outcome classes are those of ``tests/trace_fuzzing.py`` (used by
the test suite with a few hundred cases): each damaged TI, DUMPI, OTF2 or mpiuq
HDF5 trace is read through the public entry point in a worker process, and the
outcome is counted: read with every value in range (ok), a documented error
(TraceFormatError / UnsupportedTraceError), a crash of the process, a hang past
``--timeout`` seconds, an escaped exception (a traceback a user would see), or a
trace read without error but holding an out-of-range value. Typed errors that
report a crash or hang of a C library contained in the reader's child process are
also counted apart. It prints one table row per kind, then an example of every bad
outcome (and of a contained crash).

Usage::

    python experiments/fuzz/fuzz_traces.py [--cases 3000] [--kinds ti,dumpi,otf2,h5]
        [--seed 1] [--timeout 30]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from trace_fuzzing import KINDS, fuzz


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=3000, help="damaged traces per kind")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a case is a hang")
    args = ap.parse_args()
    head = (
        f"{'kind':6s} {'cases':>6s} {'ok':>6s} {'typed errors':>12s} {'crashes':>8s} "
        f"{f'hangs>{args.timeout:g}s':>10s} {'escaped':>8s} {'out-of-range':>12s} {'contained':>9s} {'time s':>7s}"
    )
    print(head, flush=True)
    reports = []
    for kind in args.kinds.split(","):
        t0 = time.perf_counter()
        r = fuzz(kind, args.cases, seed=args.seed, timeout_s=args.timeout)
        reports.append(r)
        c = r.counts
        print(
            f"{kind:6s} {r.cases:6d} {c['ok']:6d} {c['typed']:12d} {c['crash']:8d} "
            f"{c['hang']:10d} {c['escaped']:8d} {c['out_of_range']:12d} {r.contained:9d} "
            f"{time.perf_counter() - t0:7.0f}",
            flush=True,
        )
    for r in reports:
        for outcome, example in r.examples.items():
            print(f"\n{r.kind} {outcome}: {example}")
    return 1 if any(r.failures() for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
