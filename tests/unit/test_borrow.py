"""Borrowed bundles (:mod:`mpiuq.simulator.runtime.borrow`): the same arrays, no reference counts.

The event loop, the lowering kernels and the flow network's loops borrow their bundles
of arrays on entry instead of compiling without numba's reference counting (a private
numba option). These tests compile small functions (not cached) to check that a
borrowed bundle reads and writes the caller's memory, that a loop passing a borrowed
bundle to an inlined helper keeps no reference-count updates in its machine code, and
that anything but arrays, numbers and tuples of them is refused at compile time.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, NamedTuple

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

from mpiuq.simulator.kernel.loop import event_loop
from mpiuq.simulator.runtime.borrow import borrowed


class Inner(NamedTuple):
    a: np.ndarray
    b: np.ndarray


class Bundle(NamedTuple):
    inner: Inner
    c: np.ndarray
    scale: float
    count: int


@numba.njit(inline="always")
def _helper(bundle, i):  # type: ignore[no-untyped-def]
    bundle.inner.a[i] += bundle.inner.b[i] * bundle.scale
    return bundle.c[i]


@numba.njit(inline="always")
def _branch(bundle, i, j):  # type: ignore[no-untyped-def]
    if j > 0:
        return _helper(bundle, i)
    inner = bundle.inner
    return inner.a[i]


@numba.njit
def _side(bundle, i):  # type: ignore[no-untyped-def]
    bundle.c[i] += 1.0
    return bundle.c[i]


def _loop(bundle, n):  # type: ignore[no-untyped-def]
    """A loop in the event loop's manner: handlers inlined, one called, bundles unpacked."""
    total = 0.0
    k = 0
    while k < n:
        i = k % bundle.c.shape[0]
        if k % 3 == 0:
            total += _branch(bundle, i, k)
        elif k % 3 == 1:
            total += _side(bundle, i)
        else:
            a, b = bundle.inner
            total += a[i] - b[i]
            for j in range(i):
                total += _branch(bundle, j, k - j)
        k += 1
    return total, bundle.count


_counted = numba.njit(_loop)
_inlined_loop = numba.njit(inline="always")(_loop)


@numba.njit
def _borrowing(bundle, n):  # type: ignore[no-untyped-def]
    return _inlined_loop(borrowed(bundle), n)


def _bundle() -> Bundle:
    return Bundle(Inner(np.zeros(5), np.arange(5.0)), np.ones((5,)) * 2.0, 0.5, 7)


def _body(dispatcher: Any, name: str) -> str:
    ir: str = dispatcher.inspect_llvm(dispatcher.signatures[0])
    lines, inside = [], False
    for line in ir.splitlines():
        if line.startswith("define") and name in line and "cpython" not in line:
            inside = True
        elif inside and line.startswith("}"):
            break
        elif inside:
            lines.append(line)
    assert lines, f"no function {name} in the IR"
    return "\n".join(lines)


def test_a_borrowed_bundle_is_the_callers_memory() -> None:
    counted, borrowing = _bundle(), _bundle()
    assert _borrowing(borrowing, 40) == _counted(counted, 40)
    for got, want in zip(
        (borrowing.inner.a, borrowing.inner.b, borrowing.c),
        (counted.inner.a, counted.inner.b, counted.c),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)  # written through to the caller's arrays
    assert borrowing.inner.a.any() and (borrowing.c > 2.0).any()


def test_borrowing_removes_the_reference_counts_from_the_loop() -> None:
    _counted(_bundle(), 3)
    _borrowing(_bundle(), 3)
    refops = re.compile(r"call void @NRT_(incref|decref)")
    assert len(refops.findall(_body(_counted, "_loop"))) > 0  # numba's own: counts kept
    assert refops.findall(_body(_borrowing, "_borrowing")) == []


def test_only_arrays_numbers_and_tuples_are_borrowed() -> None:
    @numba.njit
    def take(value):  # type: ignore[no-untyped-def]
        return borrowed(value)

    with pytest.raises(TypingError, match="borrowed: expected arrays, scalars or tuples"):
        take(["a list"])
    with pytest.raises(TypingError, match="borrowed: expected arrays"):
        take((np.zeros(2), "text"))


def test_the_event_loop_keeps_numbas_documented_options() -> None:
    # the loops' options are public ones (the private _nrt=False is gone)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = dict(event_loop.targetoptions)
    assert not any(key.startswith("_") for key in options), options
    assert options.get("nogil") is True
