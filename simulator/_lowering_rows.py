"""Row bookkeeping of the lowering: flattened ranges, and the reductions' combine rows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
    # only the templates' combine steps are visited (a few rows of each schedule)
    flat = np.concatenate(combines)
    t_start = np.cumsum(t_len) - t_len
    hit = np.flatnonzero(flat > 0.0)
    t_of = np.searchsorted(t_start, hit, side="right") - 1
    step = hit - t_start[t_of]
    n_hit = np.bincount(t_of, minlength=t_len.shape[0])
    pos, call = segments((np.cumsum(n_hit) - n_hit)[tid], n_hit[tid])
    step = step[pos]
    first = row_ptr[coll_ops]
    keep = step < (row_ptr[coll_ops + 1] - first)[call]
    return (first[call] + step)[keep], flat[hit[pos]][keep]
