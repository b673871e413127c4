"""Replay at scale: a halo3d + allreduce motif on 16,384 ranks, three network models.

Synthesises the motif (6-neighbour halo exchange of 4 KiB per neighbour, 20 us of
compute and one 8-byte MPI_Allreduce per iteration), lowers it once, and replays it
on the reference paper's dragonfly (86 groups x 48 switches x 4 nodes, 8 global
links per switch, minimal routing) with the packet, analytic and compute-only
models. Prints, per model: engine events, seconds, events per second, simulated
time, the decomposition, and the peak resident memory of the process so far; then
how much of the network time is congestion (packet minus analytic) and the
hottest links. In one process, with the motif synthesised in memory; the issue-15
case as a user runs it (two ``mpiuq`` commands, timed and measured per stage) is
``perf_scale_cli.py``.

Usage::

    python experiments/perf/perf_scale.py [--ranks 16384] [--iterations 12] [--packet-bytes 4096]
"""

from __future__ import annotations

import argparse
import resource
import time

from mpiuq.simulator.engine import simulate
from mpiuq.simulator.lowering.lower import lower_trace
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.networks import network_by_name
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.placement import place_ranks
from mpiuq.simulator.replay.link_report import hottest_links
from mpiuq.simulator.topologies import topology_for_ranks


def peak_rss_gib() -> float:
    """Peak resident memory of this process, GiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=16384)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--packet-bytes", type=int, default=4096)
    args = parser.parse_args()

    t0 = time.perf_counter()
    spec = MotifSpec(
        "halo3d",
        n_ranks=args.ranks,
        iterations=args.iterations,
        neighbours=6,
        allreduce_every=1,
        compute_s=20e-6,
    )
    trace = synthesize(spec)
    t_synth = time.perf_counter() - t0
    t0 = time.perf_counter()
    lowered = lower_trace(trace)
    t_lower = time.perf_counter() - t0
    program = lowered.program
    topo = topology_for_ranks("dragonfly", args.ranks)
    nodes = place_ranks(args.ranks, topo, "linear")
    print(
        f"halo3d + allreduce, {args.ranks} ranks x {args.iterations} iterations: "
        f"{trace.n_ops:,} trace ops (synthesised in {t_synth:.1f} s) -> {program.n_ops:,} "
        f"engine ops, {program.n_requests:,} requests (lowered in {t_lower:.1f} s)"
    )
    print(f"topology: {topo.describe().splitlines()[0]}")
    params = SimParams()
    runs = {}
    for name in ("packet", "analytic", "compute-only"):
        network = (
            network_by_name(name, topology=topo, packet_bytes=args.packet_bytes)
            if name == "packet"
            else network_by_name(name, topology=topo)
        )
        t0 = time.perf_counter()
        run = simulate(program, params, network, node_of_rank=nodes)
        dt = time.perf_counter() - t0
        runs[name] = run
        d = run.total()
        print(
            f"{name:>12}: {run.n_events:>12,} events in {dt:6.1f} s = "
            f"{run.n_events / dt / 1e6:5.2f} M events/s; simulated {run.simulated_time_s * 1e3:.3f} ms; "
            f"compute {d.compute_s:.3f} s, network {d.network_s:.3f} s, MPI stack "
            f"{d.mpi_stack_s:.3f} s, sync {d.sync_s:.3f} s (summed over ranks); "
            f"peak RSS so far {peak_rss_gib():.2f} GiB"
        )
    congestion = runs["packet"].total().network_s - runs["analytic"].total().network_s
    print(
        f"congestion (packet minus analytic network time): {congestion:.3f} s summed over ranks, "
        f"{congestion / max(runs['packet'].total().network_s, 1e-300):.0%} of the packet model's network time"
    )
    packet = runs["packet"]
    for usage in hottest_links(packet.link_bytes, topo, params, packet.simulated_time_s, top=5):
        print(
            f"  hot link {usage.link:>7} ({usage.link_class}, {usage.src} -> {usage.dst}): "
            f"{usage.bytes / 1e6:8.2f} MB, utilisation {usage.utilisation:.1%}"
        )
    print(f"peak RSS of the whole run: {peak_rss_gib():.2f} GiB")


if __name__ == "__main__":
    main()
