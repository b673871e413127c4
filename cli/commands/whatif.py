"""``mpiuq whatif TRACE --params results/X --scenario NAME=EXPR ...``: would it help?

Replays the trace under the campaign's posterior draws for the baseline and for every
scenario (:mod:`mpiuq.simulator.replay.scenarios`: parameter edits such as
``net2x: link_bw_GBps*=2, injection_bw_GBps*=2``, another model, topology or collective
algorithm), **paired**: draw ``k`` of a scenario is draw ``k`` of the baseline with the
scenario's changes. Per scenario it reports the speed-up ``T_baseline / T_scenario``
(mean and 90% HDI), the probability that it exceeds 5%, and which part of the time
moves. ``--out DIR`` writes ``whatif.json`` and ``whatif.png``. The trace is lowered
once (again only for a scenario that changes a collective algorithm).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.commands.arguments import add_param_argument, output_folder
from mpiuq.commands.calibration_warnings import replay_warnings, warn
from mpiuq.commands.posterior_args import ParameterSets, add_posterior_arguments
from mpiuq.commands.replay import (
    add_replay_options,
    check_topology,
    read_replay_trace,
    replay_parameters,
    replay_setup,
)
from mpiuq.reports.result_output import emit
from mpiuq.simulator.errors import SettingError

if TYPE_CHECKING:  # the replay engine (numba) and SciPy are imported when a study runs
    from mpiuq.simulator.replay.draws import DrawsReplay
    from mpiuq.simulator.replay.run import ReplaySetup
    from mpiuq.simulator.replay.scenarios import Scenario

#: Speed-up above which a scenario "helps" in the table.
HELPS = 1.05


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``whatif`` sub-command."""
    p = sub.add_parser(
        "whatif",
        help="speed-up of what-if scenarios (faster network, lighter MPI stack, ...) "
        "with posterior intervals",
        description="Replay a trace under the posterior draws for a baseline and for "
        "scenarios, paired, and report the speed-up distribution of each scenario.",
    )
    p.add_argument("trace", type=Path, help="trace file or directory (DUMPI, OTF2, SimGrid TI)")
    p.add_argument(
        "--scenario",
        action="append",
        required=True,
        metavar="NAME=EXPR",
        help="a scenario, e.g. 'net2x: link_bw_GBps*=2, injection_bw_GBps*=2', "
        "'stack/2: post_header_delay_us*=0.5', 'fat: topology=fattree:k=16,levels=3', "
        "'pkt: model=packet', 'ring: allreduce=ring' (repeatable)",
    )
    add_replay_options(p, models="analytic")
    add_posterior_arguments(p)
    add_param_argument(p)
    p.add_argument(
        "--out", type=output_folder, default=None, help="write whatif.json and whatif.png"
    )
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    p.set_defaults(handler=run)


def parse_scenarios(texts: list[str]) -> tuple[Scenario, ...]:
    """Parse every ``--scenario``; names must differ.

    Raises
    ------
    ScenarioError
        For a malformed expression (names the text and the bad part).
    SettingError
        For a repeated scenario name.
    """
    from mpiuq.simulator.replay.scenarios import parse_scenario

    scenarios = tuple(parse_scenario(t) for t in texts)
    names = [s.name for s in scenarios]
    for n in names:
        if names.count(n) > 1 or n == "baseline":
            raise SettingError(
                f"scenario name {n!r} is used twice or reserved: expected distinct names, "
                "not 'baseline'"
            )
    return scenarios


def run_scenarios(
    args: argparse.Namespace,
    sets: ParameterSets,
    setup: ReplaySetup,
    scenarios: tuple[Scenario, ...],
) -> tuple[dict[str, Any], DrawsReplay]:
    """Replay the baseline and every scenario under the same draws; the JSON and baseline."""
    from mpiuq.calibration.reporting.propagation import decomposition_summary, paired_speedup
    from mpiuq.commands.replay_draws import draws_executor, quiet_large_graphs
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.replay.draws import replay_draws
    from mpiuq.simulator.replay.run import trace_and_settings

    trace = read_replay_trace(args)
    t0 = time.perf_counter()
    options = setup.lowering_options(sets.sets[0])
    low = lower_trace(trace, options)
    executor, chunks = draws_executor(args)
    runs: dict[str, DrawsReplay] = {}
    with executor, quiet_large_graphs():
        base = replay_draws(trace, sets.sets, setup, executor=executor, chunks=chunks, lowered=low)
        for sc in scenarios:
            s_setup = sc.apply_setup(setup)
            s_sets = [sc.apply_params(p) for p in sets.sets]
            same = s_setup.lowering_options(s_sets[0]).algorithms == options.algorithms
            runs[sc.name] = replay_draws(
                trace,
                s_sets,
                s_setup,
                executor=executor,
                chunks=chunks,
                lowered=low if same else None,
            )
    wall = time.perf_counter() - t0
    warnings = replay_warnings(args.params, low, sets.sets[0]) if args.params else []
    warn(warnings)
    b = base.models[0]
    data: dict[str, Any] = {
        **trace_and_settings(base, setup.reduce_rate_Bps),
        "calibration": sets.calibration,
        "warnings": warnings,
        "model": b.model,
        "wall_s": wall,
        "baseline": decomposition_summary(
            b.simulated_time_s, b.parts_s, b.per_call_s, b.call_names
        ),
        "scenarios": {},
    }
    for sc in scenarios:
        m = runs[sc.name].models[0]
        data["scenarios"][sc.name] = {
            "expression": sc.text,
            "edits": [{"parameter": n, "op": op, "value": x} for n, op, x in sc.edits],
            "settings": dict(sc.settings),
            "model": m.model,
            **paired_speedup(b.simulated_time_s, m.simulated_time_s, b.parts_s, m.parts_s),
            "replay": decomposition_summary(
                m.simulated_time_s, m.parts_s, m.per_call_s, m.call_names
            ),
        }
    return data, base


def format_whatif_table(data: dict[str, Any], label: str) -> str:
    """Readable table: per scenario the speed-up, its probabilities and what moved."""
    from mpiuq.calibration.reporting.propagation import PART_KEYS
    from mpiuq.commands.replay_draws import PART_LABELS, interval

    t = data["trace"]
    base = data["baseline"]
    lines = [
        f"trace {t['source']} ({t['format']}, {t['ranks']} ranks), model {data['model']}, "
        f"{len(data['scenarios'])} scenario(s) in {data['wall_s']:.2f} s",
        f"parameters: {label}; figures: mean [90% HDI]",
        f"baseline: simulated time {interval(base['simulated_time_s'])} s",
        f"{'scenario':<12}{'speed-up':>28}{'P(>5%)':>8}{'P(>0)':>7}  time saved s / what moves",
    ]
    for name, s in data["scenarios"].items():
        p = s["probability"]
        moves = ", ".join(
            f"{lab} {s['moves'][k.removesuffix('_s')]:.0%}"
            for k, lab in zip(PART_KEYS, PART_LABELS, strict=True)
            if s["moves"][k.removesuffix("_s")] >= 0.005
        )
        lines.append(
            f"{name:<12}{interval(s['speedup'], '.4f'):>28}{p['speedup>1.05']:>8.0%}"
            f"{p['speedup>1']:>7.0%}  {interval(s['time_saved_s'], '.3g')}; "
            f"{moves or 'nothing moves'}"
        )
    lines.append(
        f"speed-up = T_baseline / T_scenario of the simulated run time, paired draws; "
        f"P(>5%) = share of draws with speed-up > {HELPS}; 'what moves' = share of the "
        "rank-summed change per part"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mpiuq whatif``."""
    scenarios = parse_scenarios(args.scenario)
    check_topology(args.topology, args.platform)
    setup = replay_setup(args)
    if len(setup.models) != 1:
        raise SettingError(
            f"--model {args.model!r} names {len(setup.models)} models: expected one baseline "
            "model (a scenario 'NAME: model=OTHER' compares another)"
        )
    sets = replay_parameters(args)
    data, _ = run_scenarios(args, sets, setup, scenarios)

    def plot(path: Path) -> None:
        from mpiuq.plots.whatif import plot_whatif

        plot_whatif(data, path, sets.label())

    emit(
        args,
        data,
        "whatif.json",
        "whatif.png",
        plot,
        lambda: format_whatif_table(data, sets.label()),
    )
    return 0
