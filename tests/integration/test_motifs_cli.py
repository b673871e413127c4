"""``mpiuq trace synth``: writes a loadable HDF5 trace with the requested sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.main import main
from mpiuq.simulator.trace import OpKind, load_trace_h5


def test_synth_writes_the_requested_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "halo.h5"
    argv = [
        "trace",
        "synth",
        "halo3d",
        "--ranks",
        "27",
        "--iterations",
        "4",
        "--bytes",
        "512",
        "--compute-us",
        "25",
        "--neighbours",
        "6",
        "--allreduce-every",
        "2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert "27 ranks, 4 iterations" in capsys.readouterr().out
    trace = load_trace_h5(out)
    trace.validate()
    assert trace.n_ranks == 27 and trace.format == "synthetic"
    isend = trace.kind == OpKind.ISEND
    assert int(isend.sum()) == 27 * 4 * 6
    assert np.all(trace.bytes_send[isend] == 512)
    np.testing.assert_allclose(trace.seconds[trace.kind == OpKind.COMPUTE], 25e-6, rtol=1e-12)
    assert int((trace.kind == OpKind.ALLREDUCE).sum()) == 27 * 2


def test_synth_random_is_reproducible(tmp_path: Path) -> None:
    paths = [tmp_path / f"r{i}.h5" for i in range(2)]
    for p in paths:
        assert (
            main(
                [
                    "trace",
                    "synth",
                    "random",
                    "--ranks",
                    "10",
                    "--iterations",
                    "3",
                    "--seed",
                    "5",
                    "--out",
                    str(p),
                ]
            )
            == 0
        )
    a, b = (load_trace_h5(p) for p in paths)
    np.testing.assert_array_equal(a.peer, b.peer)


def test_synth_bad_value_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "trace",
            "synth",
            "sweep",
            "--ranks",
            "0",
            "--iterations",
            "2",
            "--out",
            str(tmp_path / "s.h5"),
        ]
    )
    assert rc == 2
    assert "n_ranks=0 is invalid" in capsys.readouterr().err
    assert not (tmp_path / "s.h5").exists()
