"""``mpiuq simulate`` end to end: table, JSON, synthetic CSV, errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpiuq.main import main


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--benchmark", "pingpong", "--sizes", "1,4097,70000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["benchmark"] == "pingpong"
    assert doc["params"]["link_bw_GBps"] == 12.47
    assert [r["protocol"] for r in doc["results"]] == ["small", "eager", "rendezvous"]
    for r in doc["results"]:
        assert set(r["decomposition"]) == {"compute_s", "network_s", "mpi_stack_s", "sync_s"}
        assert r["throughput_MBps"] == pytest.approx(r["size_bytes"] / r["time_us"])
        # rank 0 (the timer) spends exactly one round trip per repetition
        rank0, rank1 = (sum(d.values()) for d in r["per_rank"])
        assert rank0 == pytest.approx(2 * r["time_us"] * 1e-6, rel=1e-9)
        assert sum(r["decomposition"].values()) == pytest.approx(rank0 + rank1, rel=1e-12)


def test_table_output_with_overrides(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "p.toml"
    config.write_text(
        "[simulator]\nbenchmark = 'stream'\nwindow = 8\n[simulator.fixed]\nlink_bw_GBps = 4.0\n"
    )
    assert (
        main(
            [
                "simulate",
                "--config",
                str(config),
                "--sizes",
                "1048576",
                "--param",
                "injection_bw_GBps=9",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("stream: injection_bw_GBps=9.0, link_bw_GBps=4.0")
    assert "rendezvous" in out


def test_synthetic_csv_has_requested_noise(tmp_path: Path) -> None:
    out = tmp_path / "synthetic.csv"
    args = [
        "simulate",
        "--sizes",
        "1,1048576",
        "--replicas",
        "400",
        "--noise-cv",
        "0.05",
        "--seed",
        "3",
    ]
    assert main([*args, "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 800
    assert rows[0].keys() == {"run", "msg_size_bytes", "value", "unit", "benchmark"}
    assert {r["benchmark"] for r in rows} == {"pingpong_half_rtt"}
    values = np.array([float(r["value"]) for r in rows if r["msg_size_bytes"] == "1048576"])
    # mean-preserving log-normal noise: mean within 4 standard errors, CV within 15 %
    truth = 122.65415557
    assert abs(values.mean() - truth) < 4 * 0.05 * truth / np.sqrt(400)
    assert values.std(ddof=1) / values.mean() == pytest.approx(0.05, rel=0.15)
    # the same seed gives the same file
    again = tmp_path / "again.csv"
    main([*args, "--csv", str(again)])
    assert again.read_text() == out.read_text()


def test_stream_csv_is_in_MBps(tmp_path: Path) -> None:
    out = tmp_path / "bw.csv"
    main(
        [
            "simulate",
            "--benchmark",
            "stream",
            "--sizes",
            "65536",
            "--replicas",
            "2",
            "--csv",
            str(out),
        ]
    )
    rows = list(csv.DictReader(out.open()))
    assert {(r["unit"], r["benchmark"]) for r in rows} == {("MB/s", "stream_bw")}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "0"], "message size 0 is invalid"),
        (["--sizes", "ten"], "message size 'ten' is invalid"),
        (["--sizes", "8", "--param", "link_bw_GBps=-2"], "link_bw_GBps=-2.0 is invalid"),
        (["--sizes", "8", "--param", "bogus=1"], "bogus=1.0 is invalid"),
        (["--sizes", "8", "--param", "small_max_bytes=99999"], "small_max_bytes=99999"),
        (["--sizes", "8", "--replicas", "3"], "--replicas and --csv go together"),
    ],
)
def test_errors_are_reported_without_traceback(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", *argv]) == 2
    assert message in capsys.readouterr().err


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mpiuq", "simulate", "--sizes", "8", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout)["results"][0]["size_bytes"] == 8
