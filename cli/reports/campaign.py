"""The HTML report of a finished campaign: ``summary.json`` and the figures, for a person.

Sections: the verdict and every check with what it means in plain words; the parameter
table with identifiability; the figures; the posterior predictive (in-sample) and the
held-out validation (out-of-sample, when the campaign holds series out); the hand-off to
replay and what-if (which file they read, its SHA-256; for an external simulator, its runs
per stage instead); and the run's details (these two in :mod:`mpiuq.reports.campaign_run`).
Reads nothing but the results folder; imports neither matplotlib nor numba.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpiuq.reports.campaign_run import handoff_section, run_section
from mpiuq.reports.html import (
    badge,
    esc,
    figure,
    generic,
    note,
    number,
    page,
    table,
)

#: What each check means, in plain words, by check name (the part before `` (``: a
#: variant's or data set's check shares its kind's text).
CHECK_MEANINGS: dict[str, str] = {
    "mcmc_converged": (
        "The Markov chains that explore the posterior mixed: independent chains agree "
        "(R-hat close to 1) and enough effectively independent draws were taken. If not, "
        "the numbers below may still move with a longer run: raise max_steps."
    ),
    "surrogate_error": (
        "During sampling a fast polynomial surrogate stands in for the simulator. This "
        "checks it against the simulator itself at posterior draws: its error must be "
        "small next to the scatter of the measurements, or the posterior could be off by "
        "more than the data can tell."
    ),
    "importance_sampling": (
        "The final posterior is made exact for the simulator by re-weighting the "
        "surrogate's draws with the simulator's own likelihood. The weights must be well "
        "behaved (Pareto k-hat at most 0.7, enough effective draws), otherwise the "
        "posterior rests on a handful of draws. For a comparison variant (named in "
        "brackets) it is information only."
    ),
    "predictive_coverage": (
        "The calibrated simulator reproduces the measurements it was fitted to: at enough "
        "message sizes the measured value lies inside the 90% band the posterior predicts "
        "(as many as 90% coverage allows by chance). Too few means the model misses part "
        "of the data and its parameter uncertainties are too narrow."
    ),
    "moves_mixed": (
        "On the surrogate path the re-weighted draws are moved on the simulator in "
        "several independent sub-populations. They must agree (R-hat close to 1) and no "
        "move may have met a failed simulator run; otherwise the final draws still carry "
        "the surrogate's shape."
    ),
    "posterior_converged": (
        "On the direct path the posterior is sampled on the simulator itself by several "
        "independent populations. They must agree (R-hat close to 1) with enough "
        "effectively independent draws in the bulk and the tails for every parameter; "
        "only then are the draws called exact for the simulator."
    ),
    "exchangeable": (
        "Parameters declared interchangeable (such as the two bandwidths of a two-node "
        "ping-pong) must really be: swapping them at random points leaves every simulated "
        "output unchanged. The posterior is then sampled symmetric in them."
    ),
    "grouped_vs_posterior": (
        "A fast first stage samples parameters in groups, by which outputs they "
        "influence. This compares it with the final posterior; a shift means the grouping "
        "approximation mattered, but every number in this report is the final posterior's."
    ),
    "loo_reliable": (
        "The leave-one-size-out model comparison (PSIS-LOO) is reliable: no single "
        "message size dominates it. If not, read the model-comparison table as indicative."
    ),
    "heldout_coverage": (
        "Data held out of the fit (a whole series or a size range) fall inside their 90% "
        "posterior-predictive band often enough: at least the 1% quantile of "
        "Binomial(sizes, 0.9). This is the out-of-sample test of the calibration."
    ),
    "unselected_coverage": (
        "The measured sizes of a fitted series that the fit did not select fall inside "
        "their 90% band often enough (the same binomial rule)."
    ),
    "prior_bounds": (
        "No posterior piles up against a bound of its prior range. If one does, the data "
        "want a value the prior excludes: the bound is too tight, or the model puts other "
        "costs on that parameter."
    ),
    "warmup": (
        "The data table drops each burst's first iterations as warm-up. This checks that "
        "they really are slower; if not (synthetic data, say), dropping them throws away "
        "clean measurements."
    ),
}

#: What each figure shows, by file name.
FIGURE_CAPTIONS: dict[str, str] = {
    "sensitivity.png": (
        "Total Sobol indices over the prior: the share of each output's variance a "
        "parameter explains, alone or with others (1 = all of it). A parameter with no "
        "influence on any output cannot be learnt from these data."
    ),
    "predictive.png": (
        "Posterior predictive computed by the simulator against the data, over message "
        "size, protocol boundaries dotted. Lower panel: model minus data in units of the "
        "data's spread, bars the 90% predictive band; within the grey band is within one "
        "data sd."
    ),
    "marginals.png": (
        "Marginal posterior of every parameter (blue: exact; black outline: the grouped "
        "surrogate stage; dashed: the prior's density; shaded: the 90% HDI), zoomed on "
        "the posterior."
    ),
    "pairs.png": (
        "Pairs of model parameters under the exact posterior: contours enclose 50% and "
        "90% of the draws; red lines mark identified combinations such as min(a, b); "
        "the diagonal shows each parameter's marginal with its median and 90% HDI."
    ),
    "discrepancy.png": (
        "Model discrepancy per protocol regime: how far, relatively, the simulator is "
        "allowed to be off in each regime, as the data estimate it."
    ),
    "validation.png": (
        "Data the fit did not see (held-out series and sizes, the sizes the fit did not "
        "select) against the 90% posterior-predictive band: green inside, red outside; "
        "black, the fitted sizes of the same series with their in-sample bands. Lower "
        "panel: everything relative to the predictive median."
    ),
}

#: Keys under which a summary may hold held-out validation (first present wins).
VALIDATION_KEYS = ("validation", "held_out", "holdout")


def check_meaning(name: str) -> str:
    """The plain-words meaning of a check (by the part of its name before `` (``)."""
    return CHECK_MEANINGS.get(
        name.split(" (", 1)[0],
        "No explanation is recorded for this check; its result says what was measured.",
    )


def campaign_report(folder: Path, summary: Mapping[str, Any]) -> str:
    """The report of the campaign whose ``summary.json`` is ``summary``, in ``folder``."""
    from mpiuq import __version__

    sections = [
        ("checks", "Verdict and checks", _checks(summary)),
        ("parameters", "Parameters", _parameters(summary)),
        ("figures", "Figures", _figures(folder, summary)),
        ("predictive", "Posterior predictive (in-sample)", _predictive(summary)),
        ("validation", "Held-out validation (out-of-sample)", _validation(summary)),
        ("handoff", "Hand-off to replay and what-if", handoff_section(folder, summary)),
        ("run", "Run details", run_section(folder, summary)),
    ]
    subtitle = (
        f"campaign {summary.get('name', '?')}, seed {summary.get('seed', '?')}, observable "
        f"{summary.get('observable', '?')}; posterior computed by the "
        f"{summary.get('posterior_source', '?')}"
    )
    return page(
        f"mpiuq campaign report: {summary.get('name', folder.name)}",
        subtitle,
        sections,
        folder,
        __version__,
    )


def _check_status(c: Mapping[str, Any]) -> str:
    if c.get("passed"):
        return "ok"
    return "failed" if c.get("severity") == "fail" else "warning"


def _checks(s: Mapping[str, Any]) -> str:
    checks: Mapping[str, Any] = s.get("checks", {})
    failed = [n for n, c in checks.items() if _check_status(c) == "failed"]
    warned = [n for n, c in checks.items() if _check_status(c) == "warning"]
    converged = bool(s.get("diagnostics", {}).get("converged", False))
    if failed or not converged:
        what = f"{len(failed)} must-pass check(s) failed" if failed else "MCMC did not converge"
        verdict = (
            f'<div class="verdict fail">{esc(what)}: do not rely on these estimates yet '
            "(see below for why and what to change).</div>"
        )
    else:
        tail = f"; {len(warned)} warning(s) to read below" if warned else ""
        verdict = f'<div class="verdict ok">Every must-pass check passed{esc(tail)}.</div>'
    rows = [
        [
            f"<code>{esc(name)}</code>",
            badge(_check_status(c)),
            esc("must pass" if c.get("severity") == "fail" else "warning only"),
            esc(c.get("message", "")),
            esc(check_meaning(name)),
        ]
        for name, c in checks.items()
    ]
    return (
        verdict
        + table(["check", "result", "kind", "what was measured", "what it means"], rows)
        + note(
            "A failed must-pass check makes <code>mpiuq campaign run</code> exit 1; a "
            "warning is printed but does not. Thresholds come from the campaign's "
            "<code>[checks]</code> table."
        )
    )


def _unit(name: str, kind: str) -> str:
    from mpiuq.calibration.units import unit_of

    if kind == "noise":
        return "degrees of freedom"
    return unit_of(name) or ("relative" if kind == "discrepancy" else "")


_IDENT_STATUS = {"identified": "ok", "weakly identified": "warning", "not identified": "info"}


def _parameter_rows(table_: Mapping[str, Any], kind: str) -> list[list[str]]:
    rows = []
    for name, p in table_.items():
        info = p.get("information", {})
        label = str(info.get("label", "?"))
        hdi = p.get("hdi90", [None, None])
        prior = p.get("prior", [None, None])
        rows.append(
            [
                f"<code>{esc(name)}</code>",
                esc(_unit(name, kind)),
                number(p.get("median")),
                f"[{number(hdi[0])}, {number(hdi[1])}]",
                number(p.get("sd"), 3),
                f"{number(prior[0])} – {number(prior[1])}",
                number(info.get("sd_ratio"), 3),
                number(info.get("kl_nats"), 3),
                badge(_IDENT_STATUS.get(label, "info"), label),
            ]
        )
    return rows


def _parameters(s: Mapping[str, Any]) -> str:
    from mpiuq.calibration.reporting.identifiability import IDENTIFIED_RATIO, UNINFORMED_RATIO

    headers = [
        "parameter",
        "unit",
        "median",
        "90% HDI",
        "sd",
        "prior range",
        "sd ratio",
        "KL nats",
        "identifiability",
    ]
    out = [table(headers, _parameter_rows(s.get("parameters", {}), "model"), (2, 3, 4, 5, 6, 7))]
    out.append(
        note(
            "sd ratio: posterior sd over prior sd (1 = the data taught nothing, 0.5 = "
            "the uncertainty halved). KL: information gained from prior to posterior. "
            f"<em>identified</em>: sd ratio at most {IDENTIFIED_RATIO:g}; <em>weakly "
            f"identified</em>: up to {UNINFORMED_RATIO:g}; <em>not identified</em>: above "
            "that, the posterior is essentially the prior, so its median is the prior's "
            "middle, not a measurement."
        )
    )
    for key, kind, title in (
        ("discrepancy", "discrepancy", "Model discrepancy terms"),
        ("noise", "noise", "Noise model terms"),
    ):
        params = s.get(key, {}).get("parameters", {})
        if params:
            out.append(f"<h3>{esc(title)}</h3>")
            out.append(table(headers, _parameter_rows(params, kind), (2, 3, 4, 5, 6, 7)))
    combos = s.get("identifiability", {}).get("identified_combinations", [])
    out.append("<h3>Identified combinations</h3>")
    if combos:
        out.append(
            table(
                ["combination", "median", "90% HDI", "sd ratio", "vs its better parameter"],
                (
                    [
                        f"<code>{esc(c['expression'])}</code>",
                        number(c.get("median")),
                        f"[{number(c['hdi90'][0])}, {number(c['hdi90'][1])}]",
                        number(c.get("sd_ratio"), 3),
                        number(c.get("gain"), 3),
                    ]
                    for c in combos
                ),
                (1, 2, 3, 4),
            )
        )
        out.append(
            note(
                "Where the data fix a combination of parameters (e.g. the smaller of two "
                "bandwidths) but not each one, the combination is the measured quantity."
            )
        )
    else:
        out.append(note("None beyond the single parameters."))
    mode = s.get("map", {})
    if mode:
        out.append(
            note(
                f"Most probable point (MAP): {'unique' if mode.get('unique') else 'not unique'}"
                f" ({esc(mode.get('reason', ''))}). The estimates are posterior medians."
            )
        )
    return "\n".join(out)


def _figures(folder: Path, s: Mapping[str, Any]) -> str:
    listed = [f for f in s.get("figures", []) if isinstance(f, str)]
    extra = sorted(p.name for p in folder.glob("*.png") if p.name not in listed and p.is_file())
    parts = []
    missing = []
    for name in [*listed, *extra]:
        path = folder / name
        if Path(name).name != name or not path.is_file():
            missing.append(name)
            continue
        parts.append(figure(path, esc(FIGURE_CAPTIONS.get(name, "a figure of this run."))))
    if missing:
        parts.append(note(f"Listed but not in the folder: {esc(', '.join(missing))}."))
    if not listed and not extra:
        parts.append(note("This run wrote no figures (<code>--no-plots</code>)."))
    return "\n".join(parts)


def _predictive(s: Mapping[str, Any]) -> str:
    pred = s.get("predictive", {})
    sizes = pred.get("sizes", [])
    out = [
        note(
            f"Computed by the {esc(pred.get('source', '?'))} at posterior draws, on the data "
            f"the campaign was fitted to (in-sample). Measured value inside the 90% "
            f"predictive band at <strong>{esc(pred.get('n_inside_90', '?'))} of "
            f"{esc(pred.get('n_sizes', '?'))}</strong> sizes; model median within one data "
            f"sd at {esc(pred.get('n_within_data_sd', '?'))}. z = (model median - data) / "
            "data sd."
        )
    ]
    rows = [
        [
            esc(p.get("data_set", "")),
            number(p.get("size_bytes")),
            esc(p.get("protocol", "")),
            number(p.get("n_replicas")),
            f"{number(p.get('data_mean'))} ± {number(p.get('data_sd'), 2)}",
            number(p.get("model_median")),
            f"[{number(p.get('post_q05'))}, {number(p.get('post_q95'))}]",
            badge("ok", "inside") if p.get("inside_90") else badge("warning", "outside"),
            number(p.get("z"), 2),
        ]
        for p in sizes
    ]
    out.append(
        table(
            [
                "data set",
                "size B",
                "protocol",
                "replicas",
                "data (mean ± sd)",
                "model median",
                "90% predictive",
                "",
                "z",
            ],
            rows,
            (1, 3, 4, 5, 6, 8),
        )
    )
    comp = s.get("model_comparison", {})
    if comp.get("table"):
        out.append("<h3>Model comparison</h3>")
        variants = comp.get("variants", {})
        out.append(
            table(
                ["variant", "elpd_loo", "difference ± se", "p_loo", "max k-hat", "inside 90%"],
                (
                    [
                        esc(r["variant"]),
                        number(r.get("elpd_loo")),
                        f"{number(r.get('elpd_diff'), 3)} ± {number(r.get('dse'), 3)}",
                        number(r.get("p_loo"), 3),
                        number(variants.get(r["variant"], {}).get("max_pareto_k"), 2),
                        f"{esc(variants.get(r['variant'], {}).get('n_inside_90', '?'))} / "
                        f"{esc(variants.get(r['variant'], {}).get('n_sizes', '?'))}",
                    ]
                    for r in comp["table"]
                ),
                (1, 2, 3, 4, 5),
            )
        )
        out.append(
            note(
                f"{esc(comp.get('method', 'PSIS-LOO'))}: higher elpd predicts left-out "
                "sizes better; a difference within about two standard errors is no "
                "clear preference."
            )
        )
    return "\n".join(out)


def _validation(s: Mapping[str, Any]) -> str:
    v = s.get("validation")
    if isinstance(v, Mapping) and isinstance(v.get("groups"), list):
        return _validation_table(v)
    for key in VALIDATION_KEYS:
        if s.get(key):
            return note(
                "Scored on series or sizes the campaign held out of the fit: the honest "
                "test of prediction."
            ) + generic(s[key])
    return note(
        "No held-out validation in this campaign: every number above is in-sample (the "
        "data the parameters were fitted to)."
    )


def _validation_table(v: Mapping[str, Any]) -> str:
    """A ``[validation]`` campaign's scores (:mod:`mpiuq.calibration.checking.validation_report`)."""
    from mpiuq.reports.html import badge, esc

    ins = v["in_sample"]
    rows = [
        [
            esc(g["kind"]),
            esc(g["name"]),
            f"{g['n_inside_90']} / {g['n_sizes']}",
            number(100 * g["coverage"], 3) + "%",
            esc(g["threshold"]),
            number(100 * g["median_relative_error"], 3) + "%",
            esc(
                "series not fitted"
                if g["fitted_range_bytes"] is None
                else f"{g['n_outside_fitted_range']} outside"
            ),
            badge("ok" if g["passed"] else "failed", "passed" if g["passed"] else "FAILED"),
        ]
        for g in v["groups"]
    ]
    return note(
        f"Scored on data the fit did not see, with the {v['predictive']} "
        f"({v['draws']} posterior draws). Rule: {v['rule']}. In-sample, for comparison: "
        f"{ins['n_inside_90']} of {ins['n_sizes']} fitted sizes inside, median error "
        f"{number(100 * ins['median_relative_error'], 3)}% ({ins['note']})."
    ) + table(
        [
            "kind",
            "scored",
            "inside 90%",
            "coverage",
            "needed",
            "median error",
            "fitted size range",
            "verdict",
        ],
        rows,
        numeric=(2, 3, 4, 5),
    )
