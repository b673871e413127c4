"""Does mpiuq's replay agree with SimGrid 3.32's own replay of the shared TI traces?

For every shared mini-app TI trace (``ti_*`` with a SimGrid platform file) it runs
``smpirun -replay`` (SimGrid 3.32, Debian ``simgrid`` / ``libsimgrid-dev``; skipped with
a message when ``smpirun`` is absent) and mpiuq's analytic model with SimGrid-equivalent
parameters, once with mpiuq's MPICH-like collectives and once with SimGrid's default
selection (``--collectives simgrid``), and prints the simulated times and their
relative differences.

SimGrid-equivalent parameters of the traces' platform (``platform_cluster1024.xml``:
one host per rank, 1 Gflop/s, private links of 12.5 GB/s and 1 us, a 100 GB/s
backbone with no latency): a message crosses two private links (``hops = 2``,
``hop_latency_ns = 1000 * lat_factor``) at ``12.5 GB/s * bw_factor`` for injection and
link; SMPI's ``os``/``or`` overheads are 0 by default, so the MPI stack costs are set
negligible (1e-6 us, memory copies at 1e6 GB/s); sends below SMPI's
``send-is-detached-thresh`` (65536 B) return at once (mpiuq's mailbox protocol up to
65535 B), larger ones wait for the receiver (rendezvous).

Two SimGrid configurations (``--config``):

``flat`` (default)
    SMPI's size-dependent correction factors switched off (``smpi/bw-factor:0:1``,
    ``smpi/lat-factor:0:1``): SimGrid's network is then exactly "latency 2 us,
    12.5 GB/s", which mpiuq's parameters express (factors 1).
``smpi``
    SimGrid's defaults (factor tables from MPI benchmarks on a real cluster, 0.34-1.09
    on bandwidth and 1.6-11.6 on latency by size); mpiuq uses the factors of messages
    below 257 B (lat 2.01467, bw 0.812084), which its size-independent model cannot
    follow for larger messages.

Usage::

    python experiments/checks/simgrid_agreement.py [--traces ti_nekbone_64r,...|all]
        [--config flat|smpi] [--timeout 600]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
from perf_replay import DATA, all_ti_traces, index_of, simgrid

#: smpirun options and mpiuq (latency factor, bandwidth factor) per configuration.
CONFIGS: dict[str, tuple[tuple[str, ...], float, float]] = {
    "flat": (("smpi/bw-factor:0:1", "smpi/lat-factor:0:1"), 1.0, 1.0),
    "smpi": ((), 2.01467, 0.812084),
}
LINK_GBPS = 12.5
LINK_LATENCY_NS = 1000.0


def equivalent_params(lat_factor: float, bw_factor: float) -> dict[str, float]:
    """mpiuq parameters equivalent to the traces' SimGrid platform under the factors."""
    bw = LINK_GBPS * bw_factor
    return {
        "injection_bw_GBps": bw,
        "link_bw_GBps": bw,
        "memory_bw_GBps": 1e6,
        "post_header_delay_us": 1e-6,
        "post_rdma_delay_us": 1e-6,
        "rdma_pin_latency_us": 1e-6,
        "rdma_pin_per_page_ns": 1e-6,
        "hop_latency_ns": LINK_LATENCY_NS * lat_factor,
        "small_max_bytes": 65535,
        "eager_max_bytes": 65535,
    }


def mpiuq_time(trace_dir: Path, params: dict[str, float], collectives: str) -> float:
    """mpiuq's simulated time of the trace (analytic model, two hops per message)."""
    from mpiuq.simulator.collectives import algorithm_set
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay.run import ReplaySetup, replay
    from mpiuq.simulator.trace import read_trace

    trace = read_trace(index_of(trace_dir, replayable=False))
    setup = ReplaySetup(
        models=("analytic",), hops=2, algorithms=tuple(algorithm_set(collectives).items())
    )
    return replay(trace, SimParams.from_mapping(params), setup).models[0].simulated_time_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="all")
    ap.add_argument("--config", choices=sorted(CONFIGS), default="flat")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    names = all_ti_traces() if args.traces == "all" else args.traces.split(",")
    cfg, lat_f, bw_f = CONFIGS[args.config]
    params = equivalent_params(lat_f, bw_f)
    print(
        f"SimGrid config {args.config!r} ({', '.join(cfg) or 'defaults'}); mpiuq analytic, "
        f"hops 2, hop latency {params['hop_latency_ns']:g} ns, bandwidth "
        f"{params['link_bw_GBps']:g} GB/s, negligible stack costs"
    )
    print(
        f"{'trace':<20}{'SimGrid s':>12}{'mpiuq mpich':>14}{'diff':>8}{'mpiuq simgrid':>15}{'diff':>8}"
    )
    within = []
    for name in names:
        trace_dir = DATA / name
        sg = simgrid(trace_dir, args.timeout, cfg)
        if sg is None:
            print("smpirun not found (apt-get install simgrid libsimgrid-dev): skipped")
            return
        ref = sg["simulated"]
        mp = mpiuq_time(trace_dir, params, "mpich")
        ms = mpiuq_time(trace_dir, params, "simgrid")
        d_mp, d_ms = mp / ref - 1.0, ms / ref - 1.0
        within.append(abs(d_ms) <= 0.01)
        print(f"{name:<20}{ref:>12.6g}{mp:>14.6g}{d_mp:>+8.1%}{ms:>15.6g}{d_ms:>+8.1%}")
    print(
        f"with SimGrid's collectives: {sum(within)} of {len(within)} traces within 1% of "
        "SimGrid's simulated time"
    )


if __name__ == "__main__":
    main()
