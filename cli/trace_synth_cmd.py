"""``mpiuq trace synth MOTIF``: write a synthetic application motif as an HDF5 trace."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mpiuq.simulator.motifs import DEFAULT_BYTES, MOTIFS, MotifSpec, synthesize
from mpiuq.simulator.trace import save_trace


def add_synth_parser(tsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``synth`` on the sub-parsers of ``mpiuq trace``."""
    p = tsub.add_parser(
        "synth",
        help="write a synthetic motif (halo3d, allreduce, alltoall, sweep, random) as a trace",
        description="Build a synthetic trace in the trace representation and save it as "
        "HDF5 (readable with load_trace_h5). Default bytes per motif: "
        + ", ".join(f"{m}={b}" for m, b in DEFAULT_BYTES.items()),
    )
    p.add_argument("motif", choices=MOTIFS, metavar="MOTIF", help=f"one of {', '.join(MOTIFS)}")
    p.add_argument("--ranks", type=int, required=True, help="number of MPI ranks")
    p.add_argument("--iterations", type=int, required=True, help="iterations per rank")
    p.add_argument("--bytes", type=int, default=None, help="bytes per message (motif default)")
    p.add_argument(
        "--compute-us", type=float, default=0.0, help="compute per iteration in us (default 0)"
    )
    p.add_argument(
        "--neighbours", type=int, choices=(6, 26), default=26, help="halo3d neighbours (26)"
    )
    p.add_argument(
        "--allreduce-every", type=int, default=1, help="halo3d: allreduce period in iterations"
    )
    p.add_argument("--seed", type=int, default=0, help="random: seed of the permutations")
    p.add_argument("--out", type=Path, required=True, help="output HDF5 file (e.g. halo.h5)")
    p.add_argument(
        "--no-validate", action="store_true", help="skip Trace.validate() (very large traces)"
    )
    p.set_defaults(handler=run_synth)


def run_synth(args: argparse.Namespace) -> int:
    """Execute ``mpiuq trace synth``."""
    spec = MotifSpec(
        args.motif,
        n_ranks=args.ranks,
        iterations=args.iterations,
        message_bytes=args.bytes,
        compute_s=args.compute_us * 1e-6,
        neighbours=args.neighbours,
        allreduce_every=args.allreduce_every,
        seed=args.seed,
    )
    start = time.perf_counter()
    trace = synthesize(spec)
    built = time.perf_counter() - start
    if not args.no_validate:
        trace.validate()
    save_trace(trace, args.out)
    print(
        f"{args.out}: {spec.motif}, {trace.n_ranks} ranks, {spec.iterations} iterations, "
        f"{trace.n_ops} operations (built in {built:.2f} s)"
    )
    for note in trace.notes:
        print(f"  {note}")
    return 0
