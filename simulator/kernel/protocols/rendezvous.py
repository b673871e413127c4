"""The rendezvous protocol (large messages, zero copy, Fig. 3 of the reference paper).

The sender pins its buffer and posts the header (plus the regime's send overhead): an
``MPI_Isend`` costs that much (a registration cache makes the pinning terms small).
Once matched, the receiver's progress engine pins the receive buffer and posts an RDMA
get; the data flows sender -> receiver straight into the user buffer, and the receiver's
progress engine acknowledges it (``post_header_delay``). The send completes when the
acknowledgement arrives, after the data have left; its sync boundary is the receive's
post time (eq. 1). The receive completes when the data are in (its wait then pays the
regime's receive overhead: the FIN's processing).
"""

from __future__ import annotations

import numpy as np

from mpiuq.simulator.kernel.protocols.table import send_overhead_s
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def rendezvous_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender: pin the buffer, post the header (plus regime ``k``'s
    send overhead)."""
    pages = np.ceil(nbytes / ep.page)
    return ep.pin_lat + pages * ep.pin_page + ep.d_hdr + send_overhead_s(k, ep)


@njit(inline="always", error_model="numpy")
def rendezvous_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched ``m`` at ``t``: pin and post the get; returns when posted.

    Both requests see the pin-and-post interval as MPI stack; the sender's sync
    boundary is the receive's post time.
    """
    msgs = state.messages
    start = max(t, state.ranks.prog_free[msgs.dst[m]])
    end = start + ep.pin_lat + np.ceil(msgs.nbytes[m] / ep.page) * ep.pin_page + ep.d_rdma
    return handshake_step(m, q, start, end, state)


@njit(inline="always", error_model="numpy")
def handshake_step(m, q, start, end, state):  # type: ignore[no-untyped-def]
    """The receiver's progress engine answers ``m``'s header (matched by ``q``) from
    ``start`` to ``end``: both requests see the step as MPI stack and the sender's sync
    boundary is the receive's post time (eq. 1). Returns ``end``."""
    requests = state.requests
    state.ranks.prog_free[state.messages.dst[m]] = end
    requests.stack1_start[q] = start
    requests.stack1_end[q] = end
    requests.stack1_start[m] = start
    requests.stack1_end[m] = end
    requests.sync[m] = requests.post_s[q]
    return end


@njit(inline="always", error_model="numpy")
def rendezvous_data(m, t, state, ep):  # type: ignore[no-untyped-def]
    """Data of ``m`` arrived at ``t``: the progress engine posts the ack; returns when."""
    requests = state.requests
    prog_free = state.ranks.prog_free
    dst = state.messages.dst[m]
    start = max(t, prog_free[dst])
    prog_free[dst] = start + ep.d_hdr
    requests.stack2_start[m] = start
    requests.stack2_end[m] = start + ep.d_hdr
    return start + ep.d_hdr
