"""``mpiuq replay TRACE --params results/X``: the replay of posterior draws.

The trace is lowered once and every draw replayed under every model on the kernel's
batch path (:func:`mpiuq.simulator.replay.draws.replay_draws`), in chunks through the
executor of ``--workers`` / ``--scheduler``. ``replay.json`` holds, per model, the
simulated time, each part of the decomposition, each part's share and each part per
MPI call kind as ``mean``, ``sd``, ``hdi90`` and the per-draw values ``draws``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mpiuq.calibration.reporting.propagation import PART_KEYS, decomposition_summary, draw_summary
from mpiuq.commands.calibration_warnings import replay_warnings, warn
from mpiuq.commands.posterior_args import ParameterSets
from mpiuq.reports.result_output import emit
from mpiuq.simulator.parameters import parameter_names
from mpiuq.simulator.replay.draws import DrawsReplay, replay_draws
from mpiuq.simulator.replay.run import ReplaySetup, trace_and_settings
from mpiuq.simulator.trace.ir import Trace
from mpiuq.surrogate.executors import Executor, make_executor

#: Column labels of the parts, in :data:`PART_KEYS` order.
PART_LABELS: tuple[str, ...] = ("compute", "network", "MPI stack", "sync")


def draws_executor(args: argparse.Namespace) -> tuple[Executor, int]:
    """The executor of ``--workers`` / ``--scheduler`` and the chunks to cut the draws into."""
    return make_executor(args.workers, args.scheduler), args.workers or (4 if args.scheduler else 1)


@contextmanager
def quiet_large_graphs() -> Iterator[None]:
    """Silence Dask's hint about large task graphs: each chunk carries the lowered program
    on purpose (one copy per chunk, as many chunks as workers)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")
        yield


def run_replays(
    args: argparse.Namespace, trace: Trace, setup: ReplaySetup, sets: ParameterSets
) -> tuple[DrawsReplay, float, list[str]]:
    """Replay the draws of ``sets`` through the executor of the options (the trace lowered
    once); the wall time, and the warnings of the calibration's scope
    (:func:`mpiuq.commands.calibration_warnings.replay_warnings`)."""
    from dataclasses import replace

    from mpiuq.simulator.lowering.lower import lower_trace

    t0 = time.perf_counter()
    low = lower_trace(trace, setup.lowering_options(sets.sets[0]))
    lowering_s = time.perf_counter() - t0
    executor, chunks = draws_executor(args)
    with executor, quiet_large_graphs():
        result = replay_draws(
            trace, sets.sets, setup, executor=executor, chunks=chunks, lowered=low
        )
    result = replace(result, lowering_s=lowering_s)
    warnings = replay_warnings(args.params, low, sets.sets[0]) if args.params else []
    return result, time.perf_counter() - t0, warnings


def draws_dict(result: DrawsReplay, sets: ParameterSets, wall_s: float) -> dict[str, Any]:
    """The ``replay.json`` of a replay of draws."""
    names = parameter_names()
    varied = {
        n: draw_summary(result.params[:, j])
        for j, n in enumerate(names)
        if result.params[:, j].min() != result.params[:, j].max()
    }
    return {
        **trace_and_settings(result, result.setup.reduce_rate_Bps),
        "calibration": sets.calibration,
        "params": varied,
        "lowering_s": result.lowering_s,
        "wall_s": wall_s,
        "models": {
            m.model: decomposition_summary(
                m.simulated_time_s, m.parts_s, m.per_call_s, m.call_names
            )
            | {"events": draw_summary(m.events), "wall_s": m.wall_s}
            for m in result.models
        },
    }


def interval(s: dict[str, Any], fmt: str = ".4g") -> str:
    """``mean [lo, hi]`` of a :func:`draw_summary`."""
    lo, hi = s["hdi90"]
    return f"{s['mean']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def format_draws_table(data: dict[str, Any], label: str, top_calls: int = 5) -> str:
    """Readable table of a replay of draws: mean and 90% HDI of every figure per model."""
    t = data["trace"]
    lines = [
        f"trace {t['source']} ({t['format']}, {t['ranks']} ranks, {t['trace_ops']} operations "
        f"-> {t['program_ops']} lowered once in {data['lowering_s']:.2f} s; "
        f"{len(data['models'])} model(s) in {data['wall_s']:.2f} s)",
        f"parameters: {label}; figures: mean [90% HDI], seconds summed over ranks",
    ]
    for name, m in data["models"].items():
        lines.append(f"{name}: simulated time {interval(m['simulated_time_s'])} s")
        for key, label_ in zip(PART_KEYS, PART_LABELS, strict=True):
            share = m["share"][key.removesuffix("_s")]
            lines.append(
                f"  {label_:<10}{interval(m['decomposition'][key]):>40}   share "
                f"{share['mean']:.1%} [{share['hdi90'][0]:.1%}, {share['hdi90'][1]:.1%}]"
            )
        ranked = sorted(
            m["per_call"].items(),
            key=lambda kv: -sum(v["mean"] for k, v in kv[1].items() if k != "compute_s"),
        )
        for call, parts in ranked[:top_calls]:
            shown = ", ".join(
                f"{lab} {interval(parts[k], '.3g')}"
                for k, lab in zip(PART_KEYS[1:], PART_LABELS[1:], strict=True)
                if parts[k]["mean"] > 0
            )
            if shown:
                lines.append(f"  {call}: {shown}")
    if t["algorithms"]:
        algs = ", ".join(f"{k}: {'/'.join(v)}" for k, v in sorted(t["algorithms"].items()))
        lines.append(f"collective algorithms: {algs}")
    return "\n".join(lines)


def run_draws(
    args: argparse.Namespace, trace: Trace, setup: ReplaySetup, sets: ParameterSets
) -> int:
    """``mpiuq replay`` over posterior draws: table, ``replay.json``, ``decomposition.png``."""
    result, wall, warnings = run_replays(args, trace, setup, sets)
    data = draws_dict(result, sets, wall) | {"warnings": warnings}
    warn(warnings)

    def plot(path: Path) -> None:
        from mpiuq.plots.replay import plot_decomposition_draws

        plot_decomposition_draws(data, path, sets.label())

    emit(
        args,
        data,
        "replay.json",
        "decomposition.png",
        plot,
        lambda: format_draws_table(data, sets.label()),
    )
    return 0
