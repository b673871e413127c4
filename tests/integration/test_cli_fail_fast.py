"""Results go out of the tree by default; bad arguments are refused before anything runs.

(How fast is shown by ``experiments/perf/perf_fail_fast.py``; no test asserts a time.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpiuq.main import main
from mpiuq.reports.result_output import results_folder
from mpiuq.runtime.exit_codes import EXIT_BAD_INPUT

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "experiments" / "stampede-ib.toml"


def test_results_go_under_mpiuq_results_or_the_working_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MPIUQ_RESULTS", raising=False)
    assert results_folder() == Path("mpiuq-results")
    monkeypatch.setenv("MPIUQ_RESULTS", "/somewhere/else")
    assert results_folder() == Path("/somewhere/else")


def _run_quietly(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # a usage error
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def test_an_out_folder_that_is_a_file_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "a-file"
    existing.write_text("x")
    for argv in (
        ["campaign", "run", str(CAMPAIGN), "--out", str(existing)],
        ["replay", str(tmp_path / "t.txt"), "--out", str(existing)],
    ):
        code, err = _run_quietly(argv, capsys)
        assert code == EXIT_BAD_INPUT
        assert f"'{existing}' is an existing file: expected a folder" in err
        assert err.count("\n") == 1


def _campaign_with_data(tmp_path: Path, csv_text: str) -> Path:
    data = tmp_path / "data.csv"
    data.write_text(csv_text)
    lines = [
        f'path = "{data}"' if ln.strip().startswith("path") and ".csv" in ln else ln
        for ln in CAMPAIGN.read_text().splitlines()
    ]
    toml = tmp_path / "c.toml"
    toml.write_text("\n".join(lines) + "\n")
    return toml


def _main_in_a_new_process(argv: list[str]) -> tuple[int, bool, str]:
    """``main(argv)`` in a fresh interpreter: (exit code, whether numba was imported, stderr)."""
    code = (
        "import sys, json\n"
        "from mpiuq.main import main\n"
        f"status = main({argv!r})\n"
        "print(json.dumps([status, 'numba' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    status, numba_loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    return status, numba_loaded, proc.stderr


def test_a_malformed_data_file_is_refused_before_the_simulator_loads(tmp_path: Path) -> None:
    toml = _campaign_with_data(
        tmp_path, "run,msg_size_bytes,value,unit,benchmark\n1,8,abc,us,pingpong_half_rtt\n"
    )
    out = tmp_path / "o"
    status, numba_loaded, err = _main_in_a_new_process(
        ["campaign", "run", str(toml), "--out", str(out)]
    )
    assert status == EXIT_BAD_INPUT and not numba_loaded
    assert "data.csv" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(
    ("spec", "said"),
    [("dragonfly:groups=0", "groups"), ("sgfattree:down=0x2,up=1x2", "down=[0, 2]")],
)
def test_a_topology_with_a_bad_size_is_refused_before_the_simulator_loads(
    tmp_path: Path, spec: str, said: str
) -> None:
    trace = tmp_path / "t.txt"
    trace.write_text("0 init\n1 init\n0 finalize\n1 finalize\n")
    status, numba_loaded, err = _main_in_a_new_process(["replay", str(trace), "--topology", spec])
    assert status == EXIT_BAD_INPUT and not numba_loaded
    assert said in err and err.count("\n") == 1
