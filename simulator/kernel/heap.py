"""The kernel's event heap: a binary min-heap of ``(time, sequence, code)`` in three arrays.

Events are ordered by simulated time, then by creation sequence (deterministic
ties). The event loop leaves the event being handled at the root (``top_live``)
until the handler's first push replaces it: one sift-down instead of a pop and a
push for the common handler that schedules one follow-up event.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator._jit import njit


class Heap(NamedTuple):
    """Storage of the event heap (capacity: every rank and message has at most one event)."""

    t: npt.NDArray[np.float64]  #: event time, s
    seq: npt.NDArray[np.int64]  #: creation sequence (tie-break)
    code: npt.NDArray[np.int64]  #: ``argument * N_EV + event kind``


@njit(inline="always", error_model="numpy")
def _less(ta, sa, tb, sb):  # type: ignore[no-untyped-def]
    return (ta < tb) | ((ta == tb) & (sa < sb))  # branch-free: both sides are cheap


@njit(inline="always", error_model="numpy")
def sift_up(heap, n, t, seq, code):  # type: ignore[no-untyped-def]
    """Insert ``(t, seq, code)`` as element ``n`` (capacity must allow it)."""
    h_t, h_s, h_c = heap
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if _less(t, seq, h_t[parent], h_s[parent]):
            h_t[i] = h_t[parent]
            h_s[i] = h_s[parent]
            h_c[i] = h_c[parent]
            i = parent
        else:
            break
    h_t[i] = t
    h_s[i] = seq
    h_c[i] = code


@njit(inline="always", error_model="numpy")
def sift_down(heap, n, t, s, c):  # type: ignore[no-untyped-def]
    """Place ``(t, s, c)`` at the root of a heap of ``n`` elements and restore order."""
    h_t, h_s, h_c = heap
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        right = left + 1
        if right < n and _less(h_t[right], h_s[right], h_t[left], h_s[left]):
            child = right
        if _less(h_t[child], h_s[child], t, s):
            h_t[i] = h_t[child]
            h_s[i] = h_s[child]
            h_c[i] = h_c[child]
            i = child
        else:
            break
    h_t[i] = t
    h_s[i] = s
    h_c[i] = c


@njit(inline="always", error_model="numpy")
def push(heap, n, top_live, t, seq, code):  # type: ignore[no-untyped-def]
    """Push an event while the current event may still sit at the root.

    Returns the new size and whether the root is still the current event (False).
    """
    if top_live:
        sift_down(heap, n, t, seq, code)
        return n, False
    sift_up(heap, n, t, seq, code)
    return n + 1, False


@njit(inline="always", error_model="numpy")
def runs_next(heap, n, top_live, t, seq):  # type: ignore[no-untyped-def]
    """Whether an event ``(t, seq)`` would be the next one popped (fast-path test)."""
    h_t, h_s, _c = heap
    if top_live:
        if n <= 1:
            return True
        best = 1
        if n > 2 and _less(h_t[2], h_s[2], h_t[1], h_s[1]):
            best = 2
        return _less(t, seq, h_t[best], h_s[best])
    return n == 0 or _less(t, seq, h_t[0], h_s[0])


@njit(inline="always", error_model="numpy")
def pop_root(heap, n):  # type: ignore[no-untyped-def]
    """Remove the root of a heap of ``n`` elements; returns the new size."""
    h_t, h_s, h_c = heap
    n -= 1
    if n > 0:
        sift_down(heap, n, h_t[n], h_s[n], h_c[n])
    return n
