"""The adapters that make any simulator a batched model (mpiuq.surrogate.external_model):
a Python callable or a command on CSV files; every failure is a SimulatorRunError naming
the parameter set; a failed run never loses the others (design runs with keep_going)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from mpiuq.surrogate.design.design_run import design_status, load_design_outputs, run_design
from mpiuq.surrogate.errors import SimulatorRunError, SurrogateInputError
from mpiuq.surrogate.external_model import CommandModel, PythonModel, import_callable

NAMES = ("lat_us", "bw_GBps")
SIZES = (1, 1000, 100000)

MODULE = """
import numpy as np
SIZES = np.array([1.0, 1000.0, 100000.0])
def simulate(x):
    return x[:, :1] + SIZES / (1e3 * x[:, 1:2])
def raises(x):
    if np.any(x[:, 0] > 4.0):
        raise RuntimeError("solver diverged")
    return simulate(x)
def wrong_shape(x):
    return simulate(x)[:, :2]
def nan_out(x):
    y = simulate(x)
    y[x[:, 0] > 4.0, 1] = np.nan
    return y
def negative(x):
    return simulate(x) - 3.0
"""

COMMAND = """
import csv, sys, time
inp, out = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "ok"
rows = list(csv.DictReader(open(inp)))
if mode == "fail":
    print("cannot open platform.xml", file=sys.stderr); sys.exit(3)
if mode == "sleep":
    time.sleep(30)
if mode == "nofile":
    sys.exit(0)
with open(out, "w") as f:
    f.write("1,1000,100000\\n" if mode != "header" else "1,100000,1000\\n")
    for r in rows:
        lat, bw = float(r["lat_us"]), float(r["bw_GBps"])
        f.write(",".join(repr(lat + s / (1e3 * bw)) for s in (1, 1000, 100000)) + "\\n")
"""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: a process imports one ``toy_ext``."""
    d = tmp_path_factory.mktemp("toy_model")
    (d / "toy_ext.py").write_text(MODULE)
    (d / "toy_cmd.py").write_text(COMMAND)
    return d


def python_model(folder: Path, fn: str = "simulate") -> PythonModel:
    return PythonModel(f"toy_ext:{fn}", NAMES, 3, tuple(map(str, SIZES)), (str(folder),))


def command_model(folder: Path, mode: str = "ok", timeout_s: float = 60.0) -> CommandModel:
    return CommandModel(
        (sys.executable, "toy_cmd.py", "{input}", "{output}", mode),
        NAMES,
        tuple(map(str, SIZES)),
        str(folder),
        timeout_s,
    )


X = np.array([[1.0, 5.0], [2.0, 2.0], [4.5, 3.0]])
# reference: t = lat + size / (1e3 bw), the toy's closed form
EXPECTED = X[:, :1] + np.array(SIZES, dtype=float) / (1e3 * X[:, 1:2])


def test_python_and_command_models_agree_with_the_closed_form(model_dir: Path) -> None:
    np.testing.assert_allclose(python_model(model_dir)(X), EXPECTED, rtol=1e-15)
    np.testing.assert_allclose(command_model(model_dir)(X), EXPECTED, rtol=1e-15)
    # picklable for worker processes, identity follows the source
    m = pickle.loads(pickle.dumps(python_model(model_dir)))
    assert m.model_id.startswith("python:toy_ext:simulate:")
    before = m.model_id
    (model_dir / "toy_ext.py").write_text(MODULE + "\n# edited\n")
    assert python_model(model_dir).model_id != before


def test_a_callable_that_raises_names_the_parameter_set(model_dir: Path) -> None:
    with pytest.raises(SimulatorRunError, match=r"raised RuntimeError: solver diverged") as err:
        python_model(model_dir, "raises")(X[2:])
    assert "lat_us=4.5, bw_GBps=3" in str(err.value)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        ("wrong_shape", r"returned shape \(3, 2\) for parameter sets .*: expected \(3, 3\)"),
        ("nan_out", r"returned nan \(not finite\) at 1000 for parameter set \{lat_us=4\.5"),
        ("negative", r"returned -1\.99.* \(negative\) at 1 for parameter set \{lat_us=1,"),
    ],
)
def test_bad_outputs_are_refused_naming_the_set(model_dir: Path, fn: str, message: str) -> None:
    with pytest.raises(SimulatorRunError, match=message):
        python_model(model_dir, fn)(X)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("fail", r"exited with status 3 for parameter set .*cannot open platform\.xml"),
        ("nofile", r"exited 0 but wrote no outputs file"),
        ("header", r"wrote the header \['1', '100000', '1000'\] .*expected the output names"),
    ],
)
def test_a_failing_command_names_the_set(model_dir: Path, mode: str, message: str) -> None:
    with pytest.raises(SimulatorRunError, match=message) as err:
        command_model(model_dir, mode)(X[:1])
    assert "lat_us=1, bw_GBps=5" in str(err.value)


def test_a_command_that_hangs_times_out(model_dir: Path) -> None:
    with pytest.raises(SimulatorRunError, match=r"timed out after 0\.5 s for parameter set"):
        command_model(model_dir, "sleep", timeout_s=0.5)(X[:1])


def test_bad_specs_are_input_errors(model_dir: Path) -> None:
    with pytest.raises(SurrogateInputError, match="expected MODULE:FUNCTION"):
        import_callable("no_colon")
    with pytest.raises(SurrogateInputError, match="cannot import 'not_a_module_xyz'"):
        import_callable("not_a_module_xyz:f", [model_dir])
    with pytest.raises(SurrogateInputError, match="has no callable 'nope'"):
        import_callable("toy_ext:nope", [model_dir])
    with pytest.raises(SurrogateInputError, match=r"has no \{output\}"):
        CommandModel(("sim",), NAMES, ("1",))


def test_a_module_of_the_same_name_from_another_folder_runs_its_own_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two campaigns' ``dup_sim`` in one process: the second ran the first's code."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for k in ("a", "b"):
        (tmp_path / k).mkdir()
        (tmp_path / k / "dup_sim.py").write_text(f"def f(x):\n    return {k!r}\n")
    monkeypatch.delitem(sys.modules, "dup_sim", raising=False)
    assert import_callable("dup_sim:f", [tmp_path / "a"])(None) == "a"  # type: ignore[operator]
    assert import_callable("dup_sim:f", [tmp_path / "b"])(None) == "b"  # type: ignore[operator]
    assert import_callable("dup_sim:f", [tmp_path / "a"])(None) == "a"  # type: ignore[operator]
    monkeypatch.delitem(sys.modules, "dup_sim")


def test_one_failed_run_never_loses_the_others(model_dir: Path, tmp_path: Path) -> None:
    """keep_going: the failing set is reported after the others are saved; a second run
    with a fixed model computes only the missing one."""
    design = np.array([[1.0, 5.0], [4.5, 3.0], [2.0, 2.0], [3.0, 4.0]])
    store = tmp_path / "runs.h5"
    bad = python_model(model_dir, "raises")
    with pytest.raises(SimulatorRunError, match=r"1 of 4 model evaluations failed.*lat_us=4\.5"):
        for _ in run_design(bad, design, store, chunk_size=1, model_id="toy", keep_going=True):
            pass
    assert design_status(store) == (3, 4)
    good = python_model(model_dir, "simulate")
    reports = list(run_design(good, design, store, chunk_size=1, model_id="toy"))
    assert reports[-1].n_computed == 1  # only the failed set was run again
    expected = design[:, :1] + np.array(SIZES, dtype=float) / (1e3 * design[:, 1:2])
    np.testing.assert_allclose(load_design_outputs(store)[1], expected, rtol=1e-15)
