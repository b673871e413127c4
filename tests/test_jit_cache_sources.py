"""The compiled loops' on-disk caches expire with every source compiled into them.

numba keys a cache on the decorated function's own file only; loops inline functions of
other modules (the kernel's protocol handlers, the TI parser's lexer and state), so
``mpiuq.simulator._jit`` ties each cache to a digest of a whole source set. A module
with compiled loops left out of its set would leave stale machine code in use after an
edit or an upgrade (``kernel/protocols/`` was left out until 2026-11-26).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from mpiuq.simulator import _jit, _sources

SIMULATOR = Path(_jit.__file__).resolve().parent
DECORATED = re.compile(r"^@(njit|njit_no_refcount|parser_njit|cached_njit)\b|= njit\(", re.M)


def matched(patterns: tuple[str, ...]) -> set[Path]:
    return {p for pattern in patterns for p in SIMULATOR.glob(pattern)}


def loop_modules() -> list[Path]:
    return sorted(p for p in SIMULATOR.rglob("*.py") if DECORATED.search(p.read_text()))


def test_every_module_with_compiled_loops_is_in_its_source_set() -> None:
    modules = loop_modules()
    assert len(modules) >= 20  # the kernel, networks, routing, lowering, TI parser
    kernel_set, parser_set = matched(_sources.COMPILED_SOURCES), matched(_sources.PARSER_SOURCES)
    for path in modules:
        text = path.read_text()
        rel = path.relative_to(SIMULATOR)
        if path.name.startswith("ti_"):
            assert path in parser_set, rel
            assert "@parser_njit" in text and "@njit" not in text, rel
        else:
            assert path in kernel_set, rel
            assert "@parser_njit" not in text, rel
        assert "@cached_njit" not in text, f"{rel}: untied cache (use _jit.njit or parser_njit)"
    assert SIMULATOR / "kernel" / "protocols" / "eager.py" in kernel_set


def test_a_tied_cache_stamp_carries_the_digest() -> None:
    cache = SimpleNamespace(_cache_file=SimpleNamespace(_source_stamp=(1.0, 10)))
    _jit.tie_cache(cache, "abc")
    assert cache._cache_file._source_stamp == ((1.0, 10), "abc")
    untouched = SimpleNamespace()  # a layout without the private stamp: left alone
    _jit.tie_cache(untouched, "abc")
    assert vars(untouched) == {}


def test_the_digest_changes_with_any_file_of_the_set(tmp_path: Path) -> None:
    (tmp_path / "trace").mkdir()
    (tmp_path / "codes.py").write_text("A = 1\n")
    (tmp_path / "trace" / "ti_lex.py").write_text("B = 2\n")
    before = _sources.digest_of(_sources.PARSER_SOURCES, tmp_path)
    _sources.digest_of.cache_clear()
    assert _sources.digest_of(_sources.PARSER_SOURCES, tmp_path) == before
    (tmp_path / "trace" / "ti_lex.py").write_text("B = 3\n")
    _sources.digest_of.cache_clear()
    assert _sources.digest_of(_sources.PARSER_SOURCES, tmp_path) != before


@pytest.mark.parametrize("name", ["ti_args.py", "ti_state.py", "ti_lex.py"])
def test_parser_helpers_are_in_the_parser_set(name: str) -> None:
    assert SIMULATOR / "trace" / name in matched(_sources.PARSER_SOURCES)
