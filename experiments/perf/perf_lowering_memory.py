"""Peak memory of lowering a 2,048-rank trace whose alltoallv has distinct counts per rank.

The lowering builds one collective template per distinct (collective, rank, sizes) key;
an alltoallv whose count lists differ on every rank has one key per rank, each holding
its 2 x p counts. Before the templates were scoped to one lowering, process-wide
``lru_cache(65536)`` caches on the templates and on the collective schedules kept every
key, template and schedule after the lowering (1.5 GB after one 2,048-rank alltoallv).

Each case runs in its own process (``ru_maxrss`` is a per-process peak) and prints:
the peak after the trace is built, the peak over the lowering, the lowering's program
rows, and the resident size once the lowering has returned and been dropped (what a
cache would keep). Cases: ``sparse`` (each rank sends distinct non-zero counts to 16
partners, zero elsewhere: MPICH's alltoallv posts only the non-empty messages) and
``dense`` (distinct non-zero counts to every partner: 2 x 2,047 messages per rank,
8.4 M program rows at 2,048 ranks, 40 B each in memory), lowered in memory
(``lower_trace``) and in blocks into a program file (``lower_trace_blocks``, what
``mpiuq replay --stream on`` does).

Usage::

    python experiments/perf/perf_lowering_memory.py [--ranks 2048] [--cases sparse,dense]
        [--modes memory,blocks] [--process-caches]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    """Peak resident size of this process image (``VmHWM``: unlike ``ru_maxrss``, which
    keeps the peak of the process a child was forked from, it starts afresh at exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # pragma: no cover


def build_trace(p: int, dense: bool) -> object:
    """A TI-like trace: every rank calls one alltoallv with its own count lists."""
    from mpiuq.simulator.trace.builder import TraceBuilder
    from mpiuq.simulator.trace.ir import OpKind

    def count(src: int, dst: int) -> int:
        if src == dst:
            return 0
        if not dense and (dst - src) % p not in range(1, 9) and (src - dst) % p not in range(1, 9):
            return 0
        return 8 * (1 + (src * 7919 + dst * 104729) % 997)  # distinct per (src, dst)

    b = TraceBuilder("ti", f"synthetic alltoallv {p}r", p)
    call = b.call_id("MPI_Alltoallv")
    for r in range(p):
        send = [count(r, j) for j in range(p)]
        recv = [count(j, r) for j in range(p)]
        b.add_compute(r, 1e-6)
        b.add_vcollective(
            r, int(OpKind.ALLTOALLV), call, send + recv, bytes_send=sum(send), bytes_recv=sum(recv)
        )
    return b.build()


def run_case(p: int, case: str, mode: str, process_caches: bool = False) -> dict[str, float]:
    from mpiuq.simulator.lowering import lower as lowering
    from mpiuq.simulator.lowering.lower import LoweringOptions, lower_trace

    if process_caches:  # as before: process-wide caches of templates and schedules
        from functools import lru_cache

        lowering.schedule = lru_cache(maxsize=65536)(lowering.schedule)  # type: ignore[attr-defined]
        lowering._template = lru_cache(maxsize=65536)(lowering._template)  # type: ignore[assignment]

    t0 = time.perf_counter()
    trace = build_trace(p, case == "dense")
    gc.collect()
    built_peak, built_rss = _peak_mib(), _rss_mib()
    t1 = time.perf_counter()
    if mode == "memory":
        low = lower_trace(trace, LoweringOptions())  # type: ignore[arg-type]
        rows = low.program.n_ops
        del low
    else:  # the trace file is written by this process, lowered by a fresh one
        from mpiuq.simulator.trace.cache.store import save_trace

        with tempfile.TemporaryDirectory() as tmp:
            h5 = Path(tmp) / "t.h5"
            save_trace(trace, h5, compress=False)  # type: ignore[arg-type]
            del trace
            proc = subprocess.run(
                [sys.executable, __file__, "--lower-file", str(h5)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            return {"ranks": p, "build_s": t1 - t0, **r}
    lowering_s = time.perf_counter() - t1
    gc.collect()
    return {
        "ranks": p,
        "rows": rows,
        "build_s": t1 - t0,
        "lowering_s": lowering_s,
        "peak_after_trace_MiB": built_peak,
        "rss_after_trace_MiB": built_rss,
        "peak_MiB": _peak_mib(),
        "rss_after_lowering_MiB": _rss_mib(),
    }


def lower_file(h5: Path) -> dict[str, float]:
    """Lower the trace file ``h5`` in blocks (as ``mpiuq replay --stream on``), in this process."""
    from mpiuq.simulator.lowering.blocks import lower_trace_blocks
    from mpiuq.simulator.lowering.lower import LoweringOptions

    gc.collect()
    base_peak, base_rss = _peak_mib(), _rss_mib()
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        res = lower_trace_blocks(h5, LoweringOptions(), Path(tmp) / "t.mpiuqprog")
        lowering_s = time.perf_counter() - t1
        meta = json.loads((Path(tmp) / "t.mpiuqprog" / "meta.json").read_text())
    gc.collect()
    return {
        "rows": int(meta["n_ops"]),
        "blocks": res.n_blocks,
        "lowering_s": lowering_s,
        "peak_after_trace_MiB": base_peak,
        "rss_after_trace_MiB": base_rss,
        "peak_MiB": _peak_mib(),
        "rss_after_lowering_MiB": _rss_mib(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=2048)
    ap.add_argument("--cases", default="sparse,dense")
    ap.add_argument("--modes", default="memory,blocks")
    ap.add_argument(
        "--process-caches",
        action="store_true",
        help="wrap the templates and schedules in process-wide lru_cache(65536), as before",
    )
    ap.add_argument("--child", nargs=2, metavar=("CASE", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--lower-file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.lower_file:
        print(json.dumps(lower_file(args.lower_file)))
        return 0
    if args.child:
        print(json.dumps(run_case(args.ranks, *args.child, args.process_caches)))
        return 0
    print(
        f"{'case':7s} {'mode':7s} {'ranks':>6s} {'rows':>10s} {'lowering s':>10s} "
        f"{'peak before':>11s} {'peak MiB':>9s} {'RSS after, MiB':>14s}"
    )
    for case in args.cases.split(","):
        for mode in args.modes.split(","):
            proc = subprocess.run(
                [sys.executable, __file__, "--ranks", str(args.ranks), "--child", case, mode]
                + (["--process-caches"] if args.process_caches else []),
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                print(f"{case:7s} {mode:7s} failed: {proc.stderr.strip()[-300:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(
                f"{case:7s} {mode:7s} {r['ranks']:6d} {r['rows']:10d} {r['lowering_s']:10.2f} "
                f"{r['peak_after_trace_MiB']:16.0f} {r['peak_MiB']:9.0f} "
                f"{r['rss_after_lowering_MiB']:14.0f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
