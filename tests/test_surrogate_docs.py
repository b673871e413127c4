"""The examples in the surrogate layer's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pickle

import numpy as np
import pytest

from mpiuq.surrogate import ParameterBox, fit_pce, random_design

MODULES = ["box", "designs", "pce", "basis", "sensitivity", "executors", "design_run"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"mpiuq.surrogate.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_fitted_surrogate_pickles_for_workers() -> None:
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (2.0, 3.0)})
    x = random_design(box, 30, 0)
    pce = fit_pce(x, np.sin(x), box, 2)
    back = pickle.loads(pickle.dumps(pce))
    np.testing.assert_array_equal(back.predict(x), pce.predict(x))
    assert back.box == pce.box
