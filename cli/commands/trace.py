"""``mpiuq trace info TRACE``: what a trace holds, as a table or JSON."""

from __future__ import annotations

import argparse
from pathlib import Path

from mpiuq.commands.trace_synth import add_synth_parser
from mpiuq.runtime.progress import Progress, add_quiet_argument
from mpiuq.simulator.trace.ir import TraceSummary
from mpiuq.surrogate.store.json_text import json_text


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``trace`` sub-command (``trace info``)."""
    p = sub.add_parser("trace", help="inspect MPI traces (DUMPI, OTF2, SimGrid TI)")
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    add_synth_parser(tsub)  # `mpiuq trace synth` (synthetic motifs)
    info = tsub.add_parser("info", help="format, ranks, events per kind, bytes, compute time")
    info.add_argument("trace", type=Path, help="trace file or directory")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.add_argument(
        "--flop-rate", type=float, default=1e9, help="TI traces: host speed in flop/s (default 1e9)"
    )
    info.add_argument(
        "--clock",
        choices=("auto", "wall", "cpu"),
        default="auto",
        help="DUMPI traces: clock for compute gaps (default auto)",
    )
    info.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="trace cache directory (default $MPIUQ_CACHE_DIR or ~/.cache)",
    )
    info.add_argument("--no-cache", action="store_true", help="always parse, never cache")
    add_quiet_argument(info)
    info.set_defaults(handler=run_info)


def format_summary(s: TraceSummary) -> str:
    """Readable multi-line table of a trace summary."""
    lines = [
        f"trace        {s.source}",
        f"format       {s.format}",
        f"ranks        {s.n_ranks}",
        f"operations   {s.n_ops}",
        f"p2p sent     {s.p2p_messages_sent} messages, {s.p2p_bytes_sent} bytes",
        f"collectives  {s.collective_calls}",
        f"compute      {s.compute_seconds:.6g} s total, {s.compute_seconds_per_rank_max:.6g} s "
        "on the busiest rank",
        f"requests     {s.n_requests} ({s.n_uncompleted_requests} never completed)",
        f"communicators {len(s.communicator_sizes)} (sizes: "
        + ", ".join(str(n) for n in s.communicator_sizes[:16])
        + (", ..." if len(s.communicator_sizes) > 16 else "")
        + ")",
        "",
        "operations per kind:",
    ]
    lines += [f"  {k:<16}{v:>12}" for k, v in sorted(s.ops_per_kind.items())]
    lines += ["", "operations per MPI call:"]
    lines += [f"  {k:<28}{v:>12}" for k, v in sorted(s.ops_per_call.items())]
    lines += ["", "calls not represented (unsupported or no-op):"]
    lines += [f"  {k:<48}{v:>10}" for k, v in sorted(s.unsupported.items())] or ["  none"]
    lines += ["", "notes:"] + [f"  - {n}" for n in s.notes]
    return "\n".join(lines)


def run_info(args: argparse.Namespace) -> int:
    """Execute ``mpiuq trace info``."""
    from mpiuq.simulator.trace.detect import detect_format

    detect_format(args.trace)  # a missing or unknown trace is refused before the readers load
    from mpiuq.runtime.replay_progress import read_with_progress

    trace = read_with_progress(
        Progress.of(args),
        args.trace,
        flop_rate=args.flop_rate,
        clock=args.clock,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    summary = trace.summary()
    if args.json:
        print(json_text(summary.as_dict(), indent=2, sort_keys=True, where="trace info --json"))
    else:
        print(format_summary(summary))
    return 0
