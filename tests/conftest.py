"""Shared fixtures: the input data of the tests (see ``shared_data.py``)."""

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
