"""The loops compiled ahead of time (``mpiuq kernels build``): commands that load them
import no numba and give bit-identical results to numba's dispatchers; arguments of
other types, a damaged module or ``MPIUQ_AOT=off`` fall back to numba.

One module is built per test session (in a temporary folder, ``MPIUQ_AOT_DIR``) from
the suite's numba cache: about a minute when that cache is warm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from mpiuq.simulator import _aot

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _env(aot_dir: Path, *, aot: bool, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MPIUQ_AOT", None)
    if not aot:
        env["MPIUQ_AOT"] = "off"
    env["MPIUQ_AOT_DIR"] = str(aot_dir)
    env["MPIUQ_CACHE_DIR"] = str(cache)
    return env


def _python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in its own process (output captured, any exit code)."""
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _mpiuq(args: list[str], env: dict[str, str]) -> str:
    """Run ``mpiuq ARGS`` in its own process; its stdout (fails the test on an error)."""
    proc = _python(["-m", "mpiuq", *args], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An ahead-of-time module built by ``mpiuq kernels build`` (its folder); skipped on a
    machine without a C compiler (numba's ahead-of-time compiler links with it)."""
    if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: numba's ahead-of-time compiler cannot link the module")
    folder = tmp_path_factory.mktemp("aot")
    cache = tmp_path_factory.mktemp("trace-cache")
    _mpiuq(["kernels", "build"], _env(folder, aot=True, cache=cache))
    status = _mpiuq(["kernels", "status"], _env(folder, aot=True, cache=cache))
    assert f"ahead-of-time module: {folder}" in status
    modules = list(folder.glob("mpiuq_loops_*.json"))
    assert len(modules) == 1
    yield folder


def _without_walls(value: Any) -> Any:
    """``value`` (replay JSON) without its wall-clock fields."""
    if isinstance(value, dict):
        return {
            k: _without_walls(v)
            for k, v in value.items()
            if "wall" not in k and k not in ("lowering_s", "elapsed_s")
        }
    if isinstance(value, list):
        return [_without_walls(v) for v in value]
    return value


_PROBE = (
    "import sys, json\n"
    "from mpiuq.main import main\n"
    "code = main(sys.argv[1:])\n"
    "from mpiuq.simulator._aot import loaded_module_path\n"
    "print(json.dumps({'numba': 'numba' in sys.modules, "
    "'module': str(loaded_module_path())}), file=sys.stderr)\n"
    "raise SystemExit(code)\n"
)


def _replay(args: list[str], env: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    """``mpiuq replay ARGS --json`` in its own process: the JSON and the probe's facts."""
    proc = _python(["-c", _PROBE, "replay", *args, "--json", "--quiet"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts = json.loads(proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout), facts


def _traces(tmp_path: Path, traces_dir: Path | None) -> list[Path]:
    motif = tmp_path / "halo.h5"
    _mpiuq(
        ["trace", "synth", "halo3d", "--ranks", "27", "--iterations", "3", "--out", str(motif)],
        dict(os.environ),
    )
    found = [motif]
    if traces_dir is not None:
        found += [
            traces_dir / name
            for name in (
                "ti_comd_64r",
                "ti_nekbone_16r",  # the parser's key table grows
                "gen_dumpi_lulesh_27r",
                "gen_otf2_lulesh_27r",
            )
            if (traces_dir / name).exists()
        ]
    return found


def test_aot_replays_are_bit_identical_and_import_no_numba(built: Path, tmp_path: Path) -> None:
    """Every model, in memory and streamed, on a synthetic motif and (when present) shared
    TI, DUMPI and OTF2 traces: the same JSON with and without the module, on a first
    run (the trace parsed, each side with its own trace cache) and a second (from the
    cache); the commands that use the module never import numba."""
    from shared_data import TRACES

    traces = _traces(tmp_path, TRACES if TRACES.is_dir() else None)
    jit_env = _env(built, aot=False, cache=tmp_path / "jit-cache")
    aot_env = _env(built, aot=True, cache=tmp_path / "aot-cache")
    for trace in traces:
        for extra in ([], ["--stream", "on", "--scratch", str(tmp_path)]):
            args = [str(trace), "--model", "analytic,packet,compute-only", *extra]
            jit, jit_facts = _replay(args, jit_env)
            assert jit_facts["numba"] and jit_facts["module"] == "None"
            for run in ("first", "second"):
                aot, aot_facts = _replay(args, aot_env)
                where = f"{trace.name} {extra} {run} run"
                assert aot_facts["module"] != "None", where
                assert not aot_facts["numba"], f"{where}: numba was imported"
                assert _without_walls(aot) == _without_walls(jit), where


class _Pair(NamedTuple):
    a: Any
    b: Any


def _values() -> list[Any]:
    c = np.zeros((4, 3))
    ro = np.zeros(5)
    ro.setflags(write=False)
    return [
        c,
        np.asfortranarray(c),
        c[:, ::2],
        c[::2],
        np.zeros(5),
        np.zeros(5, np.int64),
        np.zeros(5, np.int32),
        np.zeros(0),
        ro,
        np.zeros((2, 2), np.int8)[0],
        1,
        2**40,
        -3,
        1.5,
        True,
        np.int32(3),
        np.float64(2.0),
        (1, 2.0),
        (np.zeros(3), np.zeros(3)),
        _Pair(np.zeros(2), 1),
        _Pair(np.zeros(2), np.zeros(2)),
        _Pair(1.0, 1),
    ]


def test_fingerprint_tells_apart_what_numba_types_apart() -> None:
    """Equal fingerprints imply equal numba types (so an export never gets arguments of
    another type), over arrays of every layout, dtype and flag, scalars and tuples."""
    import numba

    values = _values()
    prints = [_aot.fingerprint(v) for v in values]
    assert all(p is not None for p in prints)
    types = [numba.typeof(v) for v in values]
    for i in range(len(values)):
        for j in range(len(values)):
            if prints[i] == prints[j]:
                assert types[i] == types[j], (values[i], values[j])


def test_fingerprint_refuses_what_no_export_takes() -> None:
    assert _aot.fingerprint(2**70) is None
    assert _aot.fingerprint("text") is None
    assert _aot.fingerprint((np.zeros(2), object())) is None
    assert _aot.fingerprint_key((1, "x")) is None


def test_other_argument_types_fall_back_to_numba(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop called with types the build never saw runs numba's dispatcher (same answer
    as its Python body), not the export (which would misread them)."""
    from mpiuq.simulator.codes import COL_COUNT, COL_KIND, OP_WAITALL, OPS_WIDTH
    from mpiuq.simulator.kernel.state import wait_offsets

    monkeypatch.setenv("MPIUQ_AOT_DIR", str(built))
    monkeypatch.delenv("MPIUQ_AOT", raising=False)
    _aot.forget()
    try:
        assert _aot.loaded_module_path() is not None
        rank_ptr = np.array([0, 2, 3], np.int64)
        ops = np.zeros((3, OPS_WIDTH), np.int64)  # the kernel's rows are int32: not an export
        ops[1, COL_KIND], ops[1, COL_COUNT] = OP_WAITALL, 5
        assert _aot.aot_function(wait_offsets.key, (rank_ptr, ops)) is None
        expected = wait_offsets.py_func(rank_ptr, ops)
        np.testing.assert_array_equal(expected, [0, 5, 6])
        np.testing.assert_array_equal(wait_offsets(rank_ptr, ops), expected)
    finally:
        _aot.forget()


def test_damaged_module_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module file that is not an extension (a killed copy, say) is not loaded: the loops
    run from numba's cache, nothing crashes."""
    monkeypatch.setenv("MPIUQ_AOT_DIR", str(tmp_path))
    monkeypatch.delenv("MPIUQ_AOT", raising=False)
    name = _aot.module_name()
    _aot.module_path(name).write_bytes(b"\x7fELF not really")
    _aot.table_path(name).write_text('{"format": 1, "loops": {"x:y": [["()", "x0_y"]]}}')
    _aot.forget()
    try:
        assert _aot.loaded_module_path() is None
        assert _aot.aot_function("x:y", ()) is None
    finally:
        _aot.forget()


def test_aot_off_loads_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MPIUQ_AOT", "off")
    monkeypatch.setenv("MPIUQ_AOT_DIR", str(tmp_path))
    _aot.forget()
    try:
        assert not _aot.aot_enabled()
        assert _aot.loaded_module_path() is None
    finally:
        _aot.forget()


def test_build_without_a_c_compiler_fails_in_one_line(tmp_path: Path) -> None:
    """No C compiler: ``mpiuq kernels build`` exits 1 with one line naming the cause, and
    leaves no module behind (commands keep running on numba's cache)."""
    env = _env(tmp_path / "aot", aot=True, cache=tmp_path / "cache")
    env["CC"] = str(tmp_path / "no-such-compiler")
    proc = _python(["-m", "mpiuq", "kernels", "build", "--quiet"], env)
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "ahead-of-time compiler cannot start" in lines[0]
    assert not list((tmp_path / "aot").glob("mpiuq_loops_*"))


def test_build_into_a_file_fails_in_one_line(tmp_path: Path) -> None:
    """``MPIUQ_AOT_DIR`` naming a file: one line naming the folder and the variable."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    proc = _python(
        ["-m", "mpiuq", "kernels", "build", "--quiet"],
        _env(not_a_folder, aot=True, cache=tmp_path / "cache"),
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"folder {not_a_folder} cannot be made" in lines[0] and "MPIUQ_AOT_DIR" in lines[0]


def test_a_thread_calling_while_another_loads_the_module_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two threads making their first loop calls at once (the TI parse on two cores) both
    run the module's loops: the second waits for the first's load, it does not find the
    module 'loaded' before it is (it then ran numba's loop, importing numba)."""
    import threading
    from types import SimpleNamespace

    inside, release = threading.Event(), threading.Event()
    key = _aot.fingerprint_key((1,))
    assert key is not None

    def slow_load() -> None:
        inside.set()
        release.wait(10)
        _aot._loaded["module"] = SimpleNamespace(x0_f=lambda v: v + 1)
        _aot._loaded["table"] = {"m:f": {key: "x0_f"}}

    monkeypatch.setattr(_aot, "_loaded", {"done": False, "module": None, "table": {}, "path": None})
    monkeypatch.setattr(_aot, "_load_module", slow_load)
    loader = threading.Thread(target=_aot._load)
    loader.start()
    assert inside.wait(10)
    threading.Timer(0.2, release.set).start()
    found = _aot.aot_function("m:f", (1,))  # while the loader is inside
    loader.join(10)
    assert found is not None and found(1) == 2
