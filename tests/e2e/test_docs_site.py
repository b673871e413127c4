"""The documentation site builds with warnings as errors and its generated references
cover the command line, the campaign keys and the API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    for module in ("sphinx", "myst_parser", "pydata_sphinx_theme"):
        pytest.importorskip(module)
    out = tmp_path / "html"
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    cli = (out / "reference" / "cli.html").read_text()
    # the generated CLI reference has every command and action, with their options
    for words in ("mpiuq campaign run", "mpiuq replay", "mpiuq whatif", "mpiuq trace synth",
                  "mpiuq surrogate fit", "--scenario", "--params"):  # fmt: skip
        assert words in cli, words
    keys = (out / "reference" / "campaign-keys.html").read_text()
    assert "sizes_per_protocol" in keys and "max_direct_seconds" in keys
    api = (out / "reference" / "api" / "simulator.html").read_text()
    assert "mpiuq.simulator.parameters.SimParams" in api
