"""Every ``mpiuq`` failure is one line on stderr and an exit code (2 bad input, 1 failed run,
130 interrupted); ``--debug`` shows the traceback instead."""

from __future__ import annotations

import argparse
import errno
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from shared_data import committed_copy

from mpiuq.calibration.errors import CampaignError, DataError, SamplerError
from mpiuq.commands import campaign as campaign_cmd
from mpiuq.main import main
from mpiuq.runtime.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    describe,
    exit_code,
)
from mpiuq.simulator.errors import DeadlockError, ParameterError
from mpiuq.surrogate.errors import (
    BudgetError,
    DesignMismatchError,
    DesignRunError,
    StoreError,
    StoreWriteError,
    SurrogateInputError,
)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (CampaignError("seed", -1, "an integer >= 0"), EXIT_BAD_INPUT),
        (DataError("x.csv:3: bad row"), EXIT_BAD_INPUT),
        (ParameterError("link_bw_GBps", -1, "a positive number"), EXIT_BAD_INPUT),
        (SurrogateInputError("bad design"), EXIT_BAD_INPUT),
        (BudgetError("too big", "memory", 2.0, 1.0), EXIT_BAD_INPUT),
        (DesignMismatchError("another design"), EXIT_BAD_INPUT),
        (StoreError("unreadable store"), EXIT_BAD_INPUT),
        (DesignRunError("model evaluation failed"), EXIT_FAILED),
        (StoreWriteError("disk full"), EXIT_FAILED),
        (SamplerError("cannot sample"), EXIT_FAILED),
        (DeadlockError([(0, 3, "recv")], 1.0), EXIT_FAILED),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "c.toml"), EXIT_BAD_INPUT),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "data"), EXIT_BAD_INPUT),
        (PermissionError(errno.EACCES, "Permission denied", "out"), EXIT_BAD_INPUT),
        (OSError(errno.ENOSPC, "No space left on device", "posterior.nc"), EXIT_FAILED),
        (OSError(errno.EIO, "Input/output error", "design.h5"), EXIT_FAILED),
        (MemoryError(), EXIT_FAILED),
        (KeyboardInterrupt(), EXIT_INTERRUPTED),
        (TypeError("unsupported operand"), EXIT_FAILED),
    ],
)
def test_one_table_maps_errors_to_exit_codes(exc: BaseException, code: int) -> None:
    assert exit_code(exc) == code
    assert "\n" not in describe(exc)


def test_descriptions_name_the_file_and_flag_internal_errors() -> None:
    disk = OSError(errno.ENOSPC, "No space left on device", "results/x/posterior.nc")
    assert describe(disk) == "results/x/posterior.nc: No space left on device"
    bug = describe(KeyError("seed"))
    assert bug.startswith("internal error: KeyError") and "--debug" in bug
    assert describe(DataError("a\nb")) == "a b"  # always one line


def _handler_raising(exc: BaseException) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("exc", "code", "text"),
    [
        (KeyboardInterrupt(), 130, "mpiuq campaign show: interrupted\n"),
        (RuntimeError("solver diverged"), 1, "mpiuq campaign show: error: solver diverged\n"),
        (ZeroDivisionError("division by zero"), 1, "internal error: ZeroDivisionError"),
    ],
)
def test_main_prints_one_line_and_returns_the_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
    code: int,
    text: str,
) -> None:
    monkeypatch.setattr(campaign_cmd, "show", _handler_raising(exc))
    assert main(["campaign", "show", "anything"]) == code
    err = capsys.readouterr().err
    assert text in err and err.count("\n") == 1 and "Traceback" not in err


def test_debug_flag_re_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(campaign_cmd, "show", _handler_raising(ZeroDivisionError("boom")))
    with pytest.raises(ZeroDivisionError, match="boom"):
        main(["--debug", "campaign", "show", "anything"])


def _show(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["campaign", "show", str(folder)])
    return code, capsys.readouterr().err


def test_campaign_show_on_broken_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _show(tmp_path / "nowhere", capsys)
    assert code == 2 and "does not exist" in err
    folder = tmp_path / "r"
    folder.mkdir()
    code, err = _show(folder, capsys)
    assert code == 2 and "has no summary.json: its campaign has not finished" in err
    (folder / "summary.json").write_text("{not json")
    code, err = _show(folder, capsys)
    assert code == 2 and "summary.json is not a campaign summary (Expecting" in err
    (folder / "summary.json").write_bytes(b"\xff\xfe{}")
    code, err = _show(folder, capsys)
    assert code == 2 and "codec can't decode" in err
    (folder / "summary.json").write_text("[1, 2]")
    code, err = _show(folder, capsys)
    assert code == 2 and "(a JSON list)" in err
    committed = committed_copy("results/stampede-ib", tmp_path / "committed") / "summary.json"
    doc = json.loads(committed.read_text())
    del doc["seed"]
    (folder / "summary.json").write_text(json.dumps(doc))
    code, err = _show(folder, capsys)
    assert code == 2 and "not a complete campaign summary (missing key 'seed')" in err
    doc = json.loads(committed.read_text())
    doc["parameters"]["link_bw_GBps"]["hdi90"] = None
    (folder / "summary.json").write_text(json.dumps(doc))
    code, err = _show(folder, capsys)
    assert code == 2 and "a value of the wrong type or shape" in err
    assert err.count("\n") == 1


def test_campaign_show_of_the_committed_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = committed_copy("results/stampede-ib", tmp_path)
    assert main(["campaign", "show", str(folder)]) == 0
    assert "converged: yes" in capsys.readouterr().out


def test_replay_params_on_a_non_json_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "params.txt"
    bad.write_text("link_bw_GBps = 3\n")
    trace = tmp_path / "t.h5"
    code = main(["replay", str(trace), "--params", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and f"{bad} is not a campaign summary: expected JSON" in err


def test_a_model_that_raises_mid_run_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "fails.py"
    model.write_text(
        "import numpy as np\n"
        "calls = []\n"
        "def f(x):\n"
        "    calls.append(1)\n"
        "    if len(calls) > 1:\n"
        "        raise FloatingPointError('diverged at call 2')\n"
        "    return x.sum(axis=1)\n"
    )
    assert (
        main(
            [
                "surrogate",
                "design",
                "--param",
                "a=0:1",
                "--random",
                "20",
                "--csv",
                str(tmp_path / "d.csv"),
            ]
        )
        == 0
    )
    argv = ["surrogate", "run", "--model", f"{model}:f", "--design", str(tmp_path / "d.csv")]
    argv += ["--store", str(tmp_path / "s.h5"), "--outputs", str(tmp_path / "o.csv")]
    code = main([*argv, "--chunk-size", "5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "model evaluation failed: FloatingPointError: diverged at call 2" in err


def test_no_traceback_reaches_the_user_of_the_real_command(tmp_path: Path) -> None:
    """The installed entry point, end to end: a bad campaign file gives one line and exit 2."""
    bad = tmp_path / "c.toml"
    bad.write_bytes(b'name = "x"\nseed = \xff\n')
    proc = subprocess.run(
        [sys.executable, "-m", "mpiuq", "campaign", "run", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "expected UTF-8 text" in proc.stderr and str(bad) in proc.stderr
