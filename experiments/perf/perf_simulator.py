"""Simulator speed: engine events per second and the cost of a full surrogate design.

Prints
* events per second of the discrete-event engine on the stream benchmark
  (single parameter set, and the parallel batch path);
* seconds to evaluate 2465 parameter sets x 18 message sizes for each benchmark
  (the level-4 sparse-grid design of the reference study).

Run: ``python experiments/perf/perf_simulator.py [--threads N]`` (default: every CPU
this process may use). Target: <= 10 s per benchmark for the whole design on a
2-core machine.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from mpiuq.simulator.benchmarks.run import BenchmarkSetup, benchmark_program, evaluate_batch
from mpiuq.simulator.engine import simulate
from mpiuq.simulator.parameters import TABLE1_PRIOR_RANGES, SimParams, params_matrix

N_SETS = 2465
SIZES = tuple(int(s) for s in np.unique(np.logspace(8, 20, 18, base=2).astype(int)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    threads = ap.parse_args().threads
    print(f"cores: {os.cpu_count()}, evaluate_batch threads: {threads}")
    # warm up the compiled kernels (compilation is cached on disk after the first run)
    setup = BenchmarkSetup("stream", window=64)
    t0 = time.perf_counter()
    simulate(benchmark_program(setup, 1024), SimParams())
    evaluate_batch(setup, [1024], params_matrix(SimParams(), (), np.zeros((2, 0))))
    print(f"kernel load/compile: {time.perf_counter() - t0:.2f} s")

    program = benchmark_program(BenchmarkSetup("stream", window=64, repetitions=200), 65536)
    t0, c0 = time.perf_counter(), time.process_time()
    run = simulate(program, SimParams())
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"single run, stream 64 KiB x 64 x 201 windows: {run.n_events:,} events in {dt:.4f} s "
        f"(CPU {cpu:.4f} s) = {run.n_events / dt / 1e6:.2f} M events/s"
    )

    rng = np.random.default_rng(0)
    names = tuple(TABLE1_PRIOR_RANGES)
    x = np.column_stack([rng.uniform(lo, hi, N_SETS) for lo, hi in TABLE1_PRIOR_RANGES.values()])
    matrix = params_matrix(SimParams(), names, x)
    for benchmark in ("pingpong", "stream"):
        setup = BenchmarkSetup(benchmark, window=64)
        t0, c0 = time.perf_counter(), time.process_time()
        batch = evaluate_batch(setup, SIZES, matrix, threads=threads)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"{benchmark:>8}: {N_SETS} parameter sets x {len(SIZES)} sizes in {dt:.3f} s "
            f"(CPU {cpu:.3f} s, {threads} threads) "
            f"({batch.n_events:,} events, {batch.n_events / dt / 1e6:.2f} M events/s)"
        )


if __name__ == "__main__":
    main()
