"""``mpiuq campaign``: run a calibration campaign end to end, or show its summary.

``mpiuq campaign run CAMPAIGN.toml [--out DIR] [--workers N | --scheduler ADDR]``
    design -> simulation -> surrogate -> Sobol -> groups -> MCMC -> diagnostics ->
    plots -> ``summary.json``; resumable (the design run continues from ``design.h5``).
``mpiuq campaign show results/NAME``
    Print the Table-1-like parameter table again from ``summary.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from mpiuq.simulator.parameters import UNITS


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``campaign`` sub-command with its ``run`` and ``show`` actions."""
    p = sub.add_parser("campaign", help="Bayesian calibration campaigns (run, show)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("run", help="run a campaign file end to end")
    r.add_argument("campaign", type=Path, help="campaign TOML file")
    r.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: results/<name> in the current directory)",
    )
    where = r.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=int, default=None, help="local worker processes for the design runs"
    )
    where.add_argument(
        "--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT (or 'local')"
    )
    r.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.set_defaults(handler=run)
    s = actions.add_parser("show", help="print the parameter table of a finished campaign")
    s.add_argument("folder", type=Path, help="results folder holding summary.json")
    s.set_defaults(handler=show)


def run(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign run``."""
    from mpiuq.calibration.artefacts import write_result_files, write_summary
    from mpiuq.calibration.campaign import run_campaign
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.report import summary_dict
    from mpiuq.surrogate.executors import make_executor

    campaign = load_campaign(args.campaign)
    out = args.out if args.out is not None else Path("results") / campaign.name
    workers = args.workers if args.workers is not None else campaign.executor.workers
    scheduler = args.scheduler if args.scheduler is not None else campaign.executor.scheduler
    executor = make_executor(workers if workers and workers > 0 else None, scheduler)
    bars = _ProgressBars(disabled=args.quiet)
    try:
        result = run_campaign(campaign, out, executor=executor, on_progress=bars.update)
    finally:
        bars.close()
        executor.close()
    t0 = time.perf_counter()
    write_result_files(result, out)
    summary = summary_dict(result)
    summary["timings_s"]["result_files"] = round(time.perf_counter() - t0, 3)
    if not args.no_plots:
        from mpiuq.campaign_plots import write_figures

        t0 = time.perf_counter()
        figures = write_figures(result, out)
        summary["timings_s"]["plots"] = round(time.perf_counter() - t0, 3)
        summary["figures"] = [f.name for f in figures]
    summary["timings_s"]["total"] = round(sum(summary["timings_s"].values()), 3)
    write_summary(summary, out)
    print(format_table(summary))
    print(f"\nresults in {out}/ (summary.json, posterior.nc, surrogate.h5, design.h5, figures)")
    if not summary["diagnostics"]["converged"]:
        print(
            "WARNING: MCMC did NOT converge (R-hat/ESS targets not met within max_steps); "
            "treat the estimates as preliminary and raise calibration.max_steps.",
            file=sys.stderr,
        )
        return 1
    if "diagnostics_joint" in summary and not summary["diagnostics_joint"]["converged"]:
        print(
            "WARNING: the joint comparison run did NOT converge; its marginals are indicative only.",
            file=sys.stderr,
        )
    return 0


def show(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign show``."""
    path = args.folder / "summary.json" if args.folder.is_dir() else args.folder
    summary = json.loads(path.read_text(encoding="utf-8"))
    print(format_table(summary))
    if not summary["diagnostics"]["converged"]:
        print("WARNING: this campaign's MCMC did NOT converge.", file=sys.stderr)
    return 0


def format_table(summary: dict[str, Any]) -> str:
    """Table 1-like text: parameter, MAP, mean, sd, 90% HDI, prior range, constrained."""
    head = f"{'parameter':<24}{'MAP':>10}{'mean':>10}{'sd':>9}  {'90% HDI':<19}"
    head += f"{'prior range':<17}{'rhat':>7}{'ess':>7}  constrained"
    lines = [
        f"campaign {summary['name']} (seed {summary['seed']}, {summary['grouping']} "
        f"grouping, observable {summary['observable']})",
        head,
        "-" * len(head),
    ]
    diag = summary["diagnostics"]
    for name, p in summary["parameters"].items():
        unit = UNITS.get(name, "")
        d = diag.get(name, {})
        rhat = "-" if d.get("rhat") is None else f"{d['rhat']:.3f}"
        ess = "-" if d.get("ess_bulk") is None else f"{min(d['ess_bulk'], d['ess_tail']):.0f}"
        hdi = f"[{_g(p['hdi90'][0])}, {_g(p['hdi90'][1])}]"
        prior = f"{_g(p['prior'][0])} - {_g(p['prior'][1])}"
        lines.append(
            f"{name:<24}{_g(p['map']):>10}{_g(p['mean']):>10}{_g(p['sd']):>9}  {hdi:<19}"
            f"{prior:<17}{rhat:>7}{ess:>7}  {'yes' if p['constrained'] else 'NO'} ({unit})"
        )
    if any("joint" in p for p in summary["parameters"].values()):
        lines.append("")
        lines.append(f"{'joint sampling':<24}{'MAP':>10}{'mean':>10}{'sd':>9}  90% HDI")
        for name, p in summary["parameters"].items():
            j = p["joint"]
            lines.append(
                f"{name:<24}{_g(j['map']):>10}{_g(j['mean']):>10}{_g(j['sd']):>9}  "
                f"[{_g(j['hdi90'][0])}, {_g(j['hdi90'][1])}]"
            )
    lines.append("")
    groups = "; ".join(
        f"{{{', '.join(g['parameters'])}}} <- {len(g['outputs'])} outputs"
        for g in summary["groups"]
    )
    lines.append(f"groups: {groups}")
    if summary.get("unconstrained"):
        lines.append(f"unconstrained (no output depends on them): {summary['unconstrained']}")
    fit = summary["fit"]
    lines.append(
        f"posterior predictive mean within the data sd at {fit['sizes_within_data_sd']}"
        f" of {fit['n_sizes']} sizes"
    )
    lines.append(
        f"posterior predictive mean within the 5-95% range of the replicas at "
        f"{fit['sizes_within_data_q05_q95']} of {fit['n_sizes']} sizes"
    )
    lines.append(f"converged: {'yes' if diag['converged'] else 'NO'}")
    if "diagnostics_joint" in summary:
        joint_ok = summary["diagnostics_joint"]["converged"]
        lines.append(f"joint comparison converged: {'yes' if joint_ok else 'NO'}")
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in summary["timings_s"].items())
    lines.append(f"timings: {timings}")
    return "\n".join(lines)


def _g(x: float) -> str:
    return f"{x:.4g}"


class _ProgressBars:
    """One tqdm bar per stage, on stderr."""

    def __init__(self, disabled: bool) -> None:
        self.disabled = disabled
        self.bar: Any = None
        self.stage = ""

    def update(self, p: Any) -> None:
        if self.disabled:
            return
        from tqdm import tqdm

        if p.stage != self.stage or self.bar is None:
            self.close()
            self.stage = p.stage
            self.bar = tqdm(total=p.total, desc=p.stage, file=sys.stderr, leave=True)
        self.bar.total = p.total
        self.bar.n = p.done
        if p.note:
            self.bar.set_postfix_str(p.note, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
