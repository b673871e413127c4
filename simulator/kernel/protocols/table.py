"""The regime table as the compiled handlers read it: a message's regime and its costs.

The table is the tail of the parameter vector (``regime<k>_<field>`` slots, see
:mod:`mpiuq.simulator.regimes`), carried by the :class:`~.Endpoint` bundle as a view:
regime ``k``'s field ``R_<F>`` sits at ``k * R_WIDTH + R_<F>``. A message's regime is
the first whose ``max_bytes`` it does not exceed (the last one is unbounded). Costs come
back in SI units and are all zero on a network without MPI overheads (``ep.scale = 0``).
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.codes import (
    R_COPY_BW,
    R_FRAGMENT,
    R_MAX_BYTES,
    R_PROTOCOL,
    R_RECV_OVERHEAD,
    R_SEGMENT_BYTES,
    R_SEGMENT_US,
    R_SEND_COMPLETE,
    R_SEND_OVERHEAD,
    R_UNEXPECTED,
    R_WIDTH,
    R_WIRE_LATENCY,
    R_WIRE_PER_BYTE,
)
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def regime_of(nbytes, ep):  # type: ignore[no-untyped-def]
    """Index of the regime of a message of ``nbytes``."""
    last = ep.n_regimes - 1
    for k in range(last):
        if nbytes <= ep.table[k * R_WIDTH + R_MAX_BYTES]:
            return k
    return last


@njit(inline="always", error_model="numpy")
def protocol_of(k, ep):  # type: ignore[no-untyped-def]
    """``PROTO_*`` code of regime ``k``."""
    return int(ep.table[k * R_WIDTH + R_PROTOCOL])


@njit(inline="always", error_model="numpy")
def send_overhead_s(k, ep):  # type: ignore[no-untyped-def]
    """Sender CPU per message in regime ``k`` beyond the global post delay, s."""
    return ep.table[k * R_WIDTH + R_SEND_OVERHEAD] * 1e-6 * ep.scale


@njit(inline="always", error_model="numpy")
def send_complete_s(k, ep):  # type: ignore[no-untyped-def]
    """Sender CPU to complete a send request of regime ``k`` in its wait, s."""
    return ep.table[k * R_WIDTH + R_SEND_COMPLETE] * 1e-6 * ep.scale


@njit(inline="always", error_model="numpy")
def recv_overhead_s(k, late, ep):  # type: ignore[no-untyped-def]
    """Receiver CPU per message of regime ``k`` when its receive completes, s: matching
    and completion, plus the unexpected-message path if the message arrived before the
    receive was posted (``late``)."""
    base = k * R_WIDTH
    cost = ep.table[base + R_RECV_OVERHEAD]
    if late:
        cost += ep.table[base + R_UNEXPECTED]
    return cost * 1e-6 * ep.scale


@njit(inline="always", error_model="numpy")
def inv_copy(k, ep):  # type: ignore[no-untyped-def]
    """Seconds per byte of regime ``k``'s copies (its own bandwidth, or the memory's)."""
    bw = ep.table[k * R_WIDTH + R_COPY_BW]
    if bw > 0.0:
        return ep.scale / (bw * 1e9)
    return ep.inv_mem


@njit(inline="always", error_model="numpy")
def segments(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """Segments of a stream message of ``nbytes`` in regime ``k`` (a whole number >= 1)."""
    n = int(np.ceil(nbytes / ep.table[k * R_WIDTH + R_SEGMENT_BYTES]))
    return n if n > 1 else 1


@njit(inline="always", error_model="numpy")
def segment_s(k, ep):  # type: ignore[no-untyped-def]
    """Host cost per segment and side in regime ``k``, s."""
    return ep.table[k * R_WIDTH + R_SEGMENT_US] * 1e-6 * ep.scale


@njit(inline="always", error_model="numpy")
def fragment_of(k, ep):  # type: ignore[no-untyped-def]
    """Fragment of regime ``k``'s pipelined copies, bytes (0: not pipelined)."""
    return ep.table[k * R_WIDTH + R_FRAGMENT]


@njit(inline="always", error_model="numpy")
def wire_latency_s(k, nbytes, ep):  # type: ignore[no-untyped-def]
    """Extra one-way latency of the first transfer of a message of ``nbytes`` in regime
    ``k``, off every CPU, s (its fixed and per-byte parts)."""
    base = k * R_WIDTH
    return (
        ep.table[base + R_WIRE_LATENCY] * 1e-6 + nbytes * ep.table[base + R_WIRE_PER_BYTE] * 1e-9
    ) * ep.scale
