"""The kernel's event heap: a binary min-heap of ``(time, sequence, code)`` in three arrays.

Events are ordered by simulated time, then by creation sequence (deterministic
ties). The event loop leaves the event being handled at the root (``top_live``)
until the handler's first push replaces it: one sift-down instead of a pop and a
push for the common handler that schedules one follow-up event.

Computed heap positions index as unsigned integers (:mod:`.unsigned`; literal
positions need not): without numba's negative-index wraparound the replays' event
loops took 13-16% less CPU.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.kernel.unsigned import U
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit


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
        if _less(t, seq, h_t[U(parent)], h_s[U(parent)]):
            h_t[U(i)] = h_t[U(parent)]
            h_s[U(i)] = h_s[U(parent)]
            h_c[U(i)] = h_c[U(parent)]
            i = parent
        else:
            break
    h_t[U(i)] = t
    h_s[U(i)] = seq
    h_c[U(i)] = code


@njit(inline="always", error_model="numpy")
def sift_down_from(heap, n, i, t, s, c):  # type: ignore[no-untyped-def]
    """Place ``(t, s, c)`` at position ``i`` of a heap of ``n`` elements whose subtrees
    below ``i`` are in order, and restore the order of that subtree."""
    h_t, h_s, h_c = heap
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        right = left + 1
        if right < n and _less(h_t[U(right)], h_s[U(right)], h_t[U(left)], h_s[U(left)]):
            child = right
        if _less(h_t[U(child)], h_s[U(child)], t, s):
            h_t[U(i)] = h_t[U(child)]
            h_s[U(i)] = h_s[U(child)]
            h_c[U(i)] = h_c[U(child)]
            i = child
        else:
            break
    h_t[U(i)] = t
    h_s[U(i)] = s
    h_c[U(i)] = c


@njit(inline="always", error_model="numpy")
def sift_down(heap, n, t, s, c):  # type: ignore[no-untyped-def]
    """Place ``(t, s, c)`` at the root of a heap of ``n`` elements and restore order."""
    sift_down_from(heap, n, 0, t, s, c)


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
        return _less(t, seq, h_t[U(best)], h_s[U(best)])
    return n == 0 or _less(t, seq, h_t[0], h_s[0])


@njit(inline="always", error_model="numpy")
def pop_root(heap, n):  # type: ignore[no-untyped-def]
    """Remove the root of a heap of ``n`` elements; returns the new size."""
    h_t, h_s, h_c = heap
    n -= 1
    if n > 0:
        sift_down(heap, n, h_t[U(n)], h_s[U(n)], h_c[U(n)])
    return n


@njit(error_model="numpy")
def heapify(heap, n):  # type: ignore[no-untyped-def]
    """Restore the order of the first ``n`` elements, in any order (Floyd: sift every
    parent down, the last first)."""
    heap = borrowed(heap)
    for start in range(n // 2 - 1, -1, -1):
        sift_down_from(heap, n, start, heap.t[U(start)], heap.seq[U(start)], heap.code[U(start)])
