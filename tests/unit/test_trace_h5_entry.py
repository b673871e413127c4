"""``read_trace`` opens mpiuq's own HDF5 traces (e.g. from ``mpiuq trace synth``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.trace import read_trace, save_trace
from mpiuq.simulator.trace.read import detect_format


def test_h5_trace_round_trips_through_read_trace(tmp_path: Path) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2))
    path = tmp_path / "halo.h5"
    save_trace(trace, path)
    assert detect_format(path) == "hdf5"
    again = read_trace(path, cache_dir=tmp_path / "cache")
    assert again.n_ranks == 8
    np.testing.assert_array_equal(again.kind, trace.kind)
    np.testing.assert_array_equal(again.request, trace.request)
    assert not (tmp_path / "cache").exists()  # already parsed: nothing to cache
