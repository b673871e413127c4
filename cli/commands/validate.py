"""``mpiuq campaign validate CAMPAIGN.toml --leave-one-series-out [--out DIR]``.

Fits the campaign once per data series without that series and scores the series with
the fit's full posterior predictive (:mod:`mpiuq.calibration.checking.loso`). The folds share
one global design (``DIR/design.h5``, resumable); each fold is a complete results folder
``DIR/without-<series>/`` (``mpiuq campaign show`` reads it; its ``validation.png``
shows the band against the held-out data). ``DIR/loso.json`` and ``DIR/loso.txt`` hold
the table, ``DIR/loso.png`` the held-out series side by side. Exits 1 when a held-out
series fails its coverage check or a fold fails a must-pass check.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.commands.arguments import output_folder
from mpiuq.reports.result_output import results_folder
from mpiuq.runtime.progress import add_quiet_argument
from mpiuq.surrogate.store.json_text import json_text

#: Files of the leave-one-series-out folder besides the folds.
TABLE_JSON, TABLE_TEXT, FIGURE = "loso.json", "loso.txt", "loso.png"


@dataclass(frozen=True)
class CampaignIO:
    """What ``campaign run`` does with a campaign, given by :mod:`mpiuq.commands.campaign` (which
    registers this action, so this module does not import it back)."""

    run_into_folder: Callable[..., dict[str, Any]]
    format_table: Callable[[dict[str, Any]], str]
    warn: Callable[[dict[str, Any], bool], int]
    progress_bars: Callable[[bool], Any]


def add_validate_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    handler: Callable[[argparse.Namespace], int],
) -> None:
    """Register ``campaign validate`` with its handler."""
    v = actions.add_parser(
        "validate",
        help="validate a campaign on data it does not fit (leave one series out)",
        description="Fit the campaign without each data series in turn and score the "
        "series with the posterior predictive of the others.",
    )
    v.add_argument(
        "campaign", type=Path, help="campaign TOML file with two or more [[data]] tables"
    )
    v.add_argument(
        "--leave-one-series-out",
        action="store_true",
        help="one fold per data series, fitted on the others (the validation this command runs)",
    )
    add_run_options(
        v,
        "<name>-loso in $MPIUQ_RESULTS, else in ./mpiuq-results",
        "evaluate the shared design again (discard DIR/design.h5)",
    )
    v.set_defaults(handler=handler)


def add_run_options(p: argparse.ArgumentParser, default_out: str, restart_help: str) -> None:
    """The options of a command that runs campaigns: ``--out``, ``--workers`` or
    ``--scheduler``, ``--no-plots``, ``--quiet``, ``--restart``."""
    p.add_argument(
        "--out",
        type=output_folder,
        default=None,
        help=f"output folder (default: {default_out})",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=int, default=None, help="local worker processes for the design runs"
    )
    where.add_argument(
        "--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT (or 'local')"
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    add_quiet_argument(p)
    p.add_argument("--restart", action="store_true", help=restart_help)


def validate(args: argparse.Namespace, io: CampaignIO) -> int:
    """Execute ``mpiuq campaign validate``."""
    from mpiuq.calibration.checking.loso import fold_campaigns
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
    from mpiuq.calibration.pipeline.budget import check_campaign_budget
    from mpiuq.calibration.reporting.artefacts import DESIGN_FILE, hold_results_folder
    from mpiuq.simulator.errors import SettingError

    if not args.leave_one_series_out:
        raise SettingError(
            "campaign validate needs a validation to run: --leave-one-series-out (a "
            "campaign's own [validation] hold-outs run with 'mpiuq campaign run')"
        )
    campaign = load_campaign(args.campaign)
    folds = fold_campaigns(campaign)  # refuses a campaign of one series before anything loads
    for _, fold in folds:
        check_campaign_budget(fold)
    for spec in campaign.datasets:  # the data files, checked before the simulator loads
        read_benchmark_csv(spec.path, spec.benchmark)
    out = args.out if args.out is not None else results_folder() / f"{campaign.name}-loso"
    with hold_results_folder(out):
        from mpiuq.surrogate.design.design_store import discard_store

        if args.restart:
            discard_store(out / DESIGN_FILE)
        return _run_folds(args, io, campaign, folds, out)


def _run_folds(
    args: argparse.Namespace, io: CampaignIO, campaign: Any, folds: Any, out: Path
) -> int:
    from mpiuq.calibration.checking.loso import shared_design
    from mpiuq.calibration.reporting.artefacts import hold_results_folder
    from mpiuq.reports.validation_text import loso_table
    from mpiuq.runtime.progress import Progress
    from mpiuq.surrogate.executors import make_executor

    workers = args.workers if args.workers is not None else campaign.executor.workers
    scheduler = args.scheduler if args.scheduler is not None else campaign.executor.scheduler
    executor = make_executor(workers if workers and workers > 0 else None, scheduler)
    rows: list[dict[str, Any]] = []
    summaries: list[tuple[str, dict[str, Any]]] = []
    status = 0
    fold_args = argparse.Namespace(**{**vars(args), "restart": False})
    try:
        bars = io.progress_bars(args.quiet)
        try:
            with Progress.of(args).watching_compilation():
                design = shared_design(campaign, out / "design.h5", executor, bars.update)
        finally:
            bars.close()
        for label, fold in folds:
            folder = out / f"without-{label}"
            with hold_results_folder(folder):
                summary = io.run_into_folder(fold_args, fold, folder, executor, design=design)
            print(f"--- fold without {label} ({folder}) ---")
            print(io.format_table(summary))
            status = max(status, io.warn(summary, True))
            rows.append(_row(label, summary))
            summaries.append((label, summary))
    finally:
        executor.close()
    alpha = campaign.checks.coverage_alpha
    table = loso_table(rows, alpha)
    (out / TABLE_TEXT).write_text(table + "\n", encoding="utf-8")
    doc = {"campaign": campaign.name, "coverage_alpha": alpha, "folds": rows}
    (out / TABLE_JSON).write_text(
        json_text(doc, indent=2, where=str(out / TABLE_JSON)) + "\n", encoding="utf-8"
    )
    if not args.no_plots:
        _figure(summaries, out / FIGURE, campaign.name)
    print(f"\nleave-one-series-out of {campaign.name}:")
    print(table)
    print(f"\nresults in {out}/ ({TABLE_TEXT}, {TABLE_JSON}, {FIGURE}, without-<series>/)")
    failed = [r["series"] for r in rows if not r["passed"]]
    if failed:
        print(
            f"WARNING: held-out coverage below its binomial threshold for {', '.join(failed)}",
            file=sys.stderr,
        )
        status = 1
    return status


def _row(label: str, summary: dict[str, Any]) -> dict[str, Any]:
    """The held-out series' line of the table, from a fold's summary."""
    v = summary["validation"]
    g = next(g for g in v["groups"] if g["kind"] == "held-out series" and g["series"] == label)
    ins = v["in_sample"]
    return {
        "series": label,
        "benchmark": g["benchmark"],
        "model": g["model"],
        "n_sizes": g["n_sizes"],
        "n_inside_90": g["n_inside_90"],
        "coverage": g["coverage"],
        "threshold": g["threshold"],
        "passed": g["passed"],
        "median_relative_error": g["median_relative_error"],
        "skipped_sizes": len(g["skipped_sizes"]),
        "fitted_series": [d["label"] for d in summary["data_sets"]],
        "in_sample_sizes": ins["n_sizes"],
        "in_sample_inside": ins["n_inside_90"],
        "in_sample_error": ins["median_relative_error"],
    }


def _figure(summaries: list[tuple[str, dict[str, Any]]], path: Path, name: str) -> None:
    from mpiuq.plots.validation import plot_validation

    groups = []
    for label, s in summaries:
        groups += [
            g
            for g in s["validation"]["groups"]
            if g["kind"] == "held-out series" and g["series"] == label
        ]
    plot_validation(groups, {}, path, f"{name} (leave one series out)")
