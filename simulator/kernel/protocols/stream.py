"""TCP-like stream protocols: no pinning and no RDMA (Open MPI's TCP BTL, ob1 over TCP).

``stream`` (eager over a socket): the sender writes the message into the socket -- its
per-message post (``post_header_delay``), the regime's send overhead, a copy at the regime's
copy bandwidth and a host cost per segment of ``segment_bytes`` (the TCP maximum segment
size) -- and its send completes when the message leaves. The message crosses the wire
with its header and the framing of every segment
(:data:`~mpiuq.simulator.regimes.SEGMENT_WIRE_BYTES`). The receiver pays the same post,
copy and per-segment costs when its wait consumes the message (progress happens inside
MPI calls).

``stream_rendezvous`` (a handshake first): the sender posts a header (post + send overhead);
once matched, the receiver posts a go-ahead (``post_header_delay``) that crosses back; on
its arrival the sender writes the payload into the socket (post, copy, segments; its send
completes then, event ``EV_STREAM_OUT``), the data cross with their framing, and the
receiver's wait reads them (post, copy, segments).
"""

from __future__ import annotations

from mpiuq.simulator.kernel.protocols.rendezvous import handshake_step
from mpiuq.simulator.kernel.protocols.table import (
    fragment_of,
    inv_copy,
    segment_s,
    segments,
    send_overhead_s,
)
from mpiuq.simulator.regimes import SEGMENT_WIRE_BYTES
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def stream_side_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of one side writing or reading a message of ``nbytes`` (regime ``k``)."""
    return ep.d_hdr + nbytes * inv_copy(k, ep) + segments(nbytes, k, ep) * segment_s(k, ep)


@njit(inline="always", error_model="numpy")
def stream_wire_bytes(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """Bytes on the wire of a payload of ``nbytes``: the payload and its segments' framing."""
    return nbytes + segments(nbytes, k, ep) * SEGMENT_WIRE_BYTES


@njit(inline="always", error_model="numpy")
def stream_overlap(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """Seconds of the sender's copy that run after the message has started to leave, in a
    pipelined regime (``fragment_bytes`` F > 0, n > F): ``(n - F) min(c, G)`` with ``c``
    the copy's and ``G`` the wire's seconds per byte (the wire never overtakes the copy);
    0 otherwise."""
    f = fragment_of(k, ep)
    if f <= 0.0 or nbytes <= f:
        return 0.0
    c = inv_copy(k, ep)
    g = ep.inv_wire
    return (nbytes - f) * (c if c < g else g)


@njit(inline="always", error_model="numpy")
def stream_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender of a ``stream`` message before it leaves: writing it into
    the socket (pipelined: up to its first fragment; the rest is :func:`stream_overlap`)."""
    return stream_side_cost(nbytes, k, ep) + send_overhead_s(k, ep) - stream_overlap(nbytes, k, ep)


@njit(inline="always", error_model="numpy")
def stream_match(m, q, t, late, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched ``stream`` message ``m`` at ``t``: complete; its wait reads it
    (pipelined and posted before the message arrived: only the last fragment's copy is
    left)."""
    msgs = state.messages
    requests = state.requests
    n = msgs.nbytes[m]
    k = msgs.regime[m]
    cost = stream_side_cost(n, k, ep)
    f = fragment_of(k, ep)
    if not late and f > 0.0 and n > f:
        cost -= (n - f) * inv_copy(k, ep)  # copied out while the fragments arrived
    requests.copy_s[q] = cost
    requests.ready[q] = t


@njit(inline="always", error_model="numpy")
def stream_rendezvous_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender before the handshake's header leaves."""
    return ep.d_hdr + send_overhead_s(k, ep)


@njit(inline="always", error_model="numpy")
def stream_rendezvous_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched ``m`` at ``t``: the receiver posts the go-ahead; returns when.

    Both requests see the posting as MPI stack; the sender's sync boundary is the
    receive's post time (eq. 1); the receive's wait will read the data.
    """
    msgs = state.messages
    start = max(t, state.ranks.prog_free[msgs.dst[m]])
    state.requests.copy_s[q] = stream_side_cost(msgs.nbytes[m], msgs.regime[m], ep)
    return handshake_step(m, q, start, start + ep.d_hdr, state)


@njit(inline="always", error_model="numpy")
def stream_rendezvous_go(m, t, state, ep):  # type: ignore[no-untyped-def]
    """The go-ahead of ``m`` reached its sender at ``t``: the sender writes the payload into
    the socket; returns when it is written (the data leave and the send completes)."""
    requests = state.requests
    msgs = state.messages
    prog_free = state.ranks.prog_free
    src = msgs.src[m]
    start = max(t, prog_free[src])
    end = start + stream_side_cost(msgs.nbytes[m], msgs.regime[m], ep)
    prog_free[src] = end
    requests.stack2_start[m] = start
    requests.stack2_end[m] = end
    return end
