"""``mpiuq simulate``: run the ping-pong or streaming benchmark on the simulator.

Prints a table (default) or JSON, and can write synthetic measurements in the
benchmark CSV format of ``../shared/data/benchmarks`` so users can see what a
calibration would learn from a planned measurement campaign.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.simulator.benchmarks import BENCHMARKS, BenchmarkResult, simulate_benchmark
from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.parameters import SimParams, parameter_names

#: Benchmark label and unit written to synthetic CSV files, per benchmark.
CSV_LABELS: dict[str, tuple[str, str]] = {
    "pingpong": ("pingpong_half_rtt", "us"),
    "stream": ("stream_bw", "MB/s"),
}


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
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic noise")
    p.add_argument(
        "--csv", type=Path, help="output CSV of synthetic measurements (needs --replicas)"
    )
    p.set_defaults(handler=run)


def parse_sizes(text: str) -> list[int]:
    """Parse ``"1,256,4k"``-free plain comma-separated byte counts."""
    sizes = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            sizes.append(int(item))
        except ValueError:
            raise SettingError(
                f"message size {item!r} is invalid: expected a whole number of bytes"
            ) from None
    return sizes


def add_param_argument(parser: argparse.ArgumentParser) -> None:
    """The repeatable ``--param NAME=VALUE`` override (read with :func:`parse_assignments`)."""
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"override a parameter; names: {', '.join(parameter_names())}",
    )


def parse_assignments(items: list[str]) -> dict[str, float]:
    """Parse ``NAME=VALUE`` strings into a dict of floats."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ParameterError(item, item, "NAME=VALUE")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ParameterError(name.strip(), value, "a number") from None
    return out


def load_config(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read ``(parameters, simulator settings)`` from a TOML file."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise SettingError(f"cannot read config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingError(f"config {path} is not valid TOML: {exc}") from None
    settings: dict[str, Any] = {}
    names = set(parameter_names())
    params = {k: v for k, v in data.items() if k in names}
    sim = data.get("simulator", {})
    if isinstance(sim, dict):
        settings = {k: v for k, v in sim.items() if k in ("benchmark", "window")}
        fixed = sim.get("fixed", {})
        if isinstance(fixed, dict):
            params.update(fixed)
    for section in ("params", "parameters"):
        table = data.get(section, {})
        if isinstance(table, dict):
            params.update({k: v for k, v in table.items() if not isinstance(v, list)})
    return params, settings


def synthetic_measurements(
    result: BenchmarkResult, replicas: int, noise_cv: float, rng: np.random.Generator
) -> list[tuple[int, int, float, str, str]]:
    """Rows ``(run, size, value, unit, benchmark)`` with mean-preserving log-normal noise.

    ``value = truth * exp(sigma * z - sigma**2 / 2)`` with ``sigma**2 = log(1 + cv**2)``,
    so every replica has mean ``truth`` and coefficient of variation ``noise_cv``.
    """
    if replicas < 1:
        raise SettingError(f"replicas={replicas} is invalid: expected at least 1")
    if not (math.isfinite(noise_cv) and noise_cv >= 0):
        raise SettingError(f"noise_cv={noise_cv!r} is invalid: expected a finite number >= 0")
    label, unit = CSV_LABELS[result.benchmark]
    truth = result.time_us if result.benchmark == "pingpong" else result.throughput_MBps
    sigma = math.sqrt(math.log1p(noise_cv**2))
    rows: list[tuple[int, int, float, str, str]] = []
    for j, size in enumerate(result.sizes_bytes):
        noise = np.exp(sigma * rng.standard_normal(replicas) - sigma**2 / 2)
        rows.extend(
            (run, size, float(truth[j] * noise[run]), unit, label) for run in range(replicas)
        )
    return rows


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
        "window": result.setup.window if result.benchmark == "stream" else None,
        "params": result.params.as_dict(),
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
    values: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    if args.config is not None:
        values, settings = load_config(args.config)
    values.update(parse_assignments(args.param))
    params = SimParams.from_mapping(values)
    benchmark = args.benchmark or settings.get("benchmark", "pingpong")
    window = args.window if args.window is not None else int(settings.get("window", 64))
    result = simulate_benchmark(benchmark, parse_sizes(args.sizes), params, window)
    if args.csv is not None or args.replicas is not None:
        if args.csv is None or args.replicas is None:
            raise SettingError(
                "--replicas and --csv go together: give both to write synthetic data"
            )
        rows = synthetic_measurements(
            result, args.replicas, args.noise_cv, np.random.default_rng(args.seed)
        )
        with args.csv.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["run", "msg_size_bytes", "value", "unit", "benchmark"])
            writer.writerows(
                (run, size, f"{value:.7g}", unit, label) for run, size, value, unit, label in rows
            )
        print(f"wrote {len(rows)} synthetic measurements to {args.csv}", file=sys.stderr)
    if args.json:
        print(json.dumps(result_json(result), indent=2))
    else:
        print(format_table(result))
    return 0
