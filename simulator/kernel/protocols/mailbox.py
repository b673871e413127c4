"""The mailbox protocol (small messages): the payload travels with the header.

The sender posts the header with the data (``post_header_delay``) and its send
completes at once; at the receiver the message waits in the mailbox until matched
and is copied out at memory bandwidth when the receive's wait consumes it.
"""

from __future__ import annotations

from mpiuq.simulator._jit import njit


@njit(inline="always", error_model="numpy")
def mailbox_send_cost(nbytes, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender: posting the header."""
    return ep.d_hdr


@njit(inline="always", error_model="numpy")
def mailbox_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched message ``m`` at ``t``: complete, with the copy-out pending."""
    requests = state.requests
    requests.copy_s[q] = state.messages.nbytes[m] * ep.inv_mem
    requests.ready[q] = t
