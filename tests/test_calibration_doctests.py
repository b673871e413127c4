"""The runnable examples in the calibration layer's docstrings stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["observations", "grouping", "likelihood", "summaries"])
def test_docstring_examples(module: str) -> None:
    m = importlib.import_module(f"mpiuq.calibration.{module}")
    result = doctest.testmod(m, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
