"""What a lowering takes and gives: :class:`LoweringOptions` and :class:`Lowered`.

Beside them, the engine communicator of collective traffic (:data:`COLL_COMM_BASE`)
and the error of traces that cannot be replayed as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.collectives import validate_algorithms
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.program.table import Program

__all__ = ["COLL_COMM_BASE", "Lowered", "LoweringOptions", "UnreplayableTraceError"]

#: Engine communicator id of collective traffic = COLL_COMM_BASE + trace communicator id.
COLL_COMM_BASE = 2**20

IntArray = npt.NDArray[np.int64]


class UnreplayableTraceError(SettingError):
    """The trace cannot be replayed as a whole (e.g. peers a partial trace cannot name)."""


@dataclass(frozen=True, slots=True)
class LoweringOptions:
    """How a trace is lowered.

    Parameters
    ----------
    reduce_rate_Bps
        Rate at which reductions combine received data, bytes per second (the
        replay uses the memory bandwidth ``memory_bw_GBps`` by default); ``inf``: free
        reductions (SimGrid's SMPI charges nothing for the reduction operator).
    compute_scale
        Factor applied to the trace's compute durations (the reference study used 0.1).
    algorithms
        ``{collective: algorithm}`` overriding :func:`~mpiuq.simulator.collectives.default_algorithm`.
    """

    reduce_rate_Bps: float = 10e9
    compute_scale: float = 1.0
    algorithms: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        rate = self.reduce_rate_Bps
        if not (rate > 0 and not np.isnan(rate)):
            raise SettingError(
                f"reduce_rate_Bps={rate!r} is invalid: expected a rate > 0 (inf: free reductions)"
            )
        scale = self.compute_scale
        if not (np.isfinite(scale) and scale >= 0):
            raise SettingError(f"compute_scale={scale!r} is invalid: expected a finite number >= 0")
        object.__setattr__(
            self, "algorithms", tuple(sorted(validate_algorithms(dict(self.algorithms)).items()))
        )


@dataclass(frozen=True)
class Lowered:
    """A lowered trace.

    Attributes
    ----------
    program
        The engine program (validated).
    row_ptr
        ``(trace.n_ops + 1,)``: the program rows of trace operation ``i`` are
        ``row_ptr[i]:row_ptr[i + 1]`` (see :meth:`trace_op`).
    collectives
        Number of collective calls expanded per collective name (summed over ranks).
    algorithms
        Algorithms used per collective name.
    nonblocking_collectives
        Number of nonblocking collective calls executed at the call (their waits are no-ops).
    reduce_rows, reduce_bytes
        Program rows of the reductions' combine steps and the bytes each combines: their
        ``seconds`` are ``reduce_bytes / reduce_rate_Bps``, so a replay at another
        reduction rate can rewrite them instead of lowering again.
    """

    program: Program
    row_ptr: IntArray
    collectives: dict[str, int] = field(default_factory=dict)
    algorithms: dict[str, list[str]] = field(default_factory=dict)
    nonblocking_collectives: int = 0
    reduce_rows: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    reduce_bytes: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def trace_op(self, row: int) -> int:
        """Index of the trace operation that program row ``row`` comes from."""
        return int(np.searchsorted(self.row_ptr, row, side="right")) - 1
