"""Assertions on traces shared by the tests."""

from __future__ import annotations

import dataclasses

import numpy as np

from mpiuq.simulator.trace.ir import Trace


def assert_same_trace(a: Trace, b: Trace) -> None:
    """Every field of ``a`` equals ``b``'s (arrays: same dtype and values)."""
    for f in dataclasses.fields(Trace):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y, f.name
