"""Every shared DUMPI, OTF2 and TI trace reads bit-identically to the readers before the
compiled TI path and the hardening (digests recorded in ``data/trace_digests.json`` by
``experiments/readers/trace_digests.py --write`` with those readers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_data import TRACES

from mpiuq.simulator.trace import read_trace

DATA = TRACES
EXPECTED = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "trace_digests.json").read_text()
)


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/traces is absent")
@pytest.mark.parametrize(
    "row", EXPECTED, ids=[f"{r['path']}{r['options'] or ''}" for r in EXPECTED]
)
def test_shared_trace_reads_bit_identically(row: dict) -> None:
    trace = read_trace(DATA / row["path"], use_cache=False, **row["options"])
    assert dict(trace.unsupported) == row["unsupported"]
    assert trace.n_ops == row["n_ops"]
    assert trace.digest(notes=False) == row["columns_digest"]  # every column, bit for bit
    assert list(trace.notes) == row["notes"]
