"""The mailbox protocol (small messages): the payload travels with the header.

The sender posts the header with the data (``post_header_delay``, plus the regime's
send overhead) and its send completes at once; at the receiver the message waits in the
mailbox until matched and is copied out at the regime's copy bandwidth (by default the
memory bandwidth) when the receive's wait consumes it.
"""

from __future__ import annotations

from mpiuq.simulator.kernel.protocols.table import inv_copy, send_overhead_s
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def mailbox_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender: posting the header (plus regime ``k``'s send overhead)."""
    return ep.d_hdr + send_overhead_s(k, ep)


@njit(inline="always", error_model="numpy")
def mailbox_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched message ``m`` at ``t``: complete, with the copy-out pending."""
    requests = state.requests
    msgs = state.messages
    requests.copy_s[q] = msgs.nbytes[m] * inv_copy(msgs.regime[m], ep)
    requests.ready[q] = t
