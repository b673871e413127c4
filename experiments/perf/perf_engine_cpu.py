"""CPU seconds of the engine on fixed workloads: a steadier figure than wall time on a
shared machine (other processes inflate wall time far more than this process's CPU time).

Each workload runs ``--repeat`` times in this process after one warm-up; the best and
median CPU seconds (``time.process_time``) are printed, one line per workload:

* ``stream``: one stream benchmark run (64 KiB x 64 x 2001 windows, about 870 k events);
* ``batch pingpong`` / ``batch stream``: ``evaluate_batch`` of 500 parameter sets x 18
  sizes in one thread;
* ``<trace> <model>``: the simulation (not the lowering) of shared traces under the
  analytic, compute-only and packet (dragonfly and fat-tree sized for the trace) models.

Uses only the public API (runs on older checkouts too). Usage::

    python experiments/perf/perf_engine_cpu.py [--repeat 5] [--traces ti_lulesh_64r,...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"
TRACES = ("ti_lulesh_512r", "ti_nas_mg_A_256r", "ti_nekbone_64r", "ti_comd_256r")
SIZES = tuple(int(s) for s in np.unique(np.logspace(8, 20, 18, base=2).astype(int)))


def cpu_seconds(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm-up: compiled code loaded, caches filled
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


def report(name: str, times: list[float]) -> None:
    print(f"cpu {name}: {min(times):.4f} s (median {statistics.median(times):.4f} s)", flush=True)


def workloads(traces: list[str]) -> dict[str, Callable[[], object]]:
    from mpiuq.simulator.benchmarks.run import BenchmarkSetup, benchmark_program, evaluate_batch
    from mpiuq.simulator.engine import simulate
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.parameters import TABLE1_PRIOR_RANGES, SimParams, params_matrix
    from mpiuq.simulator.placement import place_ranks
    from mpiuq.simulator.trace import read_trace

    try:
        from mpiuq.simulator.networks import AnalyticNetwork, ComputeOnly, PacketNetwork
        from mpiuq.simulator.topologies import topology_for_ranks
    except ImportError:  # checkouts before networks/ and topologies/ held them
        from mpiuq.simulator.network import (  # type: ignore[no-redef]
            AnalyticNetwork,
            ComputeOnly,
            PacketNetwork,
        )
        from mpiuq.simulator.topology import topology_for_ranks  # type: ignore[no-redef]

    work: dict[str, Callable[[], object]] = {}
    program = benchmark_program(BenchmarkSetup("stream", window=64, repetitions=2000), 65536)
    work["stream"] = lambda: simulate(program, SimParams())
    rng = np.random.default_rng(0)
    x = np.column_stack([rng.uniform(lo, hi, 500) for lo, hi in TABLE1_PRIOR_RANGES.values()])
    matrix = params_matrix(SimParams(), tuple(TABLE1_PRIOR_RANGES), x)
    for bench in ("pingpong", "stream"):
        setup = BenchmarkSetup(bench, window=64)
        work[f"batch {bench}"] = lambda s=setup: evaluate_batch(s, SIZES, matrix, threads=1)  # type: ignore[misc]
    for name in traces:
        trace = read_trace(DATA / name)
        low = lower_trace(trace)
        models: dict[str, tuple[object, object]] = {
            "analytic": (AnalyticNetwork(), None),
            "compute-only": (ComputeOnly(), None),
        }
        for tname in ("dragonfly", "fattree"):
            topo = topology_for_ranks(tname, trace.n_ranks)
            nodes = place_ranks(trace.n_ranks, topo, "linear")  # type: ignore[arg-type]
            models[f"packet-{tname}"] = (PacketNetwork(topology=topo), nodes)  # type: ignore[arg-type]
        for mname, (net, nodes) in models.items():
            work[f"{name} {mname}"] = lambda n=net, d=nodes, p=low.program: simulate(  # type: ignore[misc]
                p, SimParams(), n, node_of_rank=d
            )
    return work


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--traces", default=",".join(TRACES))
    args = ap.parse_args()
    for name, fn in workloads([t for t in args.traces.split(",") if t]).items():
        report(name, cpu_seconds(fn, args.repeat))


if __name__ == "__main__":
    main()
