"""``$MPIUQ_SIMULATOR_THREADS``: the threads of in-process simulator batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpiuq.calibration.pipeline.campaign_stages import threads_per_call
from mpiuq.simulator.errors import SimulatorError
from mpiuq.simulator.runtime.watch import (
    MAX_THREADS,
    THREADS_ENV,
    simulator_threads,
    usable_cores,
)
from mpiuq.surrogate.executors import InProcessExecutor


def test_unset_or_empty_means_every_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert simulator_threads() == usable_cores()
    monkeypatch.setenv(THREADS_ENV, " ")
    assert simulator_threads() == usable_cores()


@pytest.mark.parametrize("raw, expected", [("1", 1), ("3", 3), (" 2 ", 2), ("1024", 1024)])
def test_a_whole_number_sets_the_threads_of_in_process_campaigns(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: int
) -> None:
    monkeypatch.setenv(THREADS_ENV, raw)
    assert simulator_threads() == expected
    assert threads_per_call(None) == expected
    assert threads_per_call(InProcessExecutor()) == expected


@pytest.mark.parametrize("raw", ["0", "-1", "two", "2.5", "1e3", str(MAX_THREADS + 1), "nan"])
def test_anything_else_is_a_typed_error_naming_the_variable_and_value(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(THREADS_ENV, raw)
    with pytest.raises(SimulatorError, match=rf"{THREADS_ENV} = '{raw}' is invalid: expected"):
        simulator_threads()


def test_the_campaign_command_reports_a_bad_value_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from mpiuq.main import main

    monkeypatch.setenv(THREADS_ENV, "lots")
    stock = Path(__file__).resolve().parents[2] / "experiments" / "stampede-ib.toml"
    code = main(["campaign", "run", str(stock), "--out", str(tmp_path), "--quiet", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{THREADS_ENV} = 'lots' is invalid" in err and "Traceback" not in err
