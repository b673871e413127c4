"""``mpiuq simulate``: run a benchmark program (ping-pong, streaming, call timings) on the simulator.

Prints a table (default) or JSON, and can write synthetic measurements in the
benchmark CSV format of ``../shared/data/benchmarks`` so users can see what a
calibration would learn from a planned measurement campaign. ``--params results/X``
runs the benchmark at the campaign's posterior draws (``--draws``, default 64) and
reports the **posterior predictive** of a measurement (parameters, discrepancy and
noise: :mod:`mpiuq.calibration.reporting.prediction`; median and 5-95% band, the label says
which parts it holds), or, with ``--estimate``, the benchmark at one posterior point.
With ``--params`` it warns (stderr and JSON ``warnings``) when the benchmark kind was
not in the calibration data, sizes lie outside the calibrated range, or a regime had no
data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mpiuq.commands.arguments import (
    add_param_argument,
    parse_assignments,
    parse_sizes,
    seed_argument,
)
from mpiuq.commands.calibration_warnings import calibration_scope, warn
from mpiuq.commands.posterior_args import ParameterSets, add_posterior_arguments, parameter_sets
from mpiuq.simulator.benchmarks.kinds import BENCHMARKS, WINDOWED_BENCHMARKS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.parameters import SimParams
from mpiuq.surrogate.budget import check_memory
from mpiuq.surrogate.store.json_text import json_text

if TYPE_CHECKING:  # the benchmarks (numba) are imported when a simulation runs
    from mpiuq.calibration.reporting.prediction import CalibrationScope
    from mpiuq.simulator.benchmarks.run import BenchmarkResult, BenchmarkSetup

#: Memory of one synthetic measurement row (noise, value, run and size), bytes.
SYNTHETIC_BYTES_PER_ROW = 48


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``simulate`` sub-command."""
    p = sub.add_parser(
        "simulate",
        help="run ping-pong or streaming benchmarks on the simulator",
        description="Run a two-rank benchmark program on the simulator, one run per message size.",
    )
    p.add_argument(
        "--benchmark", choices=BENCHMARKS, default=None, help="benchmark (default pingpong)"
    )
    p.add_argument(
        "--sizes", required=True, help="comma-separated message sizes in bytes, e.g. 1,256,4096"
    )
    p.add_argument(
        "--window", type=int, default=None, help="messages per window of the stream benchmark (64)"
    )
    add_param_argument(p)
    p.add_argument(
        "--config",
        type=Path,
        help="TOML file with parameter values: a campaign file ([simulator], [simulator.fixed]) "
        "or a flat table of NAME = VALUE",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--replicas", type=int, help="write this many synthetic measurements per size")
    p.add_argument(
        "--noise-cv", type=float, default=0.02, help="coefficient of variation of the noise"
    )
    p.add_argument(
        "--seed",
        type=seed_argument,
        default=0,
        help="seed of the synthetic noise and of the pick of posterior draws (>= 0)",
    )
    add_posterior_arguments(p, executor=False, seed=False)
    p.add_argument(
        "--warmup-excess",
        type=float,
        default=0.0,
        help="synthetic replicas come in bursts of 10 (run %% 10 == 0 first); the first of "
        "each burst is this fraction slower (default 0: no warm-up)",
    )
    p.add_argument(
        "--csv", type=Path, help="output CSV of synthetic measurements (needs --replicas)"
    )
    p.set_defaults(handler=run)


def result_json(result: BenchmarkResult) -> dict[str, Any]:
    """JSON document of a benchmark result."""
    rows = []
    for j, size in enumerate(result.sizes_bytes):
        ranks = result.decomposition[j]
        total = {k: ranks[0].as_dict()[k] + ranks[1].as_dict()[k] for k in ranks[0].as_dict()}
        rows.append(
            {
                "size_bytes": size,
                "time_us": float(result.time_us[j]),
                "throughput_MBps": float(result.throughput_MBps[j]),
                "protocol": result.protocols[j],
                "decomposition": total,
                "per_rank": [d.as_dict() for d in ranks],
            }
        )
    return {
        "benchmark": result.benchmark,
        "window": result.setup.window if result.benchmark in WINDOWED_BENCHMARKS else None,
        "params": result.params.as_json_dict(),
        "results": rows,
    }


def format_table(result: BenchmarkResult) -> str:
    """Human-readable table: one line per size, decomposition of rank 0 / rank 1 in us."""
    head = (
        f"{'size_B':>10} {'protocol':>10} {'time_us':>10} {'MB/s':>10} | "
        f"{'rank':>4} {'network':>9} {'stack':>9} {'sync':>9} {'compute':>9}  (us per repetition)"
    )
    lines = [
        f"{result.benchmark}: " + ", ".join(f"{k}={v}" for k, v in result.params.as_dict().items()),
        head,
    ]
    for j, size in enumerate(result.sizes_bytes):
        for r, d in enumerate(result.decomposition[j]):
            left = (
                f"{size:>10} {result.protocols[j]:>10} {result.time_us[j]:>10.3f} {result.throughput_MBps[j]:>10.1f}"
                if r == 0
                else " " * 43
            )
            lines.append(
                f"{left} | {r:>4} {d.network_s * 1e6:>9.3f} {d.mpi_stack_s * 1e6:>9.3f} "
                f"{d.sync_s * 1e6:>9.3f} {d.compute_s * 1e6:>9.3f}"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Execute ``mpiuq simulate``."""
    from mpiuq.calibration.config import ParameterFile, load_parameter_file
    from mpiuq.calibration.data.benchmark_csv import write_benchmark_csv
    from mpiuq.calibration.data.synthetic_data import synthetic_measurements
    from mpiuq.calibration.pipeline.budget import check_benchmark_budget
    from mpiuq.simulator.benchmarks.run import BenchmarkSetup, simulate_benchmark, validate_sizes

    config = load_parameter_file(args.config) if args.config is not None else ParameterFile(())
    if args.params is not None and args.config is not None:
        raise SettingError("--params and --config both give parameter values: use one")
    posterior = (args.params, args.draws, args.estimate) != (None, None, None)
    sets = parameter_sets(args) if posterior else None  # refuses --draws without --params
    values: dict[str, Any] = dict(config.values)
    values.update(parse_assignments(args.param))
    params = SimParams.from_mapping(values) if sets is None else sets.sets[0]
    benchmark = args.benchmark or config.benchmark or "pingpong"
    window = args.window if args.window is not None else (config.window or 64)
    sizes = validate_sizes(parse_sizes(args.sizes))
    BenchmarkSetup(benchmark, window)  # validates the benchmark and the window
    check_benchmark_budget(benchmark, window, len(sizes))
    if args.csv is not None or args.replicas is not None:
        if args.csv is None or args.replicas is None:
            raise SettingError(
                "--replicas and --csv go together: give both to write synthetic data"
            )
        check_memory(
            f"{args.replicas} synthetic replicas of {len(sizes)} sizes",
            SYNTHETIC_BYTES_PER_ROW * float(args.replicas) * len(sizes),
            "noise, values, run and size columns",
        )
    if sets is not None and sets.is_draws:
        if args.csv is not None:
            raise SettingError(
                "--csv with posterior draws: synthetic data come from one parameter set; "
                "add --estimate median (or mean)"
            )
        return run_draws(args, sets, BenchmarkSetup(benchmark, window), sizes)
    result = simulate_benchmark(benchmark, sizes, params, window)
    warnings: list[str] = []
    if args.params is not None:
        from mpiuq.calibration.reporting.prediction import benchmark_warnings

        regimes = [params.protocol_of(s) for s in sizes]
        warnings = benchmark_warnings(calibration_scope(args.params), benchmark, sizes, regimes)
        warn(warnings)
    if args.csv is not None and args.replicas is not None:
        data = synthetic_measurements(
            result,
            args.replicas,
            args.noise_cv,
            np.random.default_rng(args.seed),
            warmup_excess=args.warmup_excess,
        )
        n_rows = write_benchmark_csv(args.csv, data)
        print(f"wrote {n_rows} synthetic measurements to {args.csv}", file=sys.stderr)
    if args.json:
        doc = result_json(result)
        if sets is not None:
            doc |= {
                "calibration": sets.calibration,
                "predictive": f"one point ({sets.label()}): no parameter, discrepancy or "
                "noise uncertainty",
                "warnings": warnings,
            }
        print(json_text(doc, indent=2, where="simulate --json"))
    else:
        print(format_table(result))
    return 0


def draws_json(
    setup: BenchmarkSetup,
    sizes: tuple[int, ...],
    sets: ParameterSets,
    scope: CalibrationScope,
    seed: int = 0,
    threads: int = 1,
) -> dict[str, Any]:
    """The benchmark's posterior predictive at every size (time and throughput: mean, sd,
    90% HDI, 5/50/95% quantiles and the draws), what it is (``predictive``), the
    parameter-only band of the model (``model_time_us``) and what it extrapolates
    (``warnings``)."""
    from mpiuq.calibration.reporting.prediction import benchmark_warnings, predict
    from mpiuq.calibration.reporting.propagation import draw_summary
    from mpiuq.simulator.benchmarks.run import evaluate_batch
    from mpiuq.simulator.engine import params_vector

    matrix = np.stack([params_vector(p) for p in sets.sets])
    batch = evaluate_batch(setup, sizes, matrix, threads=threads)
    first = sets.sets[0]
    regimes = [first.protocol_of(size) for size in sizes]
    draws = sets.draws
    names = draws.other_names if draws is not None else ()
    others = draws.other_values if draws is not None else np.zeros((len(sets.sets), 0))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    pred = predict(scope, setup.benchmark, regimes, batch.time_us, names, others, rng)
    size_arr = np.asarray(sizes, dtype=np.float64)
    return {
        "benchmark": setup.benchmark,
        "window": setup.window if setup.benchmark in WINDOWED_BENCHMARKS else None,
        "calibration": sets.calibration,
        "predictive": pred.label,
        "warnings": benchmark_warnings(scope, setup.benchmark, sizes, regimes),
        "results": [
            {
                "size_bytes": size,
                "protocol": regimes[j],
                "time_us": _quantiles(pred.time_us[:, j]),
                "throughput_MBps": _quantiles(size_arr[j] / pred.time_us[:, j]),
                "model_time_us": draw_summary(batch.time_us[:, j]),
                "discrepancy_source": pred.sources[j],
                "noise_rel_sd": float(pred.relative_sd[j]),
            }
            for j, size in enumerate(sizes)
        ],
    }


def _quantiles(x: np.ndarray) -> dict[str, Any]:
    from mpiuq.calibration.reporting.propagation import draw_summary

    q05, q50, q95 = np.quantile(x, [0.05, 0.5, 0.95])
    return draw_summary(x) | {"q05": float(q05), "median": float(q50), "q95": float(q95)}


def run_draws(
    args: argparse.Namespace, sets: ParameterSets, setup: BenchmarkSetup, sizes: tuple[int, ...]
) -> int:
    """``mpiuq simulate --params`` over posterior draws: table or JSON of the predictive."""
    data = draws_json(setup, sizes, sets, calibration_scope(args.params), args.seed)
    warn(data["warnings"])
    if args.json:
        print(json_text(data, indent=2, where="simulate --json"))
        return 0
    lines = [
        f"{setup.benchmark} at {sets.label()}",
        f"{data['predictive']}; median [5%, 95%]",
        f"{'size_B':>10} {'protocol':>10}   {'time_us':<31}      MB/s",
    ]
    for row in data["results"]:
        t, b = row["time_us"], row["throughput_MBps"]
        lines.append(
            f"{row['size_bytes']:>10} {row['protocol']:>10} "
            f"{t['median']:>10.4g} [{t['q05']:.4g}, {t['q95']:.4g}]".ljust(55)
            + f"{b['median']:>10.4g} [{b['q05']:.4g}, {b['q95']:.4g}]"
        )
    print("\n".join(lines))
    return 0
