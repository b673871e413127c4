"""Text of a campaign's validation: ``campaign show`` lines and the leave-one-series-out table.

Both read the ``validation`` section of ``summary.json``
(:mod:`mpiuq.calibration.checking.validation_report`); in-sample and out-of-sample figures are
printed on separate lines and the in-sample line says what it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def validation_lines(v: Mapping[str, Any] | None) -> list[str]:
    """Lines of ``campaign show`` for a summary's ``validation`` section (none without one)."""
    if not v:
        return []
    ins = v["in_sample"]
    lines = [
        f"validation ({v['draws']} posterior draws; {v['predictive']}):",
        f"  fitted sizes: {ins['n_inside_90']}/{ins['n_sizes']} inside the 90% band, "
        f"median error {_pct(ins['median_relative_error'])} ({ins['note']})",
    ]
    for g in v["groups"]:
        lines.append("  " + group_line(g))
    if not v["groups"]:
        lines.append("  nothing held out and no unselected sizes")
    return lines


def group_line(g: Mapping[str, Any]) -> str:
    """One scored group: coverage against its threshold, median error, verdict."""
    where = (
        f"{g['n_outside_fitted_range']} outside the fitted range"
        if g["fitted_range_bytes"] is not None
        else "series not fitted"
    )
    verdict = "ok" if g["passed"] else "FAILED"
    return (
        f"{g['kind']} {g['name']}: {g['n_inside_90']}/{g['n_sizes']} inside the 90% band "
        f"({_pct(g['coverage'])}; >= {g['threshold']} needed), median error "
        f"{_pct(g['median_relative_error'])}; {where}: {verdict}"
    )


def loso_table(rows: Sequence[Mapping[str, Any]], alpha: float) -> str:
    """The leave-one-series-out table: per held-out series, out-of-sample then in-sample."""
    head = (
        f"{'held-out series':<24}{'sizes':>6}{'inside':>8}{'coverage':>10}{'needed':>8}"
        f"{'median err':>11}  {'in-sample (fitted series)':<26}verdict"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        ins = f"{r['in_sample_inside']}/{r['in_sample_sizes']}, err {_pct(r['in_sample_error'])}"
        lines.append(
            f"{r['series']:<24}{r['n_sizes']:>6}{r['n_inside_90']:>8}{_pct(r['coverage']):>10}"
            f"{r['threshold']:>8}{_pct(r['median_relative_error']):>11}  {ins:<26}"
            f"{'ok' if r['passed'] else 'FAILED'}"
        )
    lines.append(
        "coverage: held-out sizes inside the 90% posterior-predictive band of the fit without "
        f"the series; needed: the {alpha:g} quantile of Binomial(sizes, 0.9) "
        "(checks.coverage_alpha); "
        "in-sample: the fold's fitted sizes, scored on the sizes its discrepancy was fitted to"
    )
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"
