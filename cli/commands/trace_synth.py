"""``mpiuq trace synth MOTIF``: write a synthetic application motif as an HDF5 trace."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES
from mpiuq.commands.arguments import seed_argument
from mpiuq.runtime.progress import Progress, add_quiet_argument
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.motifs import DEFAULT_BYTES, MOTIFS, MotifSpec, synthesize
from mpiuq.surrogate.budget import check_memory


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
    p.add_argument("--seed", type=seed_argument, default=0, help="random: seed of the permutations")
    p.add_argument("--out", type=Path, required=True, help="output HDF5 file (e.g. halo.h5)")
    p.add_argument(
        "--no-validate", action="store_true", help="skip Trace.validate() (very large traces)"
    )
    add_quiet_argument(p)
    p.set_defaults(handler=run_synth)


#: Upper bound of the trace operations per rank and iteration of each motif.
OPS_PER_RANK_ITERATION = {"halo3d": 56, "allreduce": 2, "alltoall": 2, "sweep": 5, "random": 5}
#: Peak memory per trace operation while a motif is built, validated and saved, bytes:
#: 100 B measured (halo3d, 8192 ranks x 20 iterations: 973 MB peak for 8.8 M operations,
#: 100 MB of it the interpreter and libraries), with a 60 % margin. (400 B refused the
#: 16,384-rank, 40-iteration halo3d motif on a 24 GiB machine; it needs about 4 GB.)
BYTES_PER_TRACE_OP = 160
#: Largest compute time per iteration, us.
MAX_COMPUTE_US = 1e9


def check_synth_settings(args: argparse.Namespace) -> None:
    """Refuse message sizes and compute times out of range, and motifs over the memory budget."""
    if args.bytes is not None and not 0 <= args.bytes <= MAX_MESSAGE_BYTES:
        raise SettingError(
            f"--bytes {args.bytes} is invalid: expected a whole number of bytes in "
            f"0..{MAX_MESSAGE_BYTES}"
        )
    if not (math.isfinite(args.compute_us) and 0 <= args.compute_us <= MAX_COMPUTE_US):
        raise SettingError(
            f"--compute-us {args.compute_us} is invalid: expected a number of us in "
            f"[0, {MAX_COMPUTE_US:g}]"
        )
    ops = float(max(args.ranks, 0)) * max(args.iterations, 0)
    ops *= OPS_PER_RANK_ITERATION[args.motif]
    check_memory(
        f"the {args.motif} motif on {args.ranks} ranks x {args.iterations} iterations",
        ops * BYTES_PER_TRACE_OP,
        f"up to {ops:.3g} trace operations",
    )


def run_synth(args: argparse.Namespace) -> int:
    """Execute ``mpiuq trace synth``."""
    check_synth_settings(args)
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
    from mpiuq.simulator.trace.cache.store import save_trace
    from mpiuq.surrogate.store.hdf5_errors import naming_hdf5_errors

    progress = Progress.of(args)
    start = time.perf_counter()
    with progress.stage(f"building {spec.motif}") as done:
        trace = synthesize(spec)
        done(f"{trace.n_ranks} ranks, {trace.n_ops:,} operations")
    built = time.perf_counter() - start
    if not args.no_validate:
        with progress.stage("validating"):
            trace.validate()
    with progress.stage(f"writing {args.out}"):
        try:
            with naming_hdf5_errors(args.out):
                save_trace(trace, args.out)
        except OSError:
            args.out.unlink(missing_ok=True)  # HDF5 may have reported the failure too late
            raise
    print(
        f"{args.out}: {spec.motif}, {trace.n_ranks} ranks, {spec.iterations} iterations, "
        f"{trace.n_ops} operations (built in {built:.2f} s)"
    )
    for note in trace.notes:
        print(f"  {note}")
    return 0
