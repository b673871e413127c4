"""Shared fixtures: the input data of the tests (see ``shared_data.py``); the e2e tier's marker."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import BENCHMARKS, STAMPEDE_DIR, TRACES


@pytest.fixture
def traces_dir() -> Path:
    """``../shared/data/traces`` (the test is skipped when it is absent)."""
    if not TRACES.is_dir():
        pytest.skip("../shared/data/traces is absent")
    return TRACES


@pytest.fixture
def benchmarks_dir() -> Path:
    """``../shared/data/benchmarks`` (the test is skipped when it is absent)."""
    if not BENCHMARKS.is_dir():
        pytest.skip("../shared/data/benchmarks is absent")
    return BENCHMARKS


@pytest.fixture
def stampede_csv() -> Path:
    """The committed Stampede InfiniBand ping-pong data (always present)."""
    return STAMPEDE_DIR / "data.csv"


#: The end-to-end tier (the folder is the tier: see pyproject's testpaths).
E2E = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of ``tests/e2e`` slow, so ``-m "not slow"`` still selects the fast
    tier when the whole suite is named (``pytest tests -m "not slow"``)."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.slow)
