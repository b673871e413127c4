"""Where the tests find their input data.

``../shared/data`` (next to the checkout) holds the real traces and benchmark sets;
tests that need it skip cleanly when it is absent. The Stampede ping-pong data the
main campaign uses is committed under ``experiments/data`` (with its provenance), so
tests that only need it always run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
TRACES = SHARED / "traces"
BENCHMARKS = SHARED / "benchmarks"
#: The committed copy of ../shared/data/benchmarks/simgrid_stampede_ib_mvapich2.
STAMPEDE_DIR = ROOT / "experiments" / "data" / "simgrid_stampede_ib_mvapich2"

needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason="../shared/data/traces is absent")
needs_benchmarks = pytest.mark.skipif(
    not BENCHMARKS.is_dir(), reason="../shared/data/benchmarks is absent"
)
