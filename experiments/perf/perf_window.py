"""Peak memory and time of the windowed kernel against the in-memory kernel, as whole processes.

A synthetic motif trace (default ``halo3d``, 4096 ranks, 20 iterations: the shape of
``mpiuq trace synth halo3d --ranks 4096 --iterations 20``) is lowered once and its
program spilled to raw files (table rows, 8-byte values, rank pointer, int32 wait list).
Then, each in a fresh process, the program is replayed with one network model:

* ``memory``: the whole program read into memory, :func:`simulate`;
* ``window``: the program read through per-rank windows of ``--window`` rows with
  ``os.preadv`` (no mmap), :func:`simulate_windowed`.

For each it prints the whole process's peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which includes numba's and the
interpreter's ~0.1 GB; the parent and the lowering run in other processes, since
Linux carries a process's peak over ``fork`` and ``exec``), the replay's wall seconds
(best of ``--repeat`` runs in that process; the first includes loading the compiled
loops from numba's cache, about 1 s) and, for the window run, how often the loop
stopped for a window. The two runs' end times and decompositions are compared bit for
bit. The load average is printed: timings on this shared 2-core machine vary.

Usage::

    python experiments/perf/perf_window.py [--motif halo3d] [--ranks 4096]
        [--iterations 20] [--window 256] [--model analytic] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import OPS_WIDTH


class RawProgramFiles:
    """A spilled program read with ``os.preadv``: a :class:`ProgramSource`."""

    def __init__(self, folder: Path) -> None:
        meta = json.loads((folder / "meta.json").read_text())
        self.n_ranks: int = meta["n_ranks"]
        self.n_ops: int = meta["n_ops"]
        self.n_requests: int = meta["n_requests"]
        self.n_marks: int = meta["n_marks"]
        self.call_names: tuple[str, ...] = tuple(meta["call_names"])
        self.rank_ptr = np.load(folder / "rank_ptr.npy")
        self.wait_list = np.load(folder / "wait_list.npy")
        self._ops = os.open(folder / "ops.bin", os.O_RDONLY)
        self._value = os.open(folder / "value.bin", os.O_RDONLY)

    @staticmethod
    def _read(fd: int, out: npt.NDArray[Any], offset: int) -> None:
        view = out.data.cast("B")
        done = 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], offset + done)
            if got <= 0:
                raise OSError(f"program file ends at byte {offset + done}")
            done += got

    def read_rows(
        self, start: int, stop: int, ops_out: npt.NDArray[np.int32], value_out: npt.NDArray[Any]
    ) -> None:
        k = stop - start
        if k > 0:
            self._read(self._ops, ops_out[:k], start * OPS_WIDTH * 4)
            self._read(self._value, value_out[:k], start * 8)


def spill(args: argparse.Namespace, folder: Path) -> None:
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.motifs import MotifSpec, synthesize

    trace = synthesize(MotifSpec(args.motif, n_ranks=args.ranks, iterations=args.iterations))
    p = lower_trace(trace).program
    del trace
    p.ops.tofile(folder / "ops.bin")
    p.nbytes.tofile(folder / "value.bin")  # one 8-byte column (the lowering's programs)
    np.save(folder / "rank_ptr.npy", p.rank_ptr)
    np.save(folder / "wait_list.npy", p.wait_list.astype(np.int32))
    meta = {
        "n_ranks": p.n_ranks,
        "n_ops": p.n_ops,
        "n_requests": int(p.n_requests),
        "n_marks": int(p.n_marks),
        "call_names": list(p.call_names),
    }
    (folder / "meta.json").write_text(json.dumps(meta))


def child(mode: str, folder: Path, args: argparse.Namespace) -> None:
    if mode == "spill":
        spill(args, folder)
        return
    from mpiuq.simulator.engine import simulate
    from mpiuq.simulator.program.table import Program
    from mpiuq.simulator.replay.run import ReplaySetup, network_and_nodes
    from mpiuq.simulator.replay.windowed import WindowStats, simulate_windowed

    src = RawProgramFiles(folder)
    factory, nodes = network_and_nodes(ReplaySetup(models=(args.model,)), src.n_ranks)
    net = factory(args.model)
    stats = WindowStats()
    if mode == "memory":
        ops = np.fromfile(folder / "ops.bin", np.int32).reshape(-1, OPS_WIDTH)
        value = np.fromfile(folder / "value.bin", np.int64)
        program = Program(
            n_ranks=src.n_ranks,
            rank_ptr=src.rank_ptr,
            ops=ops,
            nbytes=value,
            seconds=value.view(np.float64),
            wait_list=src.wait_list.astype(np.int64),  # as lower_trace gives it
            n_requests=src.n_requests,
            n_marks=src.n_marks,
            call_names=src.call_names,
        )

        def run() -> Any:
            return simulate(program, network=net, node_of_rank=nodes)
    else:

        def run() -> Any:
            return simulate_windowed(
                src, network=net, node_of_rank=nodes, window_rows=args.window, stats=stats
            )

    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = run()
        best = min(best, time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    np.savez(folder / f"{mode}.npz", end=res.end_s, parts=res.parts_s, calls=res.per_call_s)
    print(
        json.dumps(
            {
                "peak_bytes": peak,
                "best_s": best,
                "events": res.n_events,
                "stops": stats.stops // args.repeat,
                "refills": stats.refills // args.repeat,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--motif", default="halo3d")
    ap.add_argument("--ranks", type=int, default=4096)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--model", default="analytic")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"))
    args = ap.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args)
        return
    with tempfile.TemporaryDirectory(prefix="perf-window-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        # its own process: Linux carries a process's peak RSS over fork and exec, so the
        # parent stays small for its children's figures to be theirs
        common = ["--motif", args.motif, "--ranks", str(args.ranks)]
        common += ["--iterations", str(args.iterations), "--model", args.model]
        common += ["--window", str(args.window), "--repeat", str(args.repeat)]
        subprocess.run([sys.executable, __file__, "--child", "spill", tmp, *common], check=True)
        n_ops = json.loads((folder / "meta.json").read_text())["n_ops"]
        print(
            f"{args.motif} {args.ranks} ranks x {args.iterations} iterations: {n_ops} program "
            f"rows ({n_ops * 40 / 1e9:.2f} GB), lowered and spilled in "
            f"{time.perf_counter() - t0:.1f} s; model {args.model}, window {args.window} rows"
        )
        out = {}
        for mode in ("memory", "window"):
            cmd = [sys.executable, __file__, "--child", mode, tmp, *common]
            load = os.getloadavg()[0]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
            out[mode]["load"] = load
        a, b = np.load(folder / "memory.npz"), np.load(folder / "window.npz")
        same = all(np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)) for k in a.files)
    for mode, r in out.items():
        print(
            f"  {mode:6s}: peak RSS {r['peak_bytes'] / 2**30:.2f} GiB, replay {r['best_s']:.1f} s, "
            f"{r['events']} events, loop stops {r['stops']}, refills {r['refills']} "
            f"(load average {r['load']:.1f})"
        )
    print(f"  results bit-identical: {same}")


if __name__ == "__main__":
    main()
