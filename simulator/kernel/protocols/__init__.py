"""The point-to-point protocols: one module of small compiled handlers each, one dispatch.

A message's protocol regime is chosen from its size when it is sent (:func:`select`,
a lookup in the regime table: :mod:`.table`) and stored with it; the kernel then calls
these dispatchers at the protocol's steps:

=====================  ==========================================================
step                   what a protocol decides
=====================  ==========================================================
:func:`send_cost`      CPU seconds of the sender before the message leaves
:func:`send_tail`      CPU seconds of the sender's call after it started to leave
:func:`send_refs`      references the protocol holds on the send's state slot
:func:`send_ready`     whether the send request completes when the message leaves
:func:`send_complete`  CPU seconds of the sender's wait completing the send request
:func:`header_bytes`   bytes of the first transfer (header, or header + payload)
:func:`header_delay`   extra latency of the first transfer (the regime's, off the CPUs)
:func:`on_header`      work triggered by the header's arrival, before matching
:func:`on_match`       what the matched receive waits for and its CPU cost at
                       completion (copy-out, receive overhead, the unexpected path
                       of a late receive); when a get is posted
:func:`on_get_arrive`  the get request (or go-ahead) reached the sender: when the
                       data leave
:func:`data_bytes`     bytes of the data transfer
=====================  ==========================================================

plus the rendezvous-only steps (data arrival, acknowledgement) that the kernel
calls from its RDMA events. Protocols: :mod:`.mailbox`, :mod:`.eager`,
:mod:`.rendezvous` (the reference paper's), :mod:`.stream` (TCP-like, without
pinning or RDMA: ``stream`` and ``stream_rendezvous``) and :mod:`.detached` (SMPI's
detached send). The default regime table
(mailbox up to ``small_max_bytes``, eager up to ``eager_max_bytes``, rendezvous,
no per-regime costs) gives the reference model bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import (
    PROTO_DETACHED,
    PROTO_EAGER,
    PROTO_RDV,
    PROTO_SMALL,
    PROTO_STREAM,
    PROTO_STREAM_RDV,
)
from mpiuq.simulator.kernel.protocols.detached import detached_match, detached_send_cost
from mpiuq.simulator.kernel.protocols.eager import eager_header, eager_match, eager_send_cost
from mpiuq.simulator.kernel.protocols.mailbox import mailbox_match, mailbox_send_cost
from mpiuq.simulator.kernel.protocols.rendezvous import (
    rendezvous_data,
    rendezvous_match,
    rendezvous_send_cost,
)
from mpiuq.simulator.kernel.protocols.stream import (
    stream_match,
    stream_overlap,
    stream_rendezvous_go,
    stream_rendezvous_match,
    stream_rendezvous_send_cost,
    stream_send_cost,
    stream_wire_bytes,
)
from mpiuq.simulator.kernel.protocols.table import (
    protocol_of,
    recv_overhead_s,
    regime_of,
    send_complete_s,
    wire_latency_s,
)
from mpiuq.simulator.runtime.jit import njit

__all__ = [
    "HEADER_BYTES",
    "Endpoint",
    "data_bytes",
    "header_bytes",
    "header_delay",
    "keeps_slot_after_match",
    "on_get_arrive",
    "on_header",
    "on_match",
    "protocol_of",
    "rendezvous_data",
    "select",
    "send_complete",
    "send_cost",
    "send_ready",
    "send_refs",
    "send_tail",
]

#: Size of protocol headers, RDMA get requests and acknowledgements on the wire, bytes.
HEADER_BYTES = 64

INF = float("inf")


class Endpoint(NamedTuple):
    """Endpoint (MPI stack) costs under one parameter vector, SI units, and its regimes."""

    inv_mem: float  #: seconds per byte of a memory copy
    d_hdr: float  #: posting a header or acknowledgement, s
    d_rdma: float  #: posting an RDMA get, s
    pin_lat: float  #: pinning latency, s
    pin_page: float  #: pinning per page, s
    page: float  #: page size, bytes
    table: npt.NDArray[np.float64]  #: the regime slots (``R_WIDTH`` per regime, see .table)
    n_regimes: int  #: regimes in ``table``
    scale: float  #: 1, or 0 on a network without MPI overheads (per-regime costs vanish)
    inv_wire: float  #: seconds per byte at the bottleneck bandwidth (pipelined copies' pace)


@njit(inline="always", error_model="numpy")
def select(nbytes, ep):  # type: ignore[no-untyped-def]
    """Regime index of a message of ``nbytes`` (its protocol: :func:`protocol_of`)."""
    return regime_of(nbytes, ep)


@njit(inline="always", error_model="numpy")
def send_cost(proto, k, nbytes, ep):  # type: ignore[no-untyped-def]
    """CPU seconds the sender spends before the message (of regime ``k``) leaves."""
    if proto == PROTO_SMALL:
        return mailbox_send_cost(nbytes, k, ep)
    if proto == PROTO_EAGER:
        return eager_send_cost(nbytes, k, ep)
    if proto == PROTO_RDV:
        return rendezvous_send_cost(nbytes, k, ep)
    if proto == PROTO_STREAM:
        return stream_send_cost(nbytes, k, ep)
    if proto == PROTO_DETACHED:
        return detached_send_cost(nbytes, k, ep)
    return stream_rendezvous_send_cost(nbytes, k, ep)


@njit(inline="always", error_model="numpy")
def send_refs(proto):  # type: ignore[no-untyped-def]
    """References on a send's slot: the wait's and matching's, plus the data's (eager)
    or the acknowledgement's (rendezvous); matching's is kept until the data arrive
    (stream rendezvous, detached)."""
    return 3 if proto == PROTO_EAGER else 2


@njit(inline="always", error_model="numpy")
def send_ready(proto, t):  # type: ignore[no-untyped-def]
    """Completion time of a send request whose message leaves at ``t`` (eager and
    stream sends complete locally; rendezvous sends wait for the acknowledgement or
    the go-ahead)."""
    return INF if proto in (PROTO_RDV, PROTO_STREAM_RDV) else t


@njit(inline="always", error_model="numpy")
def send_tail(proto, k, nbytes, ep):  # type: ignore[no-untyped-def]
    """CPU seconds the sender still spends in its send call after the message started to
    leave (the pipelined copy of a ``stream`` regime; 0 for every other protocol)."""
    if proto == PROTO_STREAM:
        return stream_overlap(nbytes, k, ep)
    return 0.0


@njit(inline="always", error_model="numpy")
def send_complete(k, ep):  # type: ignore[no-untyped-def]
    """CPU seconds the sender's wait spends completing a send request of regime ``k``
    (charged like a receive's copy-out, when the wait consumes the request)."""
    return send_complete_s(k, ep)


@njit(inline="always", error_model="numpy")
def header_delay(k, nbytes, ep):  # type: ignore[no-untyped-def]
    """Seconds between a message of ``nbytes`` leaving its sender and its first transfer
    starting: the regime's wire latency, fixed and per byte (0 by default)."""
    return wire_latency_s(k, nbytes, ep)


@njit(inline="always", error_model="numpy")
def header_bytes(proto, k, nbytes, ep):  # type: ignore[no-untyped-def]
    """Bytes of a message's first transfer: the header, plus the payload for the mailbox
    (and its segments' framing for a stream)."""
    wire = HEADER_BYTES
    if proto == PROTO_SMALL:
        wire += nbytes
    elif proto == PROTO_STREAM:
        wire += stream_wire_bytes(nbytes, k, ep)
    return wire


@njit(inline="always", error_model="numpy")
def data_bytes(m, state, ep):  # type: ignore[no-untyped-def]
    """Bytes of message ``m``'s data transfer (the payload; a stream's with its framing)."""
    msgs = state.messages
    if msgs.proto[m] == PROTO_STREAM_RDV:
        return stream_wire_bytes(msgs.nbytes[m], msgs.regime[m], ep)
    return msgs.nbytes[m]


@njit(inline="always", error_model="numpy")
def on_header(m, t, state, ep):  # type: ignore[no-untyped-def]
    """Work started by the arrival of ``m``'s header at ``t``: when an RDMA get is
    posted (eager), or -1."""
    if state.messages.proto[m] == PROTO_EAGER:
        return eager_header(m, t, state, ep)
    return -1.0


@njit(inline="always", error_model="numpy")
def on_match(m, q, t, late, state, ep):  # type: ignore[no-untyped-def]
    """Match message ``m`` with receive ``q`` (state slots) at ``t``, the later of
    arrival and post; ``late`` when the receive was posted after the header arrived.

    Sets what the receive waits for (eq. 2: the partner is ready at TSend; stack
    intervals on its critical path; the CPU seconds its wait pays at completion: the
    copy-out, the regime's receive overhead and, for a late receive, its
    unexpected-message cost) and records the match by program request id. Returns
    when the receiver's progress engine has pinned and posted the RDMA get
    (rendezvous), or -1.
    """
    msgs = state.messages
    slot_rid = state.slots.rid
    msgs.match[m] = q
    state.slots.matched[slot_rid[m]] = slot_rid[q]
    state.requests.sync[q] = msgs.t_send[m]
    p = msgs.proto[m]
    get_at = -1.0
    if p == PROTO_SMALL:
        mailbox_match(m, q, t, state, ep)
    elif p == PROTO_EAGER:
        eager_match(m, q, t, state, ep)
    elif p == PROTO_RDV:
        get_at = rendezvous_match(m, q, t, state, ep)
    elif p == PROTO_STREAM:
        stream_match(m, q, t, late, state, ep)
    elif p == PROTO_DETACHED:
        get_at = detached_match(m, q, t, state, ep)
    else:
        get_at = stream_rendezvous_match(m, q, t, state, ep)
    state.requests.copy_s[q] += recv_overhead_s(msgs.regime[m], late, ep)
    return get_at


@njit(inline="always", error_model="numpy")
def on_get_arrive(m, t, state, ep):  # type: ignore[no-untyped-def]
    """The get request (RDMA) or go-ahead (stream rendezvous) of ``m`` reached the sender
    at ``t``: returns when the data leave (``t`` for RDMA: the NIC serves the get)."""
    if state.messages.proto[m] == PROTO_STREAM_RDV:
        return stream_rendezvous_go(m, t, state, ep)
    return t


@njit(inline="always", error_model="numpy")
def keeps_slot_after_match(proto):  # type: ignore[no-untyped-def]
    """Whether matching keeps its reference on the send's slot (rendezvous: until the ack;
    stream rendezvous and detached: until the data arrive)."""
    return proto in (PROTO_RDV, PROTO_STREAM_RDV, PROTO_DETACHED)
