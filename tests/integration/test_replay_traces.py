"""Replay of the real traces in ../shared/data/traces and the ``mpiuq replay`` command.

Skipped cleanly when the shared data are absent. Checks the engine invariants
(parts sum to each rank's end time, compute-only has no network or stack time)
and the special cases of the data set: SMPI recordings with partial ``waitall``
and any-source receives recorded as -333 (miniFE), sub-communicators and
collectives of every kind (SST/macro coverage test), partial single-rank DUMPI.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.main import main
from mpiuq.simulator.lowering.lower import UnreplayableTraceError
from mpiuq.simulator.replay.run import ReplaySetup, replay
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.ir import ANY_SOURCE, OpKind

DATA = TRACES

pytestmark = needs_traces

TRACES = [
    "ti_minife_16r/minife_16r.txt",  # -333 any-source receives, partial waitalls
    "otf2_sstmac_mpi_coverage_10r",  # 7 collective kinds, sub-communicators, I-collectives
    "dumpi_sstmac_testbgp_7r",  # comm_create, alltoall
    "ti_simgrid_nas_lu_S_4r",  # 2010 MSG dialect
    "gen_ti_lulesh_8r",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trace-cache")


@pytest.mark.parametrize("name", TRACES)
def test_real_traces_replay_with_every_model(name: str, cache: Path) -> None:
    trace = read_trace(DATA / name, cache_dir=cache)
    res = replay(trace, setup=ReplaySetup(models=("analytic", "compute-only", "packet")))
    for m in res.models:
        assert np.allclose(m.per_rank_s.sum(axis=1), m.end_s, rtol=1e-9, atol=1e-15)
        assert m.n_unmatched == 0
    co = res.model("compute-only").decomposition
    assert co.network_s == 0.0 and co.mpi_stack_s == 0.0
    # compute does not depend on the network; the network can only add time
    an = res.model("analytic")
    assert an.decomposition.compute_s == pytest.approx(co.compute_s, rel=1e-12)
    assert an.simulated_time_s >= res.model("compute-only").simulated_time_s * (1 - 1e-12)


def test_smpi_any_source_and_partial_waitall_are_replayed(cache: Path) -> None:
    trace = read_trace(DATA / "ti_minife_16r/minife_16r.txt", cache_dir=cache)
    assert np.any((trace.kind == OpKind.IRECV) & (trace.peer == ANY_SOURCE))
    a = replay(trace, setup=ReplaySetup(models=("analytic",))).as_dict()
    b = replay(trace, setup=ReplaySetup(models=("analytic",))).as_dict()
    assert a["models"]["analytic"]["per_rank"] == b["models"]["analytic"]["per_rank"]


def test_single_rank_dumpi_file_is_refused_with_the_reason(cache: Path) -> None:
    trace = read_trace(DATA / "dumpi_designforward_single_rank" / "AMG.bin", cache_dir=cache)
    with pytest.raises(UnreplayableTraceError, match="replay needs every rank's stream"):
        replay(trace)


def test_cli_writes_json_and_plot_and_prints_the_table(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(cache))
    from mpiuq.calibration.reporting.artefacts import write_summary

    summary = tmp_path / "campaign" / "summary.json"
    summary.parent.mkdir()
    write_summary(
        {
            "name": "demo",
            "parameters": {"link_bw_GBps": {"median": 5.5, "map": 5.0, "mean": 6.0}},
            "fixed": {"hop_latency_ns": 120.0},
            "map": {"unique": True, "reason": "agree"},
            "regimes": [],
        },
        summary.parent,
        fingerprint="f",
    )
    out = tmp_path / "out"
    code = main(
        [
            "replay",
            str(DATA / "gen_ti_lulesh_8r"),
            "--model",
            "analytic,compute-only",
            "--params",
            str(summary.parent),
            "--estimate",
            "mean",
            "--param",
            "memory_bw_GBps=9",
            "--compute-scale",
            "0.1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "compute-only" in text and "MPI stack s" in text
    data = json.loads((out / "replay.json").read_text())
    assert (out / "decomposition.png").stat().st_size > 1000
    assert data["params"]["link_bw_GBps"] == 6.0 and data["params"]["hop_latency_ns"] == 120.0
    assert data["params"]["memory_bw_GBps"] == 9.0
    assert data["settings"]["compute_scale"] == 0.1
    m = data["models"]["analytic"]
    assert set(m) >= {
        "ranks",
        "events",
        "simulated_time_s",
        "decomposition",
        "per_rank",
        "per_call",
        "wall_s",
    }
    assert len(m["per_rank"]) == 8
    total = sum(m["decomposition"].values())
    assert total == pytest.approx(sum(sum(r.values()) for r in m["per_rank"]), rel=1e-9)
    assert total == pytest.approx(sum(sum(c.values()) for c in m["per_call"].values()), rel=1e-9)


def test_cli_reports_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["replay", str(DATA / "gen_ti_lulesh_8r"), "--model", "ethernet"])
    assert code == 2
    assert "network model 'ethernet' is unknown" in capsys.readouterr().err
    code = main(["replay", str(DATA / "gen_ti_lulesh_8r"), "--params", str(tmp_path)])
    assert code == 2
    assert "summary.json does not exist" in capsys.readouterr().err
