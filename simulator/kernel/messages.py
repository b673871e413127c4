"""Protocol events of a message at its endpoints: header, data and acknowledgement arrival,
and the stream rendezvous' payload leaving its sender.

The per-protocol decisions are the handlers of :mod:`mpiuq.simulator.kernel.protocols`;
here the kernel matches, wakes blocked ranks and schedules the follow-up events.
"""

from __future__ import annotations

from mpiuq.simulator.codes import (
    EV_ACK_ISSUE,
    EV_GET_ISSUE,
    EV_RANK,
    EV_STREAM_OUT,
    N_EV,
    PROTO_DETACHED,
    PROTO_EAGER,
    PROTO_RDV,
    PROTO_STREAM_RDV,
    STAGE_DATA,
)
from mpiuq.simulator.kernel.heap import push
from mpiuq.simulator.kernel.matching import enqueue, find_posted, release, unlink
from mpiuq.simulator.kernel.protocols import (
    keeps_slot_after_match,
    on_get_arrive,
    on_header,
    on_match,
    rendezvous_data,
)
from mpiuq.simulator.kernel.transfers import send_stage
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def wake(r, t, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Resume rank ``r`` at ``t`` if it is blocked in a wait."""
    blocked = state.ranks.blocked
    if blocked[r]:
        blocked[r] = False
        hn, top_live = push(state.heap, hn, top_live, t, seq, r * N_EV + EV_RANK)
        seq += 1
    return hn, top_live, seq


@njit(inline="always", error_model="numpy")
def matched(m, q, t, late, state, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Message ``m`` and receive ``q`` match at ``t``: the protocol's match step (``late``:
    the receive was posted after the header arrived, an unexpected message)."""
    get_at = on_match(m, q, t, late, state, ep)
    if get_at >= 0.0:
        hn, top_live = push(state.heap, hn, top_live, get_at, seq, m * N_EV + EV_GET_ISSUE)
        seq += 1
    if not keeps_slot_after_match(state.messages.proto[m]):
        release(state.slots, m)  # matched: the protocol's reference
    return hn, top_live, seq


@njit(inline="always", error_model="numpy")
def header_arrived(m, t, prog, state, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Header (or mailbox message) ``m`` reached its receiver at ``t``."""
    dst = state.messages.dst[m]
    get_at = on_header(m, t, state, ep)
    if get_at >= 0.0:
        # the receiver fetches eager data as soon as the header is in (Fig. 2)
        hn, top_live = push(state.heap, hn, top_live, get_at, seq, m * N_EV + EV_GET_ISSUE)
        seq += 1
    # search the posted-receive queue in posting order
    q, prev = find_posted(state, prog, dst, m)
    queues = state.queues
    if q < 0:
        enqueue(queues.unexpected_head, queues.unexpected_tail, queues.next, dst, m)
    else:
        unlink(queues.posted_head, queues.posted_tail, queues.next, dst, prev, q)
        hn, top_live, seq = matched(m, q, t, False, state, ep, hn, top_live, seq)
        if state.requests.ready[q] <= t:
            hn, top_live, seq = wake(dst, t, state, hn, top_live, seq)
    return hn, top_live, seq


@njit(inline="always", error_model="numpy")
def data_arrived(m, t, state, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """RDMA data of ``m`` reached its receiver at ``t``."""
    msgs = state.messages
    msgs.data_at[m] = t
    q = msgs.match[m]
    dst = msgs.dst[m]
    if msgs.proto[m] == PROTO_RDV:
        # zero copy: the receive is complete; the progress engine acknowledges
        ack_at = rendezvous_data(m, t, state, ep)
        hn, top_live = push(state.heap, hn, top_live, ack_at, seq, m * N_EV + EV_ACK_ISSUE)
        seq += 1
    if q >= 0:
        state.requests.ready[q] = t
        hn, top_live, seq = wake(dst, t, state, hn, top_live, seq)
    if msgs.proto[m] in (PROTO_EAGER, PROTO_STREAM_RDV, PROTO_DETACHED):
        release(state.slots, m)  # the data's (eager) or matching's (stream rendezvous, detached)
    return hn, top_live, seq


@njit(inline="always", error_model="numpy")
def get_arrived(m, t, net, state, rates, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """The get request (RDMA) or go-ahead (stream rendezvous) of ``m`` reached its sender
    at ``t``: the data leave now (the NIC serves an RDMA get), or once the sender has
    written them into the socket."""
    out = on_get_arrive(m, t, state, ep)
    if state.messages.proto[m] == PROTO_STREAM_RDV:
        hn, top_live = push(state.heap, hn, top_live, out, seq, m * N_EV + EV_STREAM_OUT)
        return hn, top_live, seq + 1
    return send_stage(m, STAGE_DATA, t, net, state, rates, ep, hn, top_live, seq)


@njit(inline="always", error_model="numpy")
def stream_out(m, t, net, state, rates, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """The sender has written stream-rendezvous message ``m`` into the socket at ``t``: its
    send completes and the data leave."""
    state.requests.ready[m] = t
    hn, top_live, seq = wake(state.messages.src[m], t, state, hn, top_live, seq)
    return send_stage(m, STAGE_DATA, t, net, state, rates, ep, hn, top_live, seq)


@njit(inline="always", error_model="numpy")
def ack_arrived(m, t, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Rendezvous acknowledgement of ``m`` reached its sender at ``t``: the send completes."""
    state.requests.ready[m] = t
    src = state.messages.src[m]
    release(state.slots, m)  # the acknowledgement's reference
    return wake(src, t, state, hn, top_live, seq)
