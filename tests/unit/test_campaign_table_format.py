"""``campaign run``/``show`` print the model comparison even when summary.json holds null
for a number (non-finite values are stored as null: e.g. the Pareto k-hat of a variant whose
importance weights collapsed onto one draw)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mpiuq.commands.campaign import format_table


def test_null_numbers_of_the_model_comparison_print_as_na(committed_results: Path) -> None:
    path = committed_results / "tcp-taurus" / "summary.json"  # as the last commit holds it
    if not path.is_file():
        pytest.skip("results/tcp-taurus/summary.json is not in the last commit")
    summary = json.loads(path.read_text())
    text = format_table(summary)
    assert "n/a" not in text
    broken = copy.deepcopy(summary)
    variant = broken["model_comparison"]["table"][-1]["variant"]
    broken["model_comparison"]["variants"][variant]["max_pareto_k"] = None
    broken["model_comparison"]["table"][-1]["p_loo"] = None
    lines = [line for line in format_table(broken).splitlines() if line.startswith(f"  {variant}")]
    assert len(lines) == 1 and "max k n/a" in lines[0] and "p_loo n/a" in lines[0]
