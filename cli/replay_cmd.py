"""``mpiuq replay TRACE``: where does an application's MPI time go?

Replays a DUMPI, OTF2 or SimGrid TI trace with the (calibrated) endpoint model
under one or more network models and prints, per model, the time of all ranks
split into compute, network, MPI stack and synchronisation. ``--out DIR``
writes ``DIR/replay.json`` and ``DIR/decomposition.png`` (stacked bars per model,
like Fig. 8 of the reference paper).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mpiuq.arguments import add_param_argument, bounded_number, parse_assignments
from mpiuq.calibration.calibrated import ESTIMATES, load_calibrated
from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.networks import NETWORK_MODELS
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay import ReplayResult, ReplaySetup, replay
from mpiuq.simulator.trace import read_trace


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``replay`` sub-command."""
    p = sub.add_parser(
        "replay",
        help="replay an MPI trace and split its time into compute/network/stack/sync",
        description="Replay a trace on the simulator under one or more network models.",
    )
    p.add_argument("trace", type=Path, help="trace file or directory (DUMPI, OTF2, SimGrid TI)")
    p.add_argument(
        "--model",
        default="analytic,compute-only",
        help=f"comma-separated network models, of {', '.join(NETWORK_MODELS)} "
        "(default analytic,compute-only)",
    )
    p.add_argument(
        "--params",
        type=Path,
        default=None,
        metavar="CAMPAIGN",
        help="calibrated parameters: a campaign result directory (results/<campaign>) "
        "or its summary.json",
    )
    p.add_argument(
        "--estimate",
        choices=ESTIMATES,
        default="median",
        help="posterior estimate used (median; map only where the campaign found a unique mode)",
    )
    add_param_argument(p)
    p.add_argument(
        "--compute-scale",
        type=bounded_number(0.0, 1e6),
        default=1.0,
        help="factor on the trace's compute times (the reference study used 0.1; default 1)",
    )
    p.add_argument(
        "--reduce-rate",
        type=bounded_number(1e-6, 1e6),
        default=None,
        metavar="GBPS",
        help="reduction operator rate in GB/s (default: memory_bw_GBps)",
    )
    p.add_argument(
        "--algorithm",
        action="append",
        default=[],
        metavar="COLLECTIVE=ALGORITHM",
        help="collective algorithm, e.g. allreduce=ring (see mpiuq.simulator.collectives)",
    )
    p.add_argument(
        "--hops",
        type=bounded_number(1, 1000, integer=True),
        default=2,
        help="links per message, analytic model (2)",
    )
    p.add_argument(
        "--topology",
        default=None,
        help="topology spec, e.g. dragonfly:groups=9,switches=8 or just dragonfly "
        "(sized for the trace); the packet model defaults to dragonfly",
    )
    p.add_argument(
        "--placement",
        choices=("linear", "round-robin", "random"),
        default="linear",
        help="rank placement on the topology (linear)",
    )
    p.add_argument(
        "--flop-rate", type=bounded_number(1.0, 1e18), default=1e9, help="TI traces: flop/s (1e9)"
    )
    p.add_argument(
        "--clock", choices=("auto", "wall", "cpu"), default="auto", help="DUMPI compute clock"
    )
    p.add_argument("--out", type=Path, default=None, help="write replay.json and decomposition.png")
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    p.set_defaults(handler=run)


def parse_algorithms(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``["allreduce=ring"]`` -> ``(("allreduce", "ring"),)`` (validated by ReplaySetup)."""
    out = []
    for item in items:
        coll, sep, alg = item.partition("=")
        if not sep or not coll or not alg:
            raise SettingError(f"--algorithm {item!r} is invalid: expected COLLECTIVE=ALGORITHM")
        out.append((coll.strip(), alg.strip()))
    return tuple(out)


def build_params(args: argparse.Namespace) -> SimParams:
    """Defaults, then the campaign's values, then ``--param`` overrides."""
    values: dict[str, Any] = {}
    if args.params is not None:
        values.update(load_calibrated(args.params, args.estimate).values())
    values.update(parse_assignments(args.param))
    try:
        return SimParams.from_mapping(values)
    except TypeError as exc:  # pragma: no cover - from_mapping validates names first
        raise ParameterError("params", values, "valid parameter values") from exc


def format_table(result: ReplayResult) -> str:
    """Readable table: one row per model, seconds summed over ranks and shares of the total."""
    lines = [
        f"trace {result.source} ({result.format}, {result.n_ranks} ranks, "
        f"{result.n_trace_ops} operations -> {result.n_program_ops} lowered, "
        f"lowering {result.lowering_s:.2f} s)",
        f"{'model':<14}{'sim time s':>12}{'compute s':>12}{'network s':>12}{'MPI stack s':>12}"
        f"{'sync s':>12}{'events':>11}{'wall s':>8}",
    ]
    for m in result.models:
        d = m.decomposition
        lines.append(
            f"{m.model:<14}{m.simulated_time_s:>12.6g}{d.compute_s:>12.6g}{d.network_s:>12.6g}"
            f"{d.mpi_stack_s:>12.6g}{d.sync_s:>12.6g}{m.events:>11d}{m.wall_s:>8.2f}"
        )
        total = d.total_s
        if total > 0:
            lines.append(
                f"{'  share':<14}{'':>12}{d.compute_s / total:>12.1%}{d.network_s / total:>12.1%}"
                f"{d.mpi_stack_s / total:>12.1%}{d.sync_s / total:>12.1%}"
            )
        if m.n_unmatched:
            lines.append(f"  warning: {m.n_unmatched} message(s) never received")
        for u in m.hot_links[:3]:
            lines.append(
                f"  hot link {u.link} ({u.link_class}, {u.src} -> {u.dst}): "
                f"{u.bytes / 1e6:.3g} MB, utilisation {u.utilisation:.1%}"
            )
    congestion = result.congestion_s
    if congestion is not None:
        packet_net = result.model("packet").decomposition.network_s
        share = congestion / packet_net if packet_net > 0 else 0.0
        lines.append(
            f"congestion (packet minus analytic network time): {congestion:.6g} s summed over "
            f"ranks ({share:.1%} of the packet model's network time)"
        )
    if result.collectives:
        algs = ", ".join(f"{k}: {'/'.join(v)}" for k, v in sorted(result.algorithms.items()))
        lines.append(f"collective algorithms: {algs}")
    if result.nonblocking_collectives:
        lines.append(
            f"{result.nonblocking_collectives} nonblocking collective call(s) run at the call"
        )
    if result.unsupported:
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(result.unsupported.items()))
        lines.append(f"not replayed (not in the trace's operations): {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mpiuq replay``."""
    models = tuple(m.strip() for m in args.model.split(",") if m.strip())
    params = build_params(args)
    setup = ReplaySetup(
        models=models,
        compute_scale=args.compute_scale,
        reduce_rate_Bps=None if args.reduce_rate is None else args.reduce_rate * 1e9,
        algorithms=parse_algorithms(args.algorithm),
        hops=args.hops,
        topology=args.topology,
        placement=args.placement,
    )
    trace = read_trace(args.trace, flop_rate=args.flop_rate, clock=args.clock)
    result = replay(trace, params, setup)
    data = result.as_dict()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "replay.json").write_text(json.dumps(data, indent=1) + "\n")
        from mpiuq.replay_plots import plot_decomposition

        plot_decomposition(result, args.out / "decomposition.png")
    if args.json:
        json.dump(data, sys.stdout, indent=1)
        print()
    else:
        print(format_table(result))
        if args.out is not None:
            print(f"wrote {args.out / 'replay.json'} and {args.out / 'decomposition.png'}")
    return 0
