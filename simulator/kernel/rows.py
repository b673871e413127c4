"""Where a rank's program rows are: the whole program, or a window of it per rank.

The kernel reads operations through the functions here, which numba resolves by the
type of the program bundle when it compiles: for :class:`ProgramArrays` (the whole
program in memory) they are the identity and compile to exactly the code of global
row indexing; for :class:`WindowArrays` each rank sees rows ``[win_lo[r], win_hi[r])``
of its stream in its own ``width`` rows of a buffer, which the caller refills when the
event loop asks (:mod:`.loop`).

The overloads are plain calls that LLVM inlines (they are a few instructions); numba's
own typed inlining (``inline="always"`` on the overload) of them miscompiled the event
loop (numba 0.68: out-of-bounds reads, a crash).

Program row indices (``pc``, the creating operation of a request, what errors name)
stay global in both; only the physical row read differs. A posted receive's
envelope is read by the matching of later arrivals, when its row may have left the
window: a windowed run keeps it in the receive's slot of the message arrays
(``src``, ``tag``, ``comm``), which a receive slot does not otherwise use.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import COL_COMM, COL_PEER, COL_TAG
from mpiuq.simulator.runtime.jit import overload


class ProgramArrays(NamedTuple):
    """A lowered program as the kernel reads it (see :class:`~mpiuq.simulator.program.table.Program`)."""

    rank_ptr: npt.NDArray[np.int64]
    ops: npt.NDArray[np.int32]
    nbytes: npt.NDArray[np.int64]
    seconds: npt.NDArray[np.float64]
    wait_list: npt.NDArray[np.integer[Any]]  #: int64 or int32
    n_requests: int
    n_calls: int  #: rows of the per-call split (at least 1)
    n_marks: int


class WindowArrays(NamedTuple):
    """A lowered program seen through one window of ``width`` rows per rank.

    Rank ``r``'s global rows ``[win_lo[r], win_hi[r])`` are the buffer's rows
    ``r * width + (i - win_lo[r])``; ``rank_ptr`` is the true extent of each rank's
    stream, ``wait_list`` the whole (global) wait list. ``nbytes`` and ``seconds`` may
    be two views of one 8-byte column, as in :class:`~mpiuq.simulator.program.table.Program`.
    """

    rank_ptr: npt.NDArray[np.int64]
    ops: npt.NDArray[np.int32]  #: (n_ranks * width, OPS_WIDTH)
    nbytes: npt.NDArray[np.int64]  #: (n_ranks * width,)
    seconds: npt.NDArray[np.float64]  #: (n_ranks * width,)
    wait_list: npt.NDArray[np.integer[Any]]  #: int64 or int32
    n_requests: int
    n_calls: int
    n_marks: int
    width: int  #: rows per rank's window (>= 1)
    win_lo: npt.NDArray[np.int64]  #: (n_ranks,) global row of each window's first row
    win_hi: npt.NDArray[np.int64]  #: (n_ranks,) one past its last row


def _windowed(prog: Any) -> bool:
    """Whether the numba type ``prog`` is that of a :class:`WindowArrays`."""
    from numba.core import types

    return (
        isinstance(prog, types.BaseNamedTuple)
        and getattr(prog, "instance_class", None) is WindowArrays
    )


# The Python bodies are what the compiled versions (the overloads below) do; they run
# only with numba's JIT disabled.


def row_of(prog: Any, r: int, i: int) -> int:
    """Buffer row of rank ``r``'s global row ``i``."""
    if isinstance(prog, WindowArrays):
        return int(r * prog.width + (i - prog.win_lo[r]))
    return i


def window_end(prog: Any, r: int) -> int:
    """One past the last global row of rank ``r`` readable now."""
    if isinstance(prog, WindowArrays):
        return int(prog.win_hi[r])
    return int(prog.rank_ptr[r + 1])


def keep_envelope(prog: Any, state: Any, q: int, j: int) -> None:
    """Keep the envelope of the receive posted as slot ``q`` from buffer row ``j``, where
    :func:`posted_envelope` finds it."""
    if isinstance(prog, WindowArrays):
        msgs = state.messages
        msgs.src[q] = prog.ops[j, COL_PEER]
        msgs.tag[q] = prog.ops[j, COL_TAG]
        msgs.comm[q] = prog.ops[j, COL_COMM]


def posted_envelope(prog: Any, state: Any, q: int) -> tuple[int, int, int]:
    """``(source, tag, comm)`` of the receive posted as slot ``q``."""
    if isinstance(prog, WindowArrays):
        msgs = state.messages
        return msgs.src[q], msgs.tag[q], msgs.comm[q]
    j = state.requests.op[q]
    return prog.ops[j, COL_PEER], prog.ops[j, COL_TAG], prog.ops[j, COL_COMM]


def is_windowed(prog: Any) -> bool:
    """Whether ``prog`` is a :class:`WindowArrays` (a constant in compiled code)."""
    return isinstance(prog, WindowArrays)


def _register_overloads() -> None:
    """Register the compiled versions of the functions above."""

    @overload(row_of)
    def _row_of(prog, r, i):  # type: ignore[no-untyped-def]
        if _windowed(prog):
            return lambda prog, r, i: r * prog.width + (i - prog.win_lo[r])
        return lambda prog, r, i: i

    @overload(window_end)
    def _window_end(prog, r):  # type: ignore[no-untyped-def]
        if _windowed(prog):
            return lambda prog, r: prog.win_hi[r]
        return lambda prog, r: prog.rank_ptr[r + 1]

    @overload(keep_envelope)
    def _keep_envelope(prog, state, q, j):  # type: ignore[no-untyped-def]
        if _windowed(prog):

            def keep(prog, state, q, j):  # type: ignore[no-untyped-def]
                msgs = state.messages
                msgs.src[q] = prog.ops[j, COL_PEER]
                msgs.tag[q] = prog.ops[j, COL_TAG]
                msgs.comm[q] = prog.ops[j, COL_COMM]

            return keep
        return lambda prog, state, q, j: None

    @overload(posted_envelope)
    def _posted_envelope(prog, state, q):  # type: ignore[no-untyped-def]
        if _windowed(prog):

            def read(prog, state, q):  # type: ignore[no-untyped-def]
                msgs = state.messages
                return msgs.src[q], msgs.tag[q], msgs.comm[q]

            return read

        def read_row(prog, state, q):  # type: ignore[no-untyped-def]
            j = state.requests.op[q]
            ops = prog.ops
            return ops[j, COL_PEER], ops[j, COL_TAG], ops[j, COL_COMM]

        return read_row

    @overload(is_windowed)
    def _is_windowed(prog):  # type: ignore[no-untyped-def]
        if _windowed(prog):
            return lambda prog: True
        return lambda prog: False


_register_overloads()
