"""The build backend that compiles the simulator's loops during ``pip install``.

Its build environment must have the NumPy, numba, h5py and xxhash the install pins (a cache
compiled by another numba is ignored, one compiled against another NumPy is wrong), and
the cache files it adds to a regular wheel must be in the wheel's RECORD.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import tomllib
import zipfile
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from mpiuq.precompile import PRECOMPILE_IMPORTS, TINY_TI_TRACE

ROOT = Path(__file__).resolve().parents[2]


def _backend() -> ModuleType:
    path = ROOT / "build_backend" / "mpiuq_build_backend.py"
    spec = importlib.util.spec_from_file_location("mpiuq_build_backend", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mpiuq_build_backend", module)
    spec.loader.exec_module(module)
    return module


def _pins(requirements: list[str]) -> dict[str, str]:
    return {r.split("==")[0].split("[")[0]: r.split("==")[1] for r in requirements if "==" in r}


def test_the_build_environment_pins_what_the_install_pins() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    build = _pins(project["build-system"]["requires"])
    runtime = _pins(project["project"]["dependencies"])
    assert set(build) == set(PRECOMPILE_IMPORTS)
    assert {name: runtime[name] for name in build} == build
    assert project["build-system"]["build-backend"] == "mpiuq_build_backend"


#: Runs a replay and a benchmark with every third-party distribution outside the build
#: requirements made unimportable, as in pip's isolated build environment.
_ISOLATED_RUN = """
import importlib.abc, sys
allowed = set(sys.argv[1].split(","))
project = set(sys.argv[2].split(","))
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in project and top not in allowed:
            raise ImportError(f"{top} is not in the build environment")
        return None
sys.meta_path.insert(0, Blocked())
from mpiuq.main import main
code = main(["replay", sys.argv[3], "--model", "analytic", "--quiet"])
code = code or main(["simulate", "--benchmark", "pingpong", "--sizes", "8,65536"])
sys.exit(code)
"""


def test_the_compiling_commands_need_only_the_build_requirements(tmp_path: Path) -> None:
    """The install compiles in pip's build environment, which holds the build
    requirements only: the commands it runs must not import another dependency."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = _pins(project["project"]["dependencies"])
    modules = {"dask": "dask,distributed", "pydumpi": "pydumpi,dumpi"}
    others = ",".join(modules.get(name, name) for name in runtime)
    trace = tmp_path / "tiny.txt"
    trace.write_text(TINY_TI_TRACE + "\n", encoding="utf-8")
    env = dict(os.environ, MPIUQ_CACHE_DIR=str(tmp_path / "cache"), MPIUQ_RESULTS=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", _ISOLATED_RUN, ",".join(PRECOMPILE_IMPORTS), others, str(trace)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_cache_files_are_added_to_the_wheel_and_its_record(tmp_path: Path) -> None:
    backend = _backend()
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/__init__.py", "")
        zf.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", "pkg/__init__.py,,0\npkg-1.0.dist-info/RECORD,,\n")
    root = tmp_path / "unpacked"
    cache = root / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "mod.f-3.py311.nbi").write_bytes(b"index")
    (cache / "mod.f-3.py311.1.nbc").write_bytes(b"data")
    (cache / "mod.cpython-311.pyc").write_bytes(b"bytecode, not added")
    backend._add_cache_files(wheel, root)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        record = zf.read("pkg-1.0.dist-info/RECORD").decode().splitlines()
    assert "pkg/__pycache__/mod.f-3.py311.nbi" in names
    assert "pkg/__pycache__/mod.f-3.py311.1.nbc" in names
    assert "pkg/__pycache__/mod.cpython-311.pyc" not in names
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"index").digest()).rstrip(b"=").decode()
    assert f"pkg/__pycache__/mod.f-3.py311.nbi,sha256={digest},5" in record
    assert record[-1] == "pkg-1.0.dist-info/RECORD,,"


def test_the_compilation_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _backend()
    monkeypatch.setenv("MPIUQ_PRECOMPILE", "0")
    assert backend._enabled() is False
    monkeypatch.setenv("MPIUQ_PRECOMPILE", "1")
    assert backend._enabled() is True


def test_the_two_halves_of_the_compilation_run_every_command_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts that compile in two processes at once: together every command of the
    whole exercise, each in one part only (the motif they both need excepted), the
    batches in the rest; an unknown part is refused."""
    import mpiuq.main
    import mpiuq.precompile as pre

    ran: dict[str | None, list[tuple[str, ...]]] = {}

    def record(part: str | None) -> None:
        calls: list[tuple[str, ...]] = []
        monkeypatch.setattr(mpiuq.main, "main", lambda argv: calls.append(tuple(argv)) or 0)
        monkeypatch.setattr(pre, "_exercise_batches", lambda motif: calls.append(("batches",)))
        folder = tmp_path / str(part)
        folder.mkdir()
        pre.exercise(folder, part)
        ran[part] = [tuple(a.replace(str(folder), "F") for a in c) for c in calls]

    for part in (None, *pre.PARTS):
        record(part)
    stream, rest = ran["stream"], ran["rest"]
    assert any("--stream" in c for c in stream) and ("batches",) in rest
    motif = ran[None][0]
    assert motif[:2] == ("trace", "synth")
    # every command of the whole exercise in one part, the motif in both
    assert Counter(stream) + Counter(rest) == Counter(ran[None]) + Counter([motif])
    with pytest.raises(ValueError, match="part='both' is invalid"):
        pre.exercise(tmp_path, "both")
