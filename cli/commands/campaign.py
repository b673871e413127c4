"""``mpiuq campaign``: run a calibration campaign end to end, or show its summary.

``mpiuq campaign run CAMPAIGN.toml [--out DIR] [--workers N | --scheduler ADDR]``
    design -> simulation -> surrogate -> Sobol -> groups -> MCMC -> diagnostics ->
    plots -> ``summary.json``; resumable (the design run continues from ``design.h5``).
``mpiuq campaign validate CAMPAIGN.toml --leave-one-series-out [--out DIR]``
    one fit per data series without it, scoring it (:mod:`mpiuq.commands.validate`).
``mpiuq campaign show mpiuq-results/NAME``
    Print the Table-1-like parameter table, identified combinations, model comparison and
    checks again from ``summary.json``.
``mpiuq campaign report results/NAME [--out FILE]``
    Write the self-contained HTML report (default ``results/NAME/report.html``; a run
    writes it too): checks and what they mean, parameters, figures, validation, hand-off.

``run`` exits 1 (with a WARNING on stderr) when the chains did not converge or a check
of severity "fail" failed (:mod:`mpiuq.calibration.checking.checks`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.calibration.units import unit_of
from mpiuq.commands.validate import add_run_options, add_validate_parser
from mpiuq.reports.result_output import results_folder
from mpiuq.reports.validation_text import validation_lines
from mpiuq.runtime.progress import Progress

if TYPE_CHECKING:
    from mpiuq.calibration.config import Campaign
    from mpiuq.calibration.data.design_reuse import DesignColumns


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``campaign`` sub-command with its ``run`` and ``show`` actions."""
    p = sub.add_parser(
        "campaign", help="Bayesian calibration campaigns (run, validate, show, report)"
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("run", help="run a campaign file end to end")
    r.add_argument("campaign", type=Path, help="campaign TOML file")
    add_run_options(
        r,
        "<name> in $MPIUQ_RESULTS, else in ./mpiuq-results",
        "discard the design checkpoint (design.h5) and an external simulator's run "
        "checkpoints (runs/), and evaluate them again",
    )
    r.set_defaults(handler=run)
    add_validate_parser(actions, validate)
    s = actions.add_parser("show", help="print the parameter table of a finished campaign")
    s.add_argument("folder", type=Path, help="results folder holding summary.json")
    s.set_defaults(handler=show)
    rep = actions.add_parser(
        "report", help="write the self-contained HTML report of a finished campaign"
    )
    rep.add_argument("folder", type=Path, help="results folder holding summary.json")
    rep.add_argument(
        "--out", type=Path, default=None, help="HTML file to write (default FOLDER/report.html)"
    )
    rep.set_defaults(handler=report)


def run(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign run``; exits 1 when a check that must pass failed."""
    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv
    from mpiuq.calibration.errors import CampaignError
    from mpiuq.calibration.pipeline.budget import check_campaign_budget

    campaign = load_campaign(args.campaign)
    check_campaign_budget(campaign)
    for spec in campaign.datasets:  # the data files, checked before the simulator loads
        read_benchmark_csv(spec.path, spec.benchmark)
    out = args.out if args.out is not None else results_folder() / campaign.name
    if out.exists() and not out.is_dir():
        raise CampaignError("results folder", str(out), "a folder, not an existing file")
    from mpiuq.calibration.reporting.artefacts import (
        hold_results_folder,  # SciPy, h5py: after the checks
    )

    with hold_results_folder(out):
        return _run_holding(args, campaign, out)


def _run_holding(args: argparse.Namespace, campaign: Campaign, out: Path) -> int:
    """``campaign run`` while this process holds the results folder ``out``."""
    from mpiuq.surrogate.executors import make_executor

    workers = args.workers if args.workers is not None else campaign.executor.workers
    scheduler = args.scheduler if args.scheduler is not None else campaign.executor.scheduler
    executor = make_executor(workers if workers and workers > 0 else None, scheduler)
    try:
        summary = run_into_folder(args, campaign, out, executor)
    finally:
        executor.close()
    print(format_table(summary))
    print(
        f"\nresults in {out}/ (summary.json, posterior.nc, posterior_draws.nc, surrogate.h5, "
        "surrogate_local.h5, design.h5, figures)"
    )
    try:
        from mpiuq.calibration.reporting.artefacts import SUMMARY_FILE
        from mpiuq.commands.report import write_folder_report

        print(f"report: {write_folder_report(out / SUMMARY_FILE)}")
    except OSError as exc:  # the results are complete without it
        from mpiuq.runtime.exit_codes import describe

        print(f"WARNING: report not written: {describe(exc)}", file=sys.stderr)
    return _warn(summary, running=True)


def run_into_folder(
    args: argparse.Namespace,
    campaign: Campaign,
    out: Path,
    executor: Any,
    design: DesignColumns | None = None,
) -> dict[str, Any]:
    """Run a campaign into the held folder ``out`` and write its results; its summary.

    The previous run's results are set aside first and restored if the run is refused
    before it starts (``--restart``, ``--no-plots`` and ``--quiet`` of ``args`` apply).
    """
    from mpiuq.calibration.pipeline.campaign import run_campaign
    from mpiuq.calibration.pipeline.run_budget import discard_runs
    from mpiuq.calibration.reporting.artefacts import (
        DESIGN_FILE,
        drop_previous_results,
        restore_previous_results,
        run_fingerprint,
        set_aside_previous_results,
        write_result_files,
        write_summary,
    )
    from mpiuq.calibration.reporting.report import summary_dict
    from mpiuq.calibration.sampling.path_record import discard_path_choice
    from mpiuq.surrogate.design.design_store import discard_store

    bars = _ProgressBars(disabled=args.quiet)
    started = [False]
    aside = None

    def on_progress(p: Any) -> None:
        started[0] = started[0] or p.stage != "data"  # data read, checkpoint accepted
        bars.update(p)

    try:
        if args.restart:
            discard_store(out / DESIGN_FILE)
            discard_runs(out)
            discard_path_choice(out)
        # From here on a kill must not leave the previous run's results looking current.
        aside = set_aside_previous_results(out)
        with Progress.of(args).watching_compilation():
            result = run_campaign(
                campaign, out, executor=executor, on_progress=on_progress, design=design
            )
    except BaseException:
        if aside is not None and not started[0]:  # refused before it began: nothing changed
            restore_previous_results(out, aside)
        raise
    finally:
        bars.close()
    t0 = time.perf_counter()
    files = write_result_files(result, out)
    summary = summary_dict(result)
    summary["timings_s"]["result_files"] = round(time.perf_counter() - t0, 3)
    if not args.no_plots:
        from mpiuq.plots.campaign import write_figures

        t0 = time.perf_counter()
        figures = write_figures(result, out)
        summary["timings_s"]["plots"] = round(time.perf_counter() - t0, 3)
        summary["figures"] = [f.name for f in figures]
        files += figures
    summary["timings_s"]["total"] = round(sum(summary["timings_s"].values()), 3)
    write_summary(summary, out, files, run_fingerprint(campaign))
    drop_previous_results(out)
    return summary


def validate(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign validate`` (:mod:`mpiuq.commands.validate`)."""
    from mpiuq.commands.validate import CampaignIO
    from mpiuq.commands.validate import validate as run_validation

    return run_validation(args, CampaignIO(run_into_folder, format_table, _warn, _ProgressBars))


def report(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign report`` (default ``FOLDER/report.html``)."""
    from mpiuq.calibration.reporting.artefacts import summary_file
    from mpiuq.commands.report import write_folder_report

    print(f"wrote {write_folder_report(summary_file(args.folder), args.out)}")
    return 0


def show(args: argparse.Namespace) -> int:
    """Execute ``mpiuq campaign show`` (warnings on stderr; exit 0)."""
    from mpiuq.calibration.errors import ResultsError
    from mpiuq.calibration.reporting.artefacts import (
        check_result_files,
        read_summary,
        result_file_states,
        run_holder,
    )
    from mpiuq.calibration.reporting.calibrated import posterior_path

    path, summary = read_summary(args.folder)
    if "checks" not in summary or "posterior_source" not in summary:
        raise ResultsError(
            f"{path} was written before the honest-calibration checks (no 'checks' table): "
            "re-run 'mpiuq campaign run' on its campaign file"
        )
    try:
        text = format_table(summary)
        _warn(summary, running=False)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
        raise ResultsError(
            f"{path} is not a complete campaign summary ({_malformed(exc)}): expected the "
            "summary.json written by 'mpiuq campaign run'"
        ) from None
    print(text)
    absent = [n for n, state in result_file_states(path, summary) if state == "not kept"]
    if absent:
        print(
            f"not in this folder: {', '.join(absent)} (large working files; nothing reads "
            "them after the run; a re-run writes them again)"
        )
    for problem in check_result_files(path, summary):
        print(f"WARNING: {problem}", file=sys.stderr)
    if not posterior_path(path.parent).is_file():
        print(
            f"WARNING: {path.parent} holds no posterior draws (posterior.nc or "
            "posterior_draws.nc): replay and whatif --params can use --estimate only; "
            "re-run the campaign to write them",
            file=sys.stderr,
        )
    pid = run_holder(path.parent)
    if pid is not None:
        print(
            f"note: a campaign run is writing {path.parent} now (pid {pid or 'unknown'}); "
            "these are the previous run's results",
            file=sys.stderr,
        )
    return 0


def _warn(summary: dict[str, Any], running: bool) -> int:
    """Print a loud stderr warning per failed check; 1 if a must-pass check failed."""
    status = 0
    if not summary["diagnostics"]["converged"]:
        print(
            "WARNING: MCMC did NOT converge (R-hat/ESS targets not met within max_steps); "
            "treat the estimates as preliminary and raise calibration.max_steps.",
            file=sys.stderr,
        )
        status = 1
    for name, c in summary.get("checks", {}).items():
        if c["passed"] or name == "mcmc_converged":
            continue
        if c["severity"] == "fail":
            print(f"WARNING: check {name} FAILED: {c['message']}", file=sys.stderr)
            status = 1
        else:
            print(f"warning: check {name}: {c['message']}", file=sys.stderr)
    return status if running else 0


def _malformed(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}" if exc.args else "a key is missing"
    return f"a value of the wrong type or shape: {' '.join(str(exc).split())}"


def format_table(summary: dict[str, Any]) -> str:
    """Table 1-like text: estimates, information, identified combinations, checks."""
    head = f"{'parameter':<24}{'median':>10}{'mean':>10}{'sd':>9}  {'90% HDI':<22}"
    head += f"{'prior range':<17}{'sd ratio':>9}{'KL nats':>8}  information"
    lines = [
        f"campaign {summary['name']} (seed {summary['seed']}, observable "
        f"{summary['observable']}, posterior computed by the {summary['posterior_source']})",
    ]
    for d in summary.get("data_sets", []):
        lines.append(
            f"data {d['label']}: {d['benchmark']} -> simulator {d['model']}, {d['n_sizes']} "
            f"sizes, {d['summary']} of the replicas, {d['likelihood']} likelihood"
        )
    lines += [head, "-" * len(head)]
    disc = summary["discrepancy"]["parameters"]
    noise = summary.get("noise", {}).get("parameters", {})
    rows = [(n, p, unit_of(n)) for n, p in summary["parameters"].items()]
    rows += [(n, p, "relative") for n, p in disc.items()]
    rows += [(n, p, "degrees of freedom") for n, p in noise.items()]
    for name, p, unit in rows:
        info = p["information"]
        hdi = f"[{_g(p['hdi90'][0])}, {_g(p['hdi90'][1])}]"
        prior = f"{_g(p['prior'][0])} - {_g(p['prior'][1])}"
        lines.append(
            f"{name:<24}{_g(p['median']):>10}{_g(p['mean']):>10}{_g(p['sd']):>9}  {hdi:<22}"
            f"{prior:<17}{info['sd_ratio']:>9.3f}{info['kl_nats']:>8.2f}  {info['label']}"
            + (f" ({unit})" if unit else "")
        )
    lines.append("")
    mode = summary["map"]
    lines.append(f"MAP: {'unique' if mode['unique'] else 'not unique'} ({mode['reason']})")
    combos = summary["identifiability"]["identified_combinations"]
    for cmb in combos:
        lines.append(
            f"identified combination: {cmb['expression']} = {_g(cmb['median'])} "
            f"[{_g(cmb['hdi90'][0])}, {_g(cmb['hdi90'][1])}] (sd ratio {cmb['sd_ratio']:.3f}, "
            f"{cmb['gain']:.2f} of its better parameter's)"
        )
    groups = "; ".join(
        f"{{{', '.join(g['parameters'])}}} <- {len(g['outputs'])} outputs"
        for g in summary["groups"]
    )
    lines.append(f"groups (grouped exploration, eq. 9): {groups}")
    if summary.get("unconstrained"):
        lines.append(f"no influence at all (prior kept in grouping): {summary['unconstrained']}")
    sur = summary["surrogate"]["at_posterior"]
    lines.append(
        f"surrogate error at the posterior ({sur['checked_by']}, {sur['n_draws']} draws): "
        f"worst RMS {sur['worst_rmse_data_sd']:.3g} data sd"
    )
    lines += _posterior_lines(summary.get("posterior", {}))
    pred = summary["predictive"]
    lines.append(
        f"posterior predictive ({pred['source']}): data inside the 90% band at "
        f"{pred['n_inside_90']} of {pred['n_sizes']} sizes; model median within the data sd at "
        f"{pred['n_within_data_sd']}"
    )
    lines += validation_lines(summary.get("validation"))
    comp = summary["model_comparison"]
    if comp["table"]:
        lines.append("model comparison (PSIS-LOO, one observation per size):")
        for row in comp["table"]:
            v = comp["variants"][row["variant"]]
            lines.append(
                f"  {row['variant']:<16} elpd_loo {_num(row['elpd_loo'], '8.2f')}  diff "
                f"{_num(row['elpd_diff'], '6.2f')} +- {_num(row['dse'], '.2f')}  p_loo "
                f"{_num(row['p_loo'], '5.1f')}  max k {_num(v['max_pareto_k'], '.2f')}"
                f"  inside 90% {v['n_inside_90']}/{v['n_sizes']}"
            )
    d = summary["discrepancy"]
    if d["model"] != "none":
        lines.append(f"discrepancy: {d['model']} over regimes {', '.join(d['regimes'])}")
    runs = summary.get("simulator_runs")
    if runs:
        stages = ", ".join(f"{k} {v}" for k, v in runs["stages"].items())
        budget = f" of {runs['budget']}" if runs["budget"] is not None else ""
        lines.append(
            f"simulator runs: {stages}; {runs['total']}{budget} in all "
            f"({runs['computed_by_this_run']} by this run, {runs['from_checkpoints']} from "
            "checkpoints)"
        )
    lines.append(f"converged: {'yes' if summary['diagnostics']['converged'] else 'NO'}")
    width = max(len(name) for name in summary["checks"])
    for name, c in summary["checks"].items():
        tag = "ok" if c["passed"] else ("FAILED" if c["severity"] == "fail" else "warning")
        lines.append(f"check {name:<{width}} {tag:<8} {c['message']}")
    lines.append(f"checks passed: {'yes' if summary['checks_passed'] else 'NO'}")
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in summary["timings_s"].items())
    lines.append(f"timings: {timings}")
    return "\n".join(lines)


def _posterior_lines(post: dict[str, Any]) -> list[str]:
    """Which posterior path ran, what it did and what was verified."""
    if not post:
        return []
    lines = [
        f"posterior path: {post.get('path', '?')} ({post.get('reason', 'recorded before paths')})"
    ]
    d = post.get("direct")
    if d is not None:
        ess = min(min(p["ess_bulk"], p["ess_tail"]) for p in d["parameters"].values())
        rhat = max(p["rhat"] for p in d["parameters"].values())
        lines.append(
            f"direct MCMC on the simulator: {d['populations']} populations x {d['walkers']} "
            f"walkers, {d['steps']} steps, {d['evaluations']} runs in {d['seconds']:.1f} s; "
            f"max R-hat {rhat:.4f}, min ESS {ess:.0f}"
        )
        for c in d.get("symmetry", []):
            lines.append(
                f"exchangeable {c['parameters'][0]} / {c['parameters'][1]}: sampled in order, "
                f"draws symmetrised (means differ by {c['mean_diff_sd']:.3f} sd)"
            )
    if "importance" in post:
        imp, mv = post["importance"], post.get("moves", {})
        lines.append(
            f"surrogate posterior corrected on the simulator: importance k-hat "
            f"{imp['pareto_khat']:.2f}, ESS {imp['ess']:.0f} of {imp['n_proposal']}; "
            f"{mv.get('steps', 0)} moves per draw, acceptance {mv.get('acceptance', 0.0):.2f}"
        )
    exact = post.get("exact_for_simulator", False)
    lines.append(
        f"{'exact for the simulator' if exact else 'not verified exact'}: {post.get('verified', '')}"
    )
    return lines


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


def _num(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec``, or ``n/a`` for a value summary.json stores as null
    (not finite: e.g. a Pareto k-hat of degenerate importance weights)."""
    return "n/a" if value is None else format(value, spec)
