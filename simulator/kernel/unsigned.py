"""Unsigned array indices for the kernel's loops.

numba adds negative-index wraparound to every array access with a signed index: a
sign mask, an ``and`` with the array's length (in the event loop, reloaded from the
stack) and one more address computation. The kernel's indices (ranks, rows, slots,
heap positions, request ids once checked against the ``SLOT_*`` sentinels) are never
negative, so the loops over them (the heap's sifts, the matching queues' scans) index
with ``U(i)``: the same element, without the wraparound. The event loop of the trace
replays took 15-18% less CPU (ti_nekbone_64r and ti_lulesh_512r, analytic and
compute-only; ``experiments/perf/perf_engine_cpu.py``). Straight-line handlers gained
nothing measurable and keep plain indices.

A negative value passed to ``U`` would read far out of bounds (the loops run without
bounds checks, as before); the sentinels are tested before any index is formed.
"""

from __future__ import annotations

import numpy as np

#: Cast of a non-negative index to an unsigned one (free in compiled code).
U = np.uint64
