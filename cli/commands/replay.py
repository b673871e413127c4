"""``mpiuq replay TRACE``: where does an application's MPI time go?

Replays a DUMPI, OTF2 or SimGrid TI trace with the (calibrated) endpoint model
under one or more network models and prints, per model, the time of all ranks
split into compute, network, MPI stack and synchronisation. With ``--params
results/X`` the campaign's **posterior draws** are replayed (``--draws``, default 64;
the trace is lowered once) and every figure comes with its mean, sd and 90% HDI;
``--estimate median|mean|map`` replays one point instead. ``--out DIR`` writes
``DIR/replay.json`` and ``DIR/decomposition.png`` (per model, like Fig. 8 of the
reference paper; with error bars for draws).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from mpiuq.commands.arguments import add_param_argument, bounded_number, output_folder
from mpiuq.commands.posterior_args import ParameterSets, add_posterior_arguments, parameter_sets
from mpiuq.reports.result_output import emit
from mpiuq.runtime.progress import Progress, add_quiet_argument
from mpiuq.simulator.codes import FLOW_SHARING_NAMES, NETWORK_MODELS
from mpiuq.simulator.collectives import ALGORITHM_SETS, algorithm_set
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.replay.simgrid_like import LIKE_TARGETS
from mpiuq.simulator.trace.ir import Trace

if TYPE_CHECKING:  # the replay engine (numba) is imported when a replay runs
    from mpiuq.simulator.platform import Platform
    from mpiuq.simulator.replay.run import ReplayResult, ReplaySetup


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``replay`` sub-command."""
    p = sub.add_parser(
        "replay",
        help="replay an MPI trace and split its time into compute/network/stack/sync",
        description="Replay a trace on the simulator under one or more network models.",
    )
    p.add_argument("trace", type=Path, help="trace file or directory (DUMPI, OTF2, SimGrid TI)")
    add_replay_options(p)
    add_posterior_arguments(p)
    add_param_argument(p)
    p.add_argument(
        "--threads",
        type=bounded_number(1, 1024, integer=True),
        default=None,
        help="models run at once, in threads of this process (default: "
        "$MPIUQ_SIMULATOR_THREADS, else one per usable core; at most one per model; each "
        "holds its own simulation state); same results",
    )
    p.add_argument(
        "--stream",
        choices=("auto", "on", "off"),
        default="auto",
        help="lower the trace's HDF5 file (the trace, or its cache entry) in blocks into a "
        "program file and replay it through per-rank windows: memory bounded by ranks and "
        "requests, not trace length; 'auto' (default) streams traces of 4 M operations "
        "or more; same results",
    )
    p.add_argument(
        "--scratch",
        type=Path,
        default=None,
        help="folder of the streamed replay's temporary program file (about 100 B per trace "
        "operation; default: $TMPDIR or /tmp)",
    )
    p.add_argument(
        "--window-rows",
        type=bounded_number(1, 1 << 31, integer=True),
        default=None,
        help="streamed replay: program rows each rank's window holds (40 B each; default 256)",
    )
    p.add_argument(
        "--out", type=output_folder, default=None, help="write replay.json and decomposition.png"
    )
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    p.set_defaults(handler=run)


def model_threads(args: argparse.Namespace) -> int:
    """Threads of a point replay: ``--threads``, else ``$MPIUQ_SIMULATOR_THREADS``, else
    one per usable core (:func:`~mpiuq.simulator.runtime.watch.simulator_threads`)."""
    from mpiuq.simulator.runtime.watch import simulator_threads

    return int(args.threads) if args.threads is not None else simulator_threads()


def add_replay_options(p: argparse.ArgumentParser, models: str = "analytic,compute-only") -> None:
    """The options of how a trace is read and replayed (models, algorithms, topology...);
    ``models`` is the default of ``--model`` (``flow`` with ``--platform`` or ``--like``)."""
    p.set_defaults(default_models=models)
    p.add_argument(
        "--model",
        default=None,
        help=f"comma-separated network models, of {', '.join(NETWORK_MODELS)} (default {models}; "
        "flow with --platform or --like simgrid)",
    )
    p.add_argument(
        "--platform",
        type=Path,
        default=None,
        metavar="FILE.xml",
        help="SimGrid platform file of one <cluster> (flat with bb_bw/bb_lat, FAT_TREE, "
        "DRAGONFLY, TORUS): the network of the flow model, and the hosts' speed",
    )
    p.add_argument(
        "--hostfile",
        type=Path,
        default=None,
        metavar="FILE",
        help="SMPI hostfile: rank r on its r-th host (NAME or NAME:N per line; default: the "
        "platform's hosts sorted by name, as SimGrid)",
    )
    p.add_argument(
        "--like",
        choices=LIKE_TARGETS,
        default=None,
        help="replay with another simulator's semantics: simgrid = SimGrid 3.32's SMPI "
        "(flow model with SMPI's sharing, detached sends below 64 KiB, free endpoints and "
        "reductions, SimGrid's collective selector; see docs/simgrid.md)",
    )
    p.add_argument(
        "--sharing",
        choices=tuple(FLOW_SHARING_NAMES),
        default=None,
        help="flow model's sharing rules: maxmin (equal shares, default), cm02, lv08 or smpi "
        "(SimGrid's models; --like simgrid sets smpi)",
    )
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
        "--collectives",
        choices=sorted(ALGORITHM_SETS),
        default="mpich",
        help="collective algorithm selection: mpich (size-based MPICH defaults) or simgrid "
        "(SimGrid 3.32's default selector); --algorithm choices win",
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
        help=topology_help(),
    )
    p.add_argument(
        "--placement",
        choices=("linear", "round-robin", "random"),
        default="linear",
        help="rank placement on the topology (linear)",
    )
    p.add_argument(
        "--flop-rate",
        type=bounded_number(1.0, 1e18),
        default=None,
        help="TI traces: flop/s (default: the platform's host speed, else 1e9)",
    )
    p.add_argument(
        "--clock", choices=("auto", "wall", "cpu"), default="auto", help="DUMPI compute clock"
    )
    add_quiet_argument(p)


def parse_algorithms(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``["allreduce=ring"]`` -> ``(("allreduce", "ring"),)`` (validated by ReplaySetup)."""
    out = []
    for item in items:
        coll, sep, alg = item.partition("=")
        if not sep or not coll or not alg:
            raise SettingError(f"--algorithm {item!r} is invalid: expected COLLECTIVE=ALGORITHM")
        out.append((coll.strip(), alg.strip()))
    return tuple(out)


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


def replay_setup(args: argparse.Namespace) -> ReplaySetup:
    """The :class:`ReplaySetup` of the replay options (``--like`` applied)."""
    from mpiuq.simulator.replay.run import ReplaySetup
    from mpiuq.simulator.replay.simgrid_like import like_setup

    model = args.model
    if model is None:
        flow = args.platform is not None or args.like is not None
        model = "flow" if flow else args.default_models
    explicit = parse_algorithms(args.algorithm)
    setup = ReplaySetup(
        models=tuple(m.strip() for m in model.split(",") if m.strip()),
        compute_scale=args.compute_scale,
        reduce_rate_Bps=None if args.reduce_rate is None else args.reduce_rate * 1e9,
        algorithms=tuple((algorithm_set(args.collectives) | dict(explicit)).items()),
        hops=args.hops,
        topology=args.topology,
        placement=args.placement,
        sharing=args.sharing or "maxmin",
        platform=None if args.platform is None else str(args.platform),
        hostfile=None if args.hostfile is None else str(args.hostfile),
    )
    setup = like_setup(args.like, setup, explicit)
    if args.sharing is not None:  # an explicit choice wins over --like's
        setup = dataclasses.replace(setup, sharing=args.sharing)
    if args.reduce_rate is not None:
        setup = dataclasses.replace(setup, reduce_rate_Bps=args.reduce_rate * 1e9)
    return setup


def _platform(args: argparse.Namespace) -> Platform | None:
    """The platform of ``--platform`` (read once per command), or None."""
    if args.platform is None:
        return None
    cached = getattr(args, "_platform_read", None)
    if cached is None:
        from mpiuq.simulator.platform import read_platform

        cached = read_platform(args.platform)
        args._platform_read = cached
    return cached  # type: ignore[no-any-return]


def flop_rate(args: argparse.Namespace) -> float:
    """``--flop-rate``, else the platform's host speed, else 1 Gflop/s."""
    if args.flop_rate is not None:
        return float(args.flop_rate)
    platform = _platform(args)
    return platform.speed_flops if platform is not None else 1e9


def replay_parameters(args: argparse.Namespace) -> ParameterSets:
    """The parameter sets of the replay: ``--params`` and ``--param``, with ``--like``'s
    protocol regimes and the platform's network values (bandwidths, hop latency)."""
    from mpiuq.simulator.replay.simgrid_like import PLATFORM_PARAMS, like_params, platform_params

    sets = parameter_sets(args)
    platform = _platform(args)
    given = [a.partition("=")[0].strip() for a in getattr(args, "param", None) or []]
    fixed = [name for name in given if name in PLATFORM_PARAMS]
    if platform is not None and fixed:  # the platform's values would silently replace them
        raise SettingError(
            f"--param {fixed[0]} is set by the platform {args.platform} (its bw and lat): "
            f"edit the platform file, or compare with a what-if scenario '{fixed[0]}*=F'"
        )
    reference = platform.zone.reference if platform is not None else None
    adjusted = tuple(platform_params(like_params(args.like, p), reference) for p in sets.sets)
    notes = []
    if platform is not None:
        notes.append(f"network values of {Path(platform.file).name}")
    if args.like is not None:
        notes.append(f"protocols of --like {args.like}")
    calibration = dict(sets.calibration)
    if notes:
        calibration["adjusted"] = ", ".join(notes)
    return dataclasses.replace(sets, sets=adjusted, calibration=calibration)


def topology_help() -> str:
    """The ``--topology`` help, from the topology registry's names and examples."""
    from mpiuq.simulator.topologies import TOPOLOGY_REGISTRY

    own = [e.example for e in TOPOLOGY_REGISTRY if not e.zone]
    zones = [e.example for e in TOPOLOGY_REGISTRY if e.zone]
    sized = [e.name for e in TOPOLOGY_REGISTRY if e.size_for is not None]
    return (
        f"topology spec NAME:KEY=VALUE,..., one of {', '.join(own)}, or just a name of "
        f"{', '.join(sized)} (sized for the trace); the packet model defaults to dragonfly; "
        f"the flow model also takes SimGrid-shaped zones: {', '.join(zones)}"
    )


def check_topology(spec: str | None, platform: Path | None = None) -> None:
    """Build a topology given with its sizes (``dragonfly:groups=0`` is refused now, before
    the trace is read or the simulator loads); a bare name is checked, and sized to the
    trace later. Beside a ``platform``, nothing is checked: the replay's setup refuses
    the pair (a platform is the network)."""
    if spec is None or platform is not None:
        return
    from mpiuq.simulator.topologies.spec import (
        is_zone_spec,
        make_topology,
        make_zone,
        parse_topology_spec,
    )

    if is_zone_spec(spec):  # a SimGrid-shaped zone of the flow model (a bare cluster: 1 host)
        make_zone(spec, n_ranks=1)
    elif ":" in spec:
        make_topology(spec)
    else:
        parse_topology_spec(spec)


def read_replay_trace(args: argparse.Namespace) -> Trace:
    """The trace of ``args.trace`` with the reader options (and a progress line)."""
    from mpiuq.runtime.replay_progress import read_with_progress

    return read_with_progress(
        Progress.of(args), args.trace, flop_rate=flop_rate(args), clock=args.clock
    )


def run(args: argparse.Namespace) -> int:
    """Handler of ``mpiuq replay``."""
    from mpiuq.simulator.trace.detect import detect_format

    sets = replay_parameters(args)
    if sets.is_draws:  # refused before numba loads
        streamed = [
            flag
            for flag, given in (
                ("--stream on", args.stream == "on"),
                ("--scratch", args.scratch is not None),
                ("--window-rows", args.window_rows is not None),
            )
            if given
        ]
        if streamed:
            raise SettingError(
                f"{', '.join(streamed)} applies to a point replay: posterior draws replay "
                "one lowered program held in memory (use --estimate for one streamed replay)"
            )
    detect_format(args.trace)  # a missing or unknown trace is refused before the simulator loads
    check_topology(args.topology, args.platform)
    setup = replay_setup(args)
    if sets.is_draws:
        from mpiuq.commands.replay_draws import run_draws

        return run_draws(args, read_replay_trace(args), setup, sets)
    from mpiuq.runtime.replay_progress import replay_file_with_progress

    result = replay_file_with_progress(
        Progress.of(args),
        args.trace,
        sets.sets[0],
        setup,
        threads=model_threads(args),
        stream=args.stream,
        scratch=args.scratch,
        window_rows=None if args.window_rows is None else int(args.window_rows),
        flop_rate=flop_rate(args),
        clock=args.clock,
    )

    def plot(path: Path) -> None:
        from mpiuq.plots.replay import plot_decomposition

        plot_decomposition(result, path, sets.label())

    emit(
        args,
        result.as_dict() | {"calibration": sets.calibration},
        "replay.json",
        "decomposition.png",
        plot,
        lambda: f"{format_table(result)}\nparameters: {sets.label()}",
    )
    return 0
