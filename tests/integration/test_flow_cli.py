"""The flow model, platform files and ``--like simgrid`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpiuq.main import main
from mpiuq.simulator.replay.scenarios import parse_scenario

REFS = Path(__file__).resolve().parents[2] / "experiments" / "simgrid_refs"
PLATFORM = REFS / "platforms" / "cluster_backbone.xml"
HOSTFILE = REFS / "platforms" / "hostfile"

TI = "\n".join(
    [
        *(f"{r} init" for r in range(4)),
        "0 send 1 0 70000",
        "1 recv 0 0 70000",
        "2 send 3 0 2000",
        "3 recv 2 0 2000",
        *(f"{r} compute 1e6" for r in range(4)),
        *(f"{r} allreduce 40 0" for r in range(4)),
        *(f"{r} alltoall 3000 3000" for r in range(4)),
        *(f"{r} finalize" for r in range(4)),
    ]
)


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.txt"
    path.write_text(TI + "\n")
    return path


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    capsys.readouterr()
    assert main([*argv, "--json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_flow_model_beside_the_others(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["replay", str(trace), "--model", "analytic,flow,compute-only"], capsys)
    assert set(doc["models"]) == {"analytic", "flow", "compute-only"}
    # no contention in this trace's messages: the flow model takes the analytic model's time
    a = doc["models"]["analytic"]["simulated_time_s"]
    assert doc["models"]["flow"]["simulated_time_s"] == pytest.approx(a, rel=0.05)


def test_platform_like_simgrid(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", str(trace), "--platform", str(PLATFORM), "--hostfile", str(HOSTFILE)]
    doc = run_json([*argv, "--like", "simgrid"], capsys)
    assert list(doc["models"]) == ["flow"]
    settings = doc["trace"] | doc["settings"]
    assert settings["sharing"] == "smpi" and settings["free_endpoints"] is True
    assert doc["settings"]["platform"] == str(PLATFORM)
    assert doc["params"]["link_bw_GBps"] == 12.5 and doc["params"]["hop_latency_ns"] == 1000.0
    assert doc["trace"]["algorithms"]["alltoall"] == ["ompi"]
    # the platform's 1 Gflop/s: rank 0 computes 1e6 flops in 1 ms
    assert doc["models"]["flow"]["decomposition"]["compute_s"] == pytest.approx(4e-3)
    plain = run_json([*argv, "--model", "flow"], capsys)
    assert plain["settings"]["sharing"] == "maxmin"


def test_zone_spec_topology(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = "cluster:hosts=8,backbone=2"
    doc = run_json(["replay", str(trace), "--model", "flow", "--topology", spec], capsys)
    assert doc["settings"]["topology"] == spec
    assert doc["models"]["flow"]["simulated_time_s"] > 0


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--model", "packet", "--topology", "torus:dims=2x2"], "replayed with the flow model"),
        (["--platform", str(PLATFORM), "--model", "packet"], "do not run on a SimGrid platform"),
        (["--hostfile", str(HOSTFILE)], "give the platform"),
        (["--like", "simgrid", "--model", "analytic"], "--like simgrid replays on the flow model"),
        (["--platform", str(PLATFORM), "--topology", "fattree"], "both given"),
        (["--platform", str(REFS / "missing.xml")], "cannot be read"),
        (["--platform", str(PLATFORM), "--param", "link_bw_GBps=6.25"], "set by the platform"),
    ],
)
def test_refused_combinations(
    trace: Path, extra: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(trace), *extra, "-q"]) == 2
    assert match in capsys.readouterr().err


def test_whatif_flow_model_scenario(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_scenario("flow: model=flow").settings == (("model", "flow"),)
    capsys.readouterr()
    code = main(
        ["whatif", str(trace), "--model", "packet", "--topology", "crossbar:nodes=4",
         "--scenario", "flow: model=flow", "--json", "-q"]
    )  # fmt: skip
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarios"]["flow"]["model"] == "flow"
