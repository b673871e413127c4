"""The test suite's layout: the folder is the tier.

``tests/unit`` and ``tests/integration`` are the fast tier (``pytest``, pyproject's
``testpaths``); ``tests/e2e`` holds the end-to-end runs (``pytest tests``, what CI and the
README run). Helpers shared by the tiers stay at ``tests/`` (importable from every tier).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
TIERS = ("unit", "integration", "e2e")


def test_every_test_module_is_in_a_tier_folder() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    for tier in TIERS:
        assert len(list((TESTS / tier).glob("test_*.py"))) >= 5, tier
    names = [p.name for tier in TIERS for p in (TESTS / tier).glob("test_*.py")]
    assert len(names) == len(set(names))  # one module name space (rootdir-less imports)


def test_no_slow_test_outside_the_e2e_folder() -> None:
    slow = re.compile(r"mark\.slow\b")
    bad = [
        p.relative_to(ROOT).as_posix()
        for tier in ("unit", "integration")
        for p in sorted((TESTS / tier).glob("*.py"))
        if slow.search(p.read_text(encoding="utf-8"))
    ]
    assert bad == []


def test_pytest_runs_the_fast_tier_and_ci_every_tier() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert ini["testpaths"] == ["tests/unit", "tests/integration"]
    assert {"tests", *(f"tests/{t}" for t in TIERS)} <= set(ini["pythonpath"])
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^python -m pytest .*\btests$", ci, re.M), "CI runs every tier"
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e '.[test]' && pytest tests\n" in readme
