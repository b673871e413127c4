"""Simulate a program without holding it: each rank sees a window of its operations.

:func:`simulate_windowed` runs the kernel on a :class:`~mpiuq.simulator.kernel.WindowArrays`
bundle of ``window_rows`` rows per rank, filled from a
:class:`~mpiuq.simulator.program.source.ProgramSource` (a program file, or a program in
memory for tests). When a rank reaches the end of its window before the end of its
stream the compiled loop stops; this module refills that rank's window from the
rank's next operation (and, ahead of need, every other window more than half
used) and the loop resumes exactly where it stopped: the events, their order and
every float are those of :func:`~mpiuq.simulator.engine.simulate` on the whole program.

Memory: the windows hold ``n_ranks * window_rows`` rows of 40 bytes; the kernel's
state is that of the in-memory run (per request: 8 bytes of slot map and match; per
live request, its slot).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import kernel
from mpiuq.simulator.codes import OPS_WIDTH
from mpiuq.simulator.engine import RunResult, check_compute_scale, params_vector, run_result
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks import TWO_NODE_SWITCH, NetworkModel, network_arrays
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.file import ProgramFile
from mpiuq.simulator.program.source import ProgramSource, wait_rooms
from mpiuq.simulator.runtime.watch import run_watched

__all__ = [
    "DEFAULT_WINDOW_ROWS",
    "MAX_WINDOW_ROWS",
    "FileLowering",
    "WindowStats",
    "check_window_rows",
    "simulate_windowed",
]

#: Default window, rows per rank: 10 KiB per rank (164 MiB at 16,384 ranks); the loop
#: then stops a handful of times per run (windows more than half used are refilled
#: ahead of need at every stop).
DEFAULT_WINDOW_ROWS = 256
#: Largest window (rows per rank): 2^31 rows of 40 B, beyond any rank's stream.
MAX_WINDOW_ROWS = 1 << 31


def check_window_rows(window_rows: object) -> int:
    """``window_rows`` as an int, or a :class:`SettingError` naming it.

    Raises
    ------
    SettingError
        Unless ``window_rows`` is a whole number from 1 to :data:`MAX_WINDOW_ROWS`.
    """
    ok = isinstance(window_rows, int | np.integer) and not isinstance(window_rows, bool)
    if isinstance(window_rows, float) and math.isfinite(window_rows):
        ok = window_rows == int(window_rows)
    if not ok or not 1 <= int(window_rows) <= MAX_WINDOW_ROWS:  # type: ignore[call-overload]
        raise SettingError(
            f"window_rows={window_rows!r} is invalid: expected a whole number of program "
            f"rows per rank from 1 to {MAX_WINDOW_ROWS}"
        )
    return int(window_rows)  # type: ignore[call-overload]


@dataclass
class WindowStats:
    """What a windowed run did besides simulating: loop stops and rows read."""

    stops: int = 0  #: times the compiled loop stopped for a window
    refills: int = 0  #: windows refilled (each one read of at most ``window_rows`` rows)
    rows_read: int = 0  #: program rows copied into windows


class _Windows:
    """The window buffers of a source and their refill (from a rank's ``pc``)."""

    def __init__(self, source: ProgramSource, width: int) -> None:
        n_ranks = int(source.rank_ptr.shape[0]) - 1
        longest = int(np.max(np.diff(source.rank_ptr))) if n_ranks else 0
        self.width = max(min(width, longest), 1)  # never more rows than the longest rank
        self.source = source
        self.ends = source.rank_ptr[1:]
        self.ops = np.zeros((n_ranks * self.width, OPS_WIDTH), np.int32)
        self.value = np.zeros(n_ranks * self.width, np.int64)
        self.win_lo = source.rank_ptr[:-1].copy()
        self.win_hi = self.win_lo.copy()
        self.stats = WindowStats()

    def arrays(self, n_calls: int) -> kernel.WindowArrays:
        s = self.source
        return kernel.WindowArrays(
            s.rank_ptr,
            self.ops,
            self.value,
            self.value.view(np.float64),
            s.wait_list,
            int(s.n_requests),
            n_calls,
            int(s.n_marks),
            self.width,
            self.win_lo,
            self.win_hi,
        )

    def refill(self, r: int, start: int) -> None:
        """Window of rank ``r`` := its rows from ``start`` on."""
        stop = min(start + self.width, int(self.ends[r]))
        b = r * self.width
        self.source.read_rows(start, stop, self.ops[b:], self.value[b:])
        self.win_lo[r] = start
        self.win_hi[r] = stop
        self.stats.refills += 1
        self.stats.rows_read += stop - start

    def refill_used(self, pc: npt.NDArray[np.int64]) -> None:
        """Refill every window more than half used, from its rank's ``pc`` (ahead of need:
        fewer loop stops; a rank never reads its rows before ``pc`` again)."""
        used = (pc - self.win_lo) * 2 > self.width
        for r in np.flatnonzero(used & (self.win_hi < self.ends)):
            self.refill(int(r), int(pc[r]))


def simulate_windowed(
    source: ProgramSource,
    params: SimParams | None = None,
    network: NetworkModel = TWO_NODE_SWITCH,
    *,
    window_rows: int = DEFAULT_WINDOW_ROWS,
    node_of_rank: npt.NDArray[np.int64] | None = None,
    compute_scale: float = 1.0,
    on_progress: Callable[[float], None] | None = None,
    stats: WindowStats | None = None,
) -> RunResult:
    """:func:`~mpiuq.simulator.engine.simulate` of the program ``source`` reads, holding
    only ``window_rows`` of its rows per rank (plus its rank pointer and wait list).

    The result is bit-identical to ``simulate`` of the whole program (same events,
    order and floats); a deadlock raises the same :class:`DeadlockError`.

    Parameters
    ----------
    source
        The lowered program (:class:`~mpiuq.simulator.program.source.ProgramSource`).
    params, network, node_of_rank, compute_scale, on_progress
        As :func:`~mpiuq.simulator.engine.simulate`.
    window_rows
        Program rows each rank's window holds (>= 1; 40 bytes each per rank).
    stats
        Filled with the number of loop stops and refills, when given.

    Raises
    ------
    SettingError
        If ``window_rows`` is not a whole number from 1 to :data:`MAX_WINDOW_ROWS`, or
        ``node_of_rank`` does not fit.
    DeadlockError
        If some rank waits forever.
    """
    width = check_window_rows(window_rows)
    if params is None:
        params = SimParams()
    check_compute_scale(compute_scale)
    net = network_arrays(network, source.n_ranks, node_of_rank)
    windows = _Windows(source, width)
    if stats is not None:
        windows.stats = stats
    for r in range(source.n_ranks):
        windows.refill(r, int(source.rank_ptr[r]))
    prog = windows.arrays(max(len(source.call_names), 1))
    state = kernel.state_for(prog, net, wait_rooms(source))
    vector = params_vector(params)
    ctl = np.zeros(kernel.LOOP_CTL, np.int64)
    ctl_t = np.zeros(1, np.float64)
    pc = state.ranks.pc

    def run() -> Any:
        while True:
            r = int(kernel.run_window(prog, vector, net, float(compute_scale), state, ctl, ctl_t))
            if r < 0:
                return kernel.window_outputs(state, ctl)
            windows.stats.stops += 1
            windows.refill(r, int(pc[r]))
            windows.refill_used(pc)

    if on_progress is None:
        outputs = run()
    else:
        starts, n_ops = source.rank_ptr[:-1], max(int(source.n_ops), 1)

        def done() -> float:
            return float((pc - starts).sum()) / n_ops

        outputs = run_watched(run, done, on_progress)
    return run_result(source, outputs)


class FileLowering:
    """A lowered trace in a program file, as :func:`~mpiuq.simulator.replay.run.replay_lowered`
    reads it (a ``StreamedLowering``): the file is the program, read through windows;
    the trace operation of a program row is found by a binary search of the file's row
    map (a few 8-byte reads, for deadlock and unmatched-message reports only).

    Parameters
    ----------
    program_file
        An open :class:`~mpiuq.simulator.program.file.ProgramFile` (kept open by the caller
        while the replay runs).
    """

    def __init__(self, program_file: ProgramFile) -> None:
        self.program: ProgramSource = program_file
        self.file = program_file
        self.collectives = dict(program_file.collectives)
        self.algorithms = {k: list(v) for k, v in program_file.algorithms.items()}
        self.nonblocking_collectives = program_file.nonblocking_collectives

    def trace_op(self, row: int) -> int:
        """The trace operation whose program rows hold ``row`` (last ``i`` with
        ``row_ptr[i] <= row``, as :meth:`~mpiuq.simulator.lowering.lower.Lowered.trace_op`)."""
        lo, hi = 0, self.file.n_trace_ops + 1  # row_ptr[lo] <= row < row_ptr[hi] (hi: +inf)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if int(self.file.read_row_ptr(mid, mid + 1)[0]) <= row:
                lo = mid
            else:
                hi = mid
        return lo
