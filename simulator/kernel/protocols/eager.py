"""The eager-RDMA protocol (medium messages, Fig. 2 of the reference paper).

The sender copies the payload into a pinned buffer at the regime's copy bandwidth (by
default the memory bandwidth) and posts the header (plus the regime's send overhead);
its send completes at once. When the header arrives, the receiver's
progress engine posts an RDMA get (``post_rdma_delay``) whatever the state of
matching; the data then flows sender -> receiver. A matched receive is complete
once the data is in, and its wait copies the data out at the same bandwidth.
"""

from __future__ import annotations

from mpiuq.simulator.kernel.protocols.table import inv_copy, send_overhead_s
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def eager_send_cost(nbytes, k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds of the sender: copy into the pinned buffer, post the header."""
    return nbytes * inv_copy(k, ep) + ep.d_hdr + send_overhead_s(k, ep)


@njit(inline="always", error_model="numpy")
def eager_header(m, t, state, ep):  # type: ignore[no-untyped-def]
    """Header of ``m`` arrived at ``t``: the progress engine posts the get; returns when."""
    msgs = state.messages
    prog_free = state.ranks.prog_free
    dst = msgs.dst[m]
    start = max(t, prog_free[dst])
    prog_free[dst] = start + ep.d_rdma
    msgs.get_start[m] = start
    msgs.get_end[m] = start + ep.d_rdma
    return start + ep.d_rdma


@njit(inline="always", error_model="numpy")
def eager_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Receive ``q`` matched ``m`` at ``t``: waits for the data (done if it is in)."""
    requests = state.requests
    msgs = state.messages
    # the get was posted when the header arrived (Fig. 2); done if the data is in
    requests.copy_s[q] = msgs.nbytes[m] * inv_copy(msgs.regime[m], ep)
    requests.stack1_start[q] = msgs.get_start[m]
    requests.stack1_end[q] = msgs.get_end[m]
    if msgs.data_at[m] <= t:
        requests.ready[q] = t
