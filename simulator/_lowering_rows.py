"""Row bookkeeping of the lowering: flattened ranges, and the reductions' combine rows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.simulator._lowering_kernel import combine_steps

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def segments(starts: IntArray, counts: IntArray) -> tuple[IntArray, IntArray]:
    """Flattened positions of the ranges ``[starts[i], starts[i] + counts[i])`` and their owner i."""
    seg = np.repeat(np.arange(starts.shape[0], dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    pos = np.arange(int(counts.sum()), dtype=np.int64) - first[seg] + starts[seg]
    return pos, seg


def combine_rows(
    row_ptr: IntArray,
    coll_ops: IntArray,
    tid: IntArray,
    combines: list[FloatArray],
    t_len: IntArray,
) -> tuple[IntArray, FloatArray]:
    """Program rows of the reductions' combine steps and the bytes each combines.

    Parameters
    ----------
    row_ptr
        Program rows of each trace operation (``Lowered.row_ptr``).
    coll_ops, tid
        Trace operation of each collective call and its schedule template.
    combines, t_len
        Per template: bytes combined by each of its rows (> 0 only on combine steps)
        and its number of rows.
    """
    if not combines:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    # compiled, in two passes (count, then write): no scratch array per collective row
    # (array operations took 16 B per row of every collective, 0.9 GB at issue 15's scale)
    pool = np.concatenate(combines)
    t_first = np.cumsum(t_len) - t_len
    rows, nbytes = np.zeros(0, np.int64), np.zeros(0, np.float64)
    n = combine_steps(row_ptr, coll_ops, tid, t_first, pool, rows, nbytes)
    rows, nbytes = np.empty(n, np.int64), np.empty(n, np.float64)
    combine_steps(row_ptr, coll_ops, tid, t_first, pool, rows, nbytes)
    return rows, nbytes
