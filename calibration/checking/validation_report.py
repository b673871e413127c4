"""The ``validation`` section of ``summary.json``: a :class:`ValidationResult` as JSON data.

Per scored group: what it is, its coverage and errors, and per size (columns) the data,
the predictive band and where the size's discrepancy came from. Non-finite floats are
left for :func:`~mpiuq.calibration.reporting.report.summary_dict` to turn into null.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mpiuq.calibration.checking.validation_result import GroupScore, ValidationResult
from mpiuq.calibration.model.transfer import SOURCES

#: What the scoring predictive is (``summary.json`` and the CLI say it).
PREDICTIVE_LABEL = (
    "posterior predictive: simulator at posterior draws, discrepancy (fitted term of the "
    "series and regime, else the largest spread of the regime's other terms) and noise of "
    "the series' likelihood with the measured replica spread; band 5-95%"
)
#: The rule of the must-pass checks.
RULE = (
    "a group fails when fewer of its sizes lie inside the 90% band than the "
    "checks.coverage_alpha quantile of Binomial(n_sizes, 0.9)"
)
#: What the in-sample coverage is (with and without a discrepancy model).
IN_SAMPLE_NOTE = "in-sample: scored on the sizes the discrepancy was fitted to"
IN_SAMPLE_NOTE_PLAIN = "in-sample: scored on the sizes the parameters were fitted to"


def validation_dict(v: ValidationResult) -> dict[str, Any]:
    """The JSON-ready ``validation`` section."""
    return {
        "predictive": PREDICTIVE_LABEL,
        "rule": RULE,
        "coverage_alpha": v.alpha,
        "draws": v.n_draws,
        "holdouts": [
            {"series": h.series, "min_bytes": h.min_bytes, "max_bytes": h.max_bytes}
            for h in v.spec.holdouts
        ],
        "unselected_sizes": v.spec.unselected_sizes,
        "in_sample": {
            "n_sizes": v.in_sample.n_sizes,
            "n_inside_90": v.in_sample.n_inside,
            "median_relative_error": v.in_sample.median_relative_error,
            "note": IN_SAMPLE_NOTE if v.in_sample.discrepancy else IN_SAMPLE_NOTE_PLAIN,
        },
        "groups": [_group(g) for g in v.groups],
        "passed": all(g.passed for g in v.groups),
    }


def _group(g: GroupScore) -> dict[str, Any]:
    spec = g.group.spec
    n = int(g.sizes_bytes.size)
    return {
        "name": g.group.name,
        "kind": g.group.kind,
        "series": spec.label,
        "benchmark": spec.benchmark,
        "model": spec.model,
        "observable": spec.observable,
        "likelihood": spec.likelihood,
        "n_sizes": n,
        "n_inside_90": g.n_inside,
        "coverage": g.n_inside / n,
        "threshold": g.threshold,
        "passed": g.passed,
        "median_relative_error": g.median_relative_error,
        "fitted_range_bytes": None if g.fitted_range is None else list(g.fitted_range),
        "n_outside_fitted_range": g.n_outside_fitted_range,
        "skipped_sizes": list(g.skipped),
        "discrepancy_sources": {
            s: sum(1 for x in g.sources if x == s) for s in SOURCES if s in g.sources
        },
        "sizes": {
            "size_bytes": g.sizes_bytes.tolist(),
            "regime": list(g.regimes),
            "source": list(g.sources),
            "data": g.data_mean.tolist(),
            "data_sd": g.data_sd.tolist(),
            "q05": g.band.lo.tolist(),
            "median": g.band.median.tolist(),
            "q95": g.band.hi.tolist(),
            "inside_90": [bool(b) for b in g.inside],
            "relative_error": np.asarray(g.relative_error).tolist(),
        },
    }
