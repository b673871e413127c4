"""Design runs: identical results on every executor, kill-and-resume, fingerprints."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

from mpiuq.surrogate import (
    DaskExecutor,
    DesignMismatchError,
    DesignRunError,
    ExecutorConfigError,
    IncompleteDesignError,
    InProcessExecutor,
    ParameterBox,
    ProcessExecutor,
    design_status,
    evaluate_design,
    load_design_outputs,
    make_executor,
    map_ordered,
    random_design,
    run_design,
)

# Dask worker processes cannot import this test module by name: ship it by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

BOX = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (-2.0, 2.0), "c": (5.0, 6.0)})
NAMES = ("sum", "prod", "sin")


def model(x: np.ndarray) -> np.ndarray:
    """A batched pointwise model with three outputs."""
    return np.stack([x.sum(axis=1), x.prod(axis=1), np.sin(x[:, 0] * x[:, 1])], axis=1)


class LoggingModel:
    """Pointwise model that appends the number of points of each call to a log file."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with self.log.open("a") as f:
            f.write(f"{x.shape[0]}\n")
        return model(x)


def logged_points(log: Path) -> int:
    return sum(int(s) for s in log.read_text().split()) if log.exists() else 0


def test_in_process_run_reports_progress_and_stores_everything(tmp_path: Path) -> None:
    design = random_design(BOX, 300, 0)
    reports = list(run_design(model, design, tmp_path / "r.h5", chunk_size=64, output_names=NAMES))
    assert [r.n_done for r in reports] == [0, 64, 128, 192, 256, 300]
    assert reports[0].eta_s == float("inf") and reports[-1].eta_s == 0.0
    assert reports[-1].finished and reports[-1].n_computed == 300
    assert all(r.rate_per_s > 0 for r in reports[1:])
    x, y, names = load_design_outputs(tmp_path / "r.h5")
    np.testing.assert_array_equal(x, design)
    np.testing.assert_array_equal(y, model(design))
    assert names == NAMES


def test_dask_local_cluster_on_loopback_matches_in_process(tmp_path: Path) -> None:
    design = random_design(BOX, 500, 1)
    expected = evaluate_design(model, design, tmp_path / "ref.h5", chunk_size=37)
    with DaskExecutor(workers=2, processes=False) as ex:  # threads, but TCP on loopback
        assert ex.scheduler_address.startswith("tcp://127.0.0.1:")
        got = evaluate_design(model, design, tmp_path / "dask.h5", ex, chunk_size=37)
        # a second client connecting by address, as to a remote cluster
        with make_executor(None, ex.scheduler_address) as remote:
            assert isinstance(remote, DaskExecutor)
            again = evaluate_design(model, design, tmp_path / "remote.h5", remote, chunk_size=64)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(again, expected)


def test_process_pool_matches_in_process(tmp_path: Path) -> None:
    design = random_design(BOX, 200, 2)
    with ProcessExecutor(2) as ex:
        got = evaluate_design(model, design, tmp_path / "p.h5", ex, chunk_size=16)
        assert map_ordered(ex, abs, [-3, 2, -1]) == [3, 2, 1]
    np.testing.assert_array_equal(got, model(design))


def test_interrupted_generator_resumes_with_only_missing_points(tmp_path: Path) -> None:
    design = random_design(BOX, 250, 3)
    store, log = tmp_path / "s.h5", tmp_path / "calls.log"
    gen = run_design(LoggingModel(log), design, store, chunk_size=50, model_id="m1")
    for report in gen:
        if report.n_done >= 100:
            break
    gen.close()
    assert design_status(store) == (100, 250)
    with pytest.raises(IncompleteDesignError, match="150 of 250 design points are not done"):
        load_design_outputs(store)
    log.unlink()
    out = evaluate_design(LoggingModel(log), design, store, chunk_size=50, model_id="m1")
    assert logged_points(log) == 150
    np.testing.assert_array_equal(out, model(design))


def test_killed_process_loses_nothing_and_resume_computes_the_rest(tmp_path: Path) -> None:
    design = random_design(BOX, 120, 4)
    np.save(tmp_path / "design.npy", design)
    script = textwrap.dedent(
        """
        import os, sys
        import numpy as np
        from mpiuq.surrogate import run_design

        def model(x):
            return np.stack([x.sum(axis=1), x.prod(axis=1), np.sin(x[:, 0] * x[:, 1])], axis=1)

        class DiesAfter:
            def __init__(self, k):
                self.k, self.calls = k, 0
            def __call__(self, x):
                if self.calls == self.k:
                    os._exit(17)  # hard kill: no cleanup, no flush
                self.calls += 1
                return model(x)

        design = np.load(sys.argv[1])
        for _ in run_design(DiesAfter(3), design, sys.argv[2], chunk_size=20, model_id="m1"):
            pass
        """
    )
    store = tmp_path / "killed.h5"
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "design.npy"), str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 17, proc.stderr
    assert design_status(store) == (60, 120)
    log = tmp_path / "resume.log"
    out = evaluate_design(LoggingModel(log), design, store, chunk_size=20, model_id="m1")
    assert logged_points(log) == 60
    np.testing.assert_array_equal(out, model(design))


def test_restart_against_another_design_or_model_errors(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    design = random_design(BOX, 40, 5)
    evaluate_design(model, design, store, model_id="m1")
    with pytest.raises(DesignMismatchError, match=r"another design or model.*\(40, 3\)"):
        list(run_design(model, random_design(BOX, 40, 6), store, model_id="m1"))
    with pytest.raises(DesignMismatchError, match=r"model 'm1'.*model 'm2'"):
        list(run_design(model, design, store, model_id="m2"))
    with pytest.raises(DesignMismatchError, match="output names"):
        list(run_design(model, design, store, model_id="m1", output_names=("p", "q", "r")))
    # a finished run restarted with the same design computes nothing
    reports = list(run_design(model, design, store, model_id="m1"))
    assert len(reports) == 1 and reports[0].finished and reports[0].n_computed == 0


def bad_shape_model(x: np.ndarray) -> np.ndarray:
    return np.zeros((x.shape[0] + 1, 2))


def failing_model(x: np.ndarray) -> np.ndarray:
    raise FloatingPointError("simulator diverged")


def test_model_errors_are_reported(tmp_path: Path) -> None:
    design = random_design(BOX, 10, 0)
    with pytest.raises(DesignRunError, match=r"shape \(11, 2\) for a chunk of 10 points"):
        evaluate_design(bad_shape_model, design, tmp_path / "a.h5")
    with pytest.raises(DesignRunError, match="simulator diverged"):
        evaluate_design(failing_model, design, tmp_path / "b.h5")
    with pytest.raises(DesignRunError, match="3 outputs but 2 output names"):
        evaluate_design(model, design, tmp_path / "c.h5", output_names=("x", "y"))


def test_make_executor_choices_and_errors() -> None:
    assert isinstance(make_executor(None, None), InProcessExecutor)
    assert isinstance(make_executor(1, None), InProcessExecutor)
    with make_executor(2, None) as ex:
        assert isinstance(ex, ProcessExecutor)
    with pytest.raises(ExecutorConfigError, match="workers must be an integer >= 1, got 0"):
        make_executor(0, None)
    with pytest.raises(ExecutorConfigError, match="unknown scheduler 'yarn'"):
        make_executor(2, "yarn")
    with pytest.raises(ExecutorConfigError, match=r"tcp://HOST:PORT, got 'localhost'"):
        DaskExecutor(address="localhost")
