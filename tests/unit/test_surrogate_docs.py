"""Surrogates cross process boundaries intact (docstring examples: test_doctests.py)."""

from __future__ import annotations

import pickle

import numpy as np

from mpiuq.surrogate import ParameterBox, fit_pce, random_design


def test_fitted_surrogate_pickles_for_workers() -> None:
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (2.0, 3.0)})
    x = random_design(box, 30, 0)
    pce = fit_pce(x, np.sin(x), box, 2)
    back = pickle.loads(pickle.dumps(pce))
    np.testing.assert_array_equal(back.predict(x), pce.predict(x))
    assert back.box == pce.box
