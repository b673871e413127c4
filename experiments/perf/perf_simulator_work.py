"""The nominal costs of the posterior-path choice against measured CPU time.

The automatic posterior path (``calibration/sampling/posterior_path.py``) prices a batch of
the built-in simulator by its counted work (programs built, programs run, kernel events) at
fixed nominal costs, so that the choice does not depend on the machine or its load. This
script measures the CPU time of batches of every benchmark kind (the best of three calls,
after one warm-up call that also loads the compiled kernels), prints the measured time next
to the nominal price of the same work, and fits the three unit costs again by least
squares in relative error, to show how far this machine is from the nominal ones.

Usage::

    python experiments/perf/perf_simulator_work.py [--rows 4,16,64,256]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mpiuq.calibration.sampling.posterior_path import (
    NOMINAL_SECONDS_PER_EVENT,
    NOMINAL_SECONDS_PER_PROGRAM,
    NOMINAL_SECONDS_PER_RUN,
    nominal_seconds,
)
from mpiuq.simulator.benchmarks.kinds import BENCHMARK_KINDS
from mpiuq.simulator.benchmarks.run import BenchmarkModel, SimulationWork

#: The stock campaign's 18 sizes, 1 B to 4 MiB.
SIZES = tuple(int(s) for s in np.unique(np.logspace(0, 22, 18, base=2).astype(int)))


def cpu_seconds(model: BenchmarkModel, x: np.ndarray, repeat: int = 3) -> float:
    """Best CPU time of ``repeat`` calls of ``model`` on ``x`` (seconds)."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        model(x)
        best = min(best, time.process_time() - t0)
    return float(best)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="4,16,64,256", help="parameter sets per batch")
    args = ap.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    print(
        f"nominal: {NOMINAL_SECONDS_PER_PROGRAM * 1e6:.0f} us per program, "
        f"{NOMINAL_SECONDS_PER_RUN * 1e6:.1f} us per run, "
        f"{NOMINAL_SECONDS_PER_EVENT * 1e9:.0f} ns per event; {len(SIZES)} sizes"
    )
    print(f"{'benchmark':22s} {'rows':>5s} {'events':>9s} {'CPU s':>9s} {'nominal s':>9s} ratio")
    counts, measured = [], []
    for kind in BENCHMARK_KINDS.names():
        model = BenchmarkModel(kind, SIZES, ("post_header_delay_us",))
        model(np.full((2, 1), 0.5))  # warm-up: the compiled kernels load
        for n in rows:
            x = np.column_stack([np.linspace(0.3, 0.7, n)])
            work: SimulationWork = model.work(x)
            cpu = cpu_seconds(model, x)
            price = nominal_seconds(work)
            counts.append([work.programs, work.runs, work.events])
            measured.append(cpu)
            print(f"{kind:22s} {n:5d} {work.events:9d} {cpu:9.4f} {price:9.4f} {price / cpu:5.2f}")
    a, y = np.asarray(counts, dtype=np.float64), np.asarray(measured)
    fit, *_ = np.linalg.lstsq(a / y[:, None], np.ones_like(y), rcond=None)
    ratio = (a @ fit) / y
    print(
        f"fitted on this machine: {fit[0] * 1e6:.0f} us per program, {fit[1] * 1e6:.2f} us per "
        f"run, {fit[2] * 1e9:.1f} ns per event; fit within {np.max(np.abs(ratio - 1)):.1%}"
    )
    nominal = np.array([nominal_seconds(SimulationWork(*map(int, c))) for c in counts]) / y
    print(f"nominal / measured: {nominal.min():.2f} - {nominal.max():.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
