"""End-to-end tests of ``mpiuq surrogate design`` and ``mpiuq surrogate fit``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from mpiuq.main import main
from mpiuq.surrogate import load_pce

PARAMS = ["--param", "lat_us=0.5:2.5", "--param", "bw_GBps=1:10", "--param", "eager_kb=4:64"]


def external_simulator(x: np.ndarray) -> np.ndarray:
    """Stand-in for a simulator run outside mpiuq: time of 1 MB and a pure latency output."""
    t_us = x[:, 0] + 1e6 / (x[:, 1] * 1e3) + 0.01 * x[:, 2]
    return np.stack([t_us, 2.0 * x[:, 0]], axis=1)


def read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    with path.open() as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def write_outputs(path: Path, y: np.ndarray) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_1MB_us", "latency_x2"])
        w.writerows(y.tolist())


def test_design_then_fit_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "design.csv"
    assert main(["surrogate", "design", *PARAMS, "--level", "3", "--csv", str(design)]) == 0
    header, x = read_csv(design)
    assert header == ["lat_us", "bw_GBps", "eager_kb"]
    assert x.shape == (69, 3)  # 3-D Clenshaw-Curtis level-3 Smolyak grid
    assert x[:, 1].min() == 1.0 and x[:, 1].max() == 10.0
    side = json.loads((tmp_path / "design.csv.json").read_text())
    assert side["parameters"][1] == {"name": "bw_GBps", "lower": 1.0, "upper": 10.0}
    assert side["level"] == 3

    write_outputs(tmp_path / "outputs.csv", external_simulator(x))
    out = tmp_path / "fit"
    argv = [
        "surrogate",
        "fit",
        "--design",
        str(design),
        "--outputs",
        str(tmp_path / "outputs.csv"),
        "--order",
        "4",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert "LOO error / std" in capsys.readouterr().out
    doc = json.loads((out / "surrogate.json").read_text())
    for key in (
        "parameters",
        "n_train",
        "n_terms",
        "order",
        "outputs",
        "loo_rel_error",
        "sobol_first",
        "sobol_total",
    ):
        assert key in doc
    assert (doc["n_train"], doc["n_terms"], doc["order"]) == (69, 35, 4)
    assert doc["outputs"] == ["t_1MB_us", "latency_x2"]
    # latency_x2 = 2 lat_us: all of its variance comes from lat_us, exactly
    assert doc["sobol_total"]["latency_x2"]["lat_us"] == pytest.approx(1.0, abs=1e-12)
    assert doc["sobol_total"]["latency_x2"]["bw_GBps"] == pytest.approx(0.0, abs=1e-12)
    assert doc["loo_rel_error"]["latency_x2"] < 1e-10
    # 1/bw dominates t_1MB_us (range 100..1000 us vs 2 us from latency)
    assert doc["sobol_total"]["t_1MB_us"]["bw_GBps"] > 0.99
    assert (out / "sensitivity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pce = load_pce(out / "surrogate.h5")
    xt = np.array([[1.0, 5.0, 10.0]])
    np.testing.assert_allclose(pce.predict(xt)[:, 1], [2.0], atol=1e-10)


def test_random_design_and_param_override(tmp_path: Path) -> None:
    design = tmp_path / "val.csv"
    argv = [
        "surrogate",
        "design",
        *PARAMS,
        "--random",
        "64",
        "--seed",
        "5",
        "--method",
        "lhs",
        "--csv",
        str(design),
    ]
    assert main(argv) == 0
    _, x = read_csv(design)
    assert x.shape == (64, 3)
    assert main([*argv[:-1], str(tmp_path / "again.csv")]) == 0
    np.testing.assert_array_equal(read_csv(tmp_path / "again.csv")[1], x)
    (tmp_path / "val.csv.json").unlink()
    write_outputs(tmp_path / "y.csv", external_simulator(x))
    fit = [
        "surrogate",
        "fit",
        "--design",
        str(design),
        "--outputs",
        str(tmp_path / "y.csv"),
        "--order",
        "2",
        "--out",
        str(tmp_path / "o"),
        "--no-plot",
    ]
    assert main(fit) == 2  # no sidecar and no --param: clear error
    assert main([*fit, *PARAMS]) == 0
    assert json.loads((tmp_path / "o" / "surrogate.json").read_text())["n_train"] == 64


def test_fit_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "d.csv"
    assert main(["surrogate", "design", *PARAMS, "--level", "2", "--csv", str(design)]) == 0
    _, x = read_csv(design)
    write_outputs(tmp_path / "short.csv", external_simulator(x)[:-1])
    base = ["surrogate", "fit", "--design", str(design), "--out", str(tmp_path / "o")]
    capsys.readouterr()
    assert main([*base, "--outputs", str(tmp_path / "short.csv"), "--order", "2"]) == 2
    assert "has 24 rows but" in capsys.readouterr().err
    write_outputs(tmp_path / "y.csv", external_simulator(x))
    assert main([*base, "--outputs", str(tmp_path / "y.csv"), "--order", "6"]) == 2
    assert "order 6 is too high for 25 points" in capsys.readouterr().err
    bad = ["surrogate", "design", "--param", "a=3:1", "--level", "1", "--csv", str(design)]
    assert main(bad) == 2
    assert "'a': expected LOW < HIGH, got LOW=3.0 HIGH=1.0" in capsys.readouterr().err
    assert main([*bad[:3], "a=1", *bad[4:]]) == 2
    assert "expected NAME=LOW:HIGH" in capsys.readouterr().err


MODEL_FILE = """
import numpy as np


def simulator(x):
    t_us = x[:, 0] + 1e6 / (x[:, 1] * 1e3) + 0.01 * x[:, 2]
    return np.stack([t_us, 2.0 * x[:, 0]], axis=1)
"""


@pytest.mark.parametrize("workers", [None, 2])
def test_run_model_file_over_design_then_resume(
    tmp_path: Path, workers: int | None, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ext_model.py").write_text(MODEL_FILE)
    design = tmp_path / "d.csv"
    assert main(["surrogate", "design", *PARAMS, "--level", "2", "--csv", str(design)]) == 0
    argv = [
        "surrogate",
        "run",
        "--model",
        f"{tmp_path / 'ext_model.py'}:simulator",
        "--design",
        str(design),
        "--store",
        str(tmp_path / "runs.h5"),
        "--outputs",
        str(tmp_path / "y.csv"),
        "--output-names",
        "t_1MB_us,latency_x2",
        "--chunk-size",
        "8",
    ]
    if workers:
        argv += ["--workers", str(workers)]
    assert main(argv) == 0
    header, y = read_csv(tmp_path / "y.csv")
    assert header == ["t_1MB_us", "latency_x2"]
    _, x = read_csv(design)
    np.testing.assert_allclose(y, external_simulator(x), rtol=1e-15)
    assert "25 computed now" in capsys.readouterr().out
    assert main([*argv, "--quiet"]) == 0  # resume of a finished store computes nothing
    assert "0 computed now, 25 from" in capsys.readouterr().out
    bad = [*argv[:3], "ext_model.py", *argv[4:]]
    assert main(bad) == 2
    assert "expected MODULE:FUNC" in capsys.readouterr().err
