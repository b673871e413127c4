"""The detached protocol (SMPI's detached send, SimGrid 3.32 ``smpi_request.cpp``).

Below ``smpi/send-is-detached-thresh`` SMPI copies the payload into a buffer of its own
and returns: the send completes when posted. The message waits in the receiver's
mailbox, and its payload moves in one transfer only once a receive matches it (SMPI's
default ``smpi/async-small-thresh`` of 0: no eager transfer). Here the sender copies the
payload at the regime's copy bandwidth and posts a header (plus the regime's send
overhead); once matched, the receiver's progress engine posts a go-ahead
(``post_header_delay``) that crosses back; on its arrival the payload leaves, and the
receiver copies it out at its wait. The other endpoint costs are the shared hooks'
(send completion, receive overhead, unexpected-message cost, wire latency), as for
every protocol. With SimGrid-like settings (no endpoint costs, control messages free)
the payload leaves at the match, as in SMPI.
"""

from __future__ import annotations

from mpiuq.simulator.kernel.protocols.table import inv_copy, send_overhead_s
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def detached_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender: copy the payload aside, post the header."""
    return nbytes * inv_copy(k, ep) + ep.d_hdr + send_overhead_s(k, ep)


@njit(inline="always", error_model="numpy")
def detached_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched ``m`` at ``t``: the progress engine posts the go-ahead;
    returns when. The receive's wait copies the payload out."""
    msgs = state.messages
    requests = state.requests
    dst = msgs.dst[m]
    prog_free = state.ranks.prog_free
    start = max(t, prog_free[dst])
    end = start + ep.d_hdr
    prog_free[dst] = end
    requests.copy_s[q] = msgs.nbytes[m] * inv_copy(msgs.regime[m], ep)
    requests.stack1_start[q] = start
    requests.stack1_end[q] = end
    return end
