"""The last two sections of the campaign report: the hand-off and the run's details.

The hand-off names the file replay and what-if read and its SHA-256 (for an external
simulator, its runs per stage instead); the run's details are the data sets, the
sampler's diagnostics, the surrogate and exact posterior, the timings and the state of
every file the run wrote. Reads nothing but the results folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpiuq.reports.html import badge, esc, generic, key_values, note, number, table

#: Keys under which a summary may hold a hand-off record.
HANDOFF_KEYS = ("handoff", "hand_off")


def handoff_section(folder: Path, s: Mapping[str, Any]) -> str:
    """Which file replay and what-if read (and its SHA-256), or an external simulator's runs."""
    from mpiuq.calibration.reporting.artefacts import SUMMARY_FILE, file_sha256
    from mpiuq.calibration.reporting.calibrated import posterior_path
    from mpiuq.calibration.reporting.handoff import external_simulator

    external = external_simulator(s)
    if external is not None:
        return _external_runs(s) + note(
            f"This campaign calibrated the external simulator <code>{esc(external)}</code>: "
            "its parameters are that simulator's, so there is no hand-off to mpiuq's replay "
            "and what-if. Run the external simulator with the posterior draws of "
            f"<code>{esc(posterior_path(folder))}</code> or the medians above."
        )
    run = s.get("run")
    recorded = run.get("files", {}) if isinstance(run, Mapping) else {}
    draws = posterior_path(folder)
    rows: list[tuple[str, str]] = []
    if draws.is_file():
        digest = file_sha256(draws)
        want = recorded.get(draws.name) if isinstance(recorded, Mapping) else None
        if want is None:
            state = badge("info", "not recorded by the run")
        elif want == digest:
            state = badge("ok", "as the run wrote it")
        else:
            state = badge("failed", "changed since the run")
        rows.append(("posterior draws (default)", f"<code>{esc(draws)}</code> {state}"))
        rows.append(("its SHA-256", f"<code>{digest}</code>"))
    else:
        rows.append(
            (
                "posterior draws (default)",
                badge("warning", "none")
                + esc(" no posterior.nc or posterior_draws.nc: only --estimate works"),
            )
        )
    summary = folder / SUMMARY_FILE
    rows.append(("point estimates (--estimate)", f"<code>{esc(summary)}</code>"))
    rows.append(("its SHA-256", f"<code>{file_sha256(summary)}</code>"))
    out = [
        key_values(rows),
        note(
            f"<code>mpiuq replay TRACE --params {esc(folder)}</code> and <code>mpiuq whatif "
            f"TRACE --params {esc(folder)} --scenario ...</code> read the posterior draws "
            "above (64 by default); with <code>--estimate median</code> they read the "
            "summary's medians instead."
        ),
    ]
    for key in HANDOFF_KEYS:
        if isinstance(s.get(key), Mapping):
            out.append("<h3>Hand-off record</h3>" + generic(s[key]))
    return "\n".join(out)


def run_section(folder: Path, s: Mapping[str, Any]) -> str:
    """The run's details: what was run, on which data, how well it sampled, what it wrote."""
    record = s.get("run")
    run: Mapping[str, Any] = record if isinstance(record, Mapping) else {}
    out = [
        key_values(
            [
                ("campaign file", f'<code class="path">{esc(s.get("campaign_file"))}</code>'),
                ("seed", esc(s.get("seed"))),
                ("mpiuq version", esc(run.get("mpiuq_version", "not recorded"))),
                ("run fingerprint", f"<code>{esc(run.get('fingerprint', 'not recorded'))}</code>"),
            ]
        ),
        "<h3>Data</h3>",
        _data_sets(s),
        _diagnostics(s),
        _surrogate_and_exact(s),
    ]
    timings = s.get("timings_s", {})
    if timings:
        out += [
            "<h3>Timings</h3>",
            note(esc(", ".join(f"{k} {number(v, 3)} s" for k, v in timings.items()))),
        ]
    out.append(_written_files(folder, s))
    return "\n".join(part for part in out if part)


def _data_sets(s: Mapping[str, Any]) -> str:
    """One row per calibrated data set: its file, benchmark, simulator and likelihood."""
    return table(
        [
            "label",
            "file",
            "benchmark",
            "simulator",
            "observable",
            "sizes",
            "reduced by",
            "likelihood",
        ],
        (
            [
                esc(d.get("label")),
                f'<code class="path">{esc(d.get("path"))}</code>',
                esc(d.get("benchmark")),
                esc(d.get("model")),
                esc(d.get("observable")),
                number(d.get("n_sizes")),
                esc(d.get("summary")),
                esc(d.get("likelihood")),
            ]
            for d in s.get("data_sets", [])
        ),
        (5,),
    )


def _diagnostics(s: Mapping[str, Any]) -> str:
    """The grouped stage's sampler diagnostics per parameter ("" when none are recorded)."""
    diag = s.get("diagnostics", {})
    rows = [
        [
            f"<code>{esc(name)}</code>",
            number(d.get("rhat"), 4),
            number(d.get("ess_bulk"), 4),
            number(d.get("ess_tail"), 4),
            number(d.get("acceptance"), 2),
            number(d.get("steps")),
        ]
        for name, d in diag.items()
        if isinstance(d, Mapping)
    ]
    if not rows:
        return ""
    return "<h3>Sampler diagnostics (grouped stage)</h3>\n" + table(
        ["parameter", "R-hat", "ESS bulk", "ESS tail", "acceptance", "steps"],
        rows,
        (1, 2, 3, 4, 5),
    )


def _surrogate_and_exact(s: Mapping[str, Any]) -> str:
    """The surrogate's size and its error at the posterior; where the exact draws came from."""
    sur = s.get("surrogate", {})
    at = sur.get("at_posterior", {})
    ex = s.get("exact", {})
    imp = ex.get("importance", {})
    return "<h3>Surrogate and exact posterior</h3>\n" + key_values(
        [
            (
                "surrogate",
                esc(
                    f"level {sur.get('level')}, order {sur.get('order')}, "
                    f"{sur.get('n_train')} training runs, {sur.get('n_terms')} terms"
                ),
            ),
            (
                "error at the posterior",
                esc(
                    f"worst RMS {number(at.get('worst_rmse_data_sd'), 3)} data sd "
                    f"({at.get('checked_by')}, {at.get('n_draws')} draws)"
                ),
            ),
            (
                "exact posterior",
                esc(
                    f"{ex.get('n_draws')} draws from the {ex.get('source')}"
                    + (
                        f"; importance k-hat {number(imp.get('pareto_khat'), 2)}, ESS "
                        f"{number(imp.get('ess'), 4)} of {imp.get('n_proposal')}"
                        if imp
                        else ""
                    )
                ),
            ),
        ]
    )


def _written_files(folder: Path, s: Mapping[str, Any]) -> str:
    """Each file the run recorded and whether it is still as written ("" when none)."""
    from mpiuq.calibration.reporting.artefacts import SUMMARY_FILE, result_file_states

    states = result_file_states(folder / SUMMARY_FILE, dict(s))
    if not states:
        return ""
    labels = {
        "ok": ("ok", "as written"),
        "not kept": ("info", "not kept (large working file)"),
        "changed": ("failed", "changed since the run"),
        "missing": ("failed", "missing"),
        "invalid name": ("failed", "not a file name"),
    }
    return "<h3>Files the run wrote</h3>\n" + table(
        ["file", "state"],
        ([f"<code>{esc(n)}</code>", badge(*labels.get(st, ("info", st)))] for n, st in states),
    )


def _external_runs(s: Mapping[str, Any]) -> str:
    """An external simulator's runs per stage against its budget (``simulator_runs``)."""
    record = s.get("simulator_runs")
    runs: Mapping[str, Any] = record if isinstance(record, Mapping) else {}
    stages = runs.get("stages")
    rows = [
        [esc(stage), number(n)]
        for stage, n in (stages.items() if isinstance(stages, Mapping) else ())
    ]
    rows.append(["total", number(runs.get("total"))])
    budget = runs.get("budget")
    return (
        "<h3>Simulator runs</h3>"
        + table(["stage", "runs"], rows, (1,))
        + note(
            f"Budget: {esc('none' if budget is None else budget)} runs; "
            f"{esc(runs.get('from_checkpoints', 0))} of them came from checkpoints of an "
            "earlier run."
        )
    )
