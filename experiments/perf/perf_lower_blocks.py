"""Lowering the issue-15 trace in memory vs in blocks of ranks into a program file.

Each way runs as its own whole process (a fresh interpreter, as a user meets it):

* ``memory``: ``lower_trace(load_trace_h5(TRACE))`` (what ``mpiuq replay`` does today);
* ``blocks``: ``lower_trace_blocks(TRACE, None, SCRATCH/halo.mpiuqprog, ranks_per_block=B)``;
* ``compare`` (optional, after ``blocks``): the in-memory lowering again, compared with
  the program file row chunk by row chunk (byte-identity at scale; its memory is the
  in-memory lowering's).

The parent prints, per child, its wall time, CPU time (user + system) and peak
resident memory (``ru_maxrss`` of the child from ``wait4``), and the load average
before and after (other jobs on the machine slow the figures down). Unless the trace
exists, it is synthesised first with::

    mpiuq trace synth halo3d --ranks R --iterations I --out SCRATCH/halo.h5

(about 30 s and 3.6 GiB; the defaults R = 16384, I = 40 are issue 15's case).

Usage::

    python experiments/perf/perf_lower_blocks.py [--scratch DIR] [--ranks 16384]
        [--iterations 40] [--ranks-per-block B] [--ways memory,blocks,compare] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _compare(trace: Path, out: Path) -> None:
    """Check that the program file ``out`` holds ``lower_trace`` of ``trace``, byte for byte."""
    import numpy as np

    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.program.file import ProgramFile
    from mpiuq.simulator.trace.cache.store import load_trace_h5

    low = lower_trace(load_trace_h5(trace))
    prog = low.program
    same: dict[str, bool] = {}
    with ProgramFile.open(out) as pf:
        sizes = (pf.n_ops, pf.n_requests, pf.n_wait, pf.n_marks)
        same["sizes"] = sizes == (prog.n_ops, prog.n_requests, prog.wait_list.shape[0], 0)
        same["rank_ptr"] = np.array_equal(pf.rank_ptr, prog.rank_ptr)
        same["wait_list"] = np.array_equal(pf.wait_list, prog.wait_list)
        chunk = 1 << 22
        ops = np.empty((chunk, prog.ops.shape[1]), np.int32)
        value = np.empty(chunk, np.int64)
        rows = True
        for s in range(0, prog.n_ops, chunk):
            e = min(s + chunk, prog.n_ops)
            pf.read_rows(s, e, ops, value)
            rows &= ops[: e - s].tobytes() == prog.ops[s:e].tobytes()
            rows &= value[: e - s].tobytes() == prog.nbytes[s:e].tobytes()
        same["rows"] = bool(rows)
        same["row_ptr"] = np.array_equal(pf.read_row_ptr(0, pf.n_trace_ops + 1), low.row_ptr)
        red_rows = np.load(out / "reduce_rows.npy")
        red_bytes = np.load(out / "reduce_bytes.npy")
        same["reduce"] = red_rows.tobytes() == low.reduce_rows.tobytes()
        same["reduce"] &= red_bytes.tobytes() == low.reduce_bytes.tobytes()
        same["counts"] = (pf.collectives, pf.algorithms, pf.nonblocking_collectives) == (
            low.collectives,
            low.algorithms,
            low.nonblocking_collectives,
        )
    print(f"compare: {same}")
    print(f"compare: byte-identical to lower_trace: {all(same.values())}")


def _child(way: str, trace: Path, out: Path, per: int | None) -> None:
    """Run one lowering in this process and print what it produced."""
    t0 = time.perf_counter()
    if way == "compare":
        _compare(trace, out)
        return
    if way == "memory":
        from mpiuq.simulator.lowering.lower import lower_trace
        from mpiuq.simulator.trace.cache.store import load_trace_h5

        low = lower_trace(load_trace_h5(trace))
        rows, info = low.program.n_ops, f"{low.program.n_requests} requests"
    else:
        from mpiuq.simulator.lowering.blocks import lower_trace_blocks

        res = lower_trace_blocks(trace, None, out, ranks_per_block=per)
        rows = res.n_ops
        info = f"{res.n_requests} requests, {res.n_blocks} blocks of {res.ranks_per_block} ranks"
    print(f"{way}: {rows} program rows, {info}, {time.perf_counter() - t0:.1f} s in-process")


def _run(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds and peak RSS (bytes) of ``cmd`` run as a child, its output."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert proc.stdout is not None
    text = proc.stdout.read()
    proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, text


def main() -> None:
    """Synthesise the trace if needed, then time both lowerings as whole processes."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/mpiuq-perf-lower-blocks"))
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--ranks-per-block", type=int, default=None)
    ap.add_argument(
        "--ways",
        default="memory,blocks",
        help="comma-separated: memory, blocks, compare (compare: after blocks, check the "
        "program file against lower_trace byte for byte; needs the in-memory lowering's memory)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the program file")
    ap.add_argument("--child", choices=("memory", "blocks", "compare"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    trace = args.scratch / f"halo3d_{args.ranks}r_{args.iterations}i.h5"
    out = args.scratch / "halo.mpiuqprog"
    if args.child:
        _child(args.child, trace, out, args.ranks_per_block)
        return
    args.scratch.mkdir(parents=True, exist_ok=True)
    if not trace.exists():
        mpiuq = shutil.which("mpiuq") or "mpiuq"
        cmd = [mpiuq, "trace", "synth", "halo3d", "--ranks", str(args.ranks)]
        cmd += ["--iterations", str(args.iterations), "--out", str(trace)]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    print(f"trace {trace} ({trace.stat().st_size / 1e6:.0f} MB on disk)")
    print(f"load average before: {os.getloadavg()}")
    for way in args.ways.split(","):
        cmd = [sys.executable, __file__, "--child", way, "--scratch", str(args.scratch)]
        cmd += ["--ranks", str(args.ranks), "--iterations", str(args.iterations)]
        if args.ranks_per_block is not None:
            cmd += ["--ranks-per-block", str(args.ranks_per_block)]
        wall, cpu, rss, text = _run(cmd)
        print(text.strip())
        print(
            f"{way:>7}: wall {wall:7.1f} s  cpu {cpu:7.1f} s  peak RSS {rss / 2**30:6.2f} GiB "
            f"({rss / 1e9:.2f} GB)",
            flush=True,
        )
        if way == "blocks" and out.exists():
            size = sum(f.stat().st_size for f in out.iterdir())
            print(f"program file {out}: {size / 1e9:.2f} GB")
    if out.exists() and not args.keep:
        shutil.rmtree(out)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
