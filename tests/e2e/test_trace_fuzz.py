"""Seeded, bounded fuzzing of every trace reader (issue 14): a few hundred damaged
traces per reader give only the documented errors (TraceFormatError,
UnsupportedTraceError) or a trace whose values are all within the limits; no crash,
hang or escaped exception. Thousands of cases: experiments/fuzz/fuzz_traces.py."""

from __future__ import annotations

import pytest
from trace_fuzzing import DATA, fuzz

CASES = {"ti": 300, "h5": 200, "dumpi": 250, "otf2": 250}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_damaged_traces_give_typed_errors_or_in_range_traces(kind: str) -> None:
    if kind in ("dumpi", "otf2") and not DATA.is_dir():
        pytest.skip("shared trace data absent")
    report = fuzz(kind, CASES[kind], seed=20261123, timeout_s=30.0, quick=True)
    assert report.cases == CASES[kind]
    assert report.failures() == 0, report.examples
    assert report.counts["typed"] > 0  # the damage is detected, not just ignored
