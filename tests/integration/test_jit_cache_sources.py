"""The compiled loops' on-disk caches expire with every source compiled into them.

numba keys a cache on the decorated function's own file only; loops inline functions of
other modules (the kernel's protocol handlers, the TI parser's lexer and state), so
``mpiuq.simulator.runtime.jit`` drops the cached loops when the digest of the whole source set
changes. A module with compiled loops left out of the set would leave stale machine
code in use after an edit or an upgrade.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from mpiuq.simulator.runtime import jit as _jit
from mpiuq.simulator.runtime import sources as _sources

SIMULATOR = Path(_jit.__file__).resolve().parents[1]
DECORATED = re.compile(r"^@njit\b|= njit\(|intrinsic\(|overload\(", re.M)


def matched(patterns: tuple[str, ...]) -> set[Path]:
    return {p for pattern in patterns for p in SIMULATOR.glob(pattern)}


def loop_modules() -> list[Path]:
    return sorted(p for p in SIMULATOR.rglob("*.py") if DECORATED.search(p.read_text()))


def test_every_module_with_compiled_loops_is_in_the_source_set() -> None:
    modules = loop_modules()
    assert len(modules) >= 20  # the kernel, networks, routing, lowering, TI parser
    compiled = matched(_sources.COMPILED_SOURCES)
    for path in modules:
        assert path in compiled, path.relative_to(SIMULATOR)


def test_only_the_jit_module_imports_numba() -> None:
    # others use numba's typing only inside the bodies of their intrinsics and overloads
    importers = [
        p.relative_to(SIMULATOR)
        for p in SIMULATOR.rglob("*.py")
        if p != SIMULATOR / "runtime" / "jit.py" and re.search(r"^(import numba|from numba)", p.read_text(), re.M)
    ]
    assert importers == []


def test_the_digest_changes_with_any_file_of_the_set(tmp_path: Path) -> None:
    for rel in ("codes.py", "kernel/loop.py", "networks/packet.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    before = _sources.digest_of(_sources.COMPILED_SOURCES, tmp_path)
    (tmp_path / "kernel/loop.py").write_text("x = 2\n")
    _sources.digest_of.cache_clear()
    assert _sources.digest_of(_sources.COMPILED_SOURCES, tmp_path) != before


def test_stale_cache_files_are_dropped_once_and_the_digest_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "simulator"
    (root / "kernel").mkdir(parents=True)
    (root / "codes.py").write_text("A = 1\n")
    (root / "kernel" / "loop.py").write_text("B = 2\n")
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    cache = root / "kernel" / "__pycache__"
    cache.mkdir()
    stale = [cache / "loop.f-1.py311.nbi", cache / "loop.f-1.py311.1.nbc"]
    for p in stale:
        p.write_bytes(b"old")
    (cache / "loop.cpython-311.pyc").write_bytes(b"kept")
    _sources.digest_of.cache_clear()
    assert _jit.drop_stale_caches(root) is True
    assert not any(p.exists() for p in stale) and (cache / "loop.cpython-311.pyc").exists()
    stamp = root / "__pycache__" / _jit.STAMP_NAME
    assert stamp.read_text().strip() == _jit.stamp_of(root)
    for p in stale:  # compiled again with these sources: kept
        p.write_bytes(b"new")
    assert _jit.drop_stale_caches(root) is False and all(p.exists() for p in stale)
    (root / "codes.py").write_text("A = 3\n")  # an inlined source changes: dropped again
    _sources.digest_of.cache_clear()
    assert _jit.drop_stale_caches(root) is True and not any(p.exists() for p in stale)


def test_cache_folders_are_where_numba_puts_the_loops(tmp_path: Path) -> None:
    # numba's own answer for a loop, with and without NUMBA_CACHE_DIR, against ours
    code = (
        "import sys, numba\n"
        "from pathlib import Path\n"
        "from mpiuq.simulator.runtime import jit as _jit\n"
        "from mpiuq.simulator.kernel import loop\n"
        "numba_dir = Path(loop.event_loop._cache._cache_path)\n"
        "print(numba_dir in _jit.cache_folders())\n"
    )
    for extra in ({}, {"NUMBA_CACHE_DIR": str(tmp_path / "nc")}):
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | extra
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert out.strip() == "True", extra
