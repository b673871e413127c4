"""The point-to-point protocols: one module of small compiled handlers each, one dispatch.

A message's protocol is chosen from its size when it is sent (:func:`select`) and
stored with it; the kernel then calls these dispatchers at the protocol's steps:

=====================  ==========================================================
step                   what a protocol decides
=====================  ==========================================================
:func:`send_cost`      CPU seconds of the sender before the message leaves
:func:`send_refs`      references the protocol holds on the send's state slot
:func:`send_ready`     whether the send request completes when the message leaves
:func:`header_bytes`   bytes of the first transfer (header, or header + payload)
:func:`on_header`      work triggered by the header's arrival, before matching
:func:`on_match`       what the matched receive waits for; when a get is posted
=====================  ==========================================================

plus the rendezvous-only steps (data arrival, acknowledgement) that the kernel
calls from its RDMA events. The thresholds are the ``small_max_bytes`` and
``eager_max_bytes`` parameters today; protocol regimes as data (an ordered table
of size thresholds, each with a protocol and its own costs) replace :func:`select`
and the :class:`Endpoint` scalars by a lookup, without touching the handlers'
callers.
"""

from __future__ import annotations

from typing import NamedTuple

from mpiuq.simulator._jit import njit
from mpiuq.simulator.codes import PROTO_EAGER, PROTO_RDV, PROTO_SMALL
from mpiuq.simulator.kernel.protocols.eager import eager_header, eager_match, eager_send_cost
from mpiuq.simulator.kernel.protocols.mailbox import mailbox_match, mailbox_send_cost
from mpiuq.simulator.kernel.protocols.rendezvous import (
    rendezvous_data,
    rendezvous_match,
    rendezvous_send_cost,
)

__all__ = [
    "HEADER_BYTES",
    "Endpoint",
    "header_bytes",
    "keeps_slot_after_match",
    "on_header",
    "on_match",
    "rendezvous_data",
    "select",
    "send_cost",
    "send_ready",
    "send_refs",
]

#: Size of protocol headers, RDMA get requests and acknowledgements on the wire, bytes.
HEADER_BYTES = 64

INF = float("inf")


class Endpoint(NamedTuple):
    """Endpoint (MPI stack) costs under one parameter vector, SI units."""

    inv_mem: float  #: seconds per byte of a memory copy
    d_hdr: float  #: posting a header or acknowledgement, s
    d_rdma: float  #: posting an RDMA get, s
    pin_lat: float  #: pinning latency, s
    pin_page: float  #: pinning per page, s
    page: float  #: page size, bytes
    small_max: float  #: largest mailbox message, bytes
    eager_max: float  #: largest eager message, bytes


@njit(inline="always", error_model="numpy")
def select(nbytes, ep):  # type: ignore[no-untyped-def]
    """Protocol of a message of ``nbytes``."""
    if nbytes <= ep.small_max:
        return PROTO_SMALL
    if nbytes <= ep.eager_max:
        return PROTO_EAGER
    return PROTO_RDV


@njit(inline="always", error_model="numpy")
def send_cost(proto, nbytes, ep):  # type: ignore[no-untyped-def]
    """CPU seconds the sender spends before the message leaves."""
    if proto == PROTO_SMALL:
        return mailbox_send_cost(nbytes, ep)
    if proto == PROTO_EAGER:
        return eager_send_cost(nbytes, ep)
    return rendezvous_send_cost(nbytes, ep)


@njit(inline="always", error_model="numpy")
def send_refs(proto):  # type: ignore[no-untyped-def]
    """References on a send's slot: the wait's and matching's, plus the data's (eager)
    or the acknowledgement's (rendezvous)."""
    return 3 if proto == PROTO_EAGER else 2


@njit(inline="always", error_model="numpy")
def send_ready(proto, t):  # type: ignore[no-untyped-def]
    """Completion time of a send request whose message leaves at ``t`` (eager sends
    complete locally; rendezvous waits for the acknowledgement)."""
    return t if proto != PROTO_RDV else INF


@njit(inline="always", error_model="numpy")
def header_bytes(proto, nbytes):  # type: ignore[no-untyped-def]
    """Bytes of a message's first transfer: the header, plus the payload for the mailbox."""
    wire = HEADER_BYTES
    if proto == PROTO_SMALL:
        wire += nbytes
    return wire


@njit(inline="always", error_model="numpy")
def on_header(m, t, state, ep):  # type: ignore[no-untyped-def]
    """Work started by the arrival of ``m``'s header at ``t``: when an RDMA get is
    posted (eager), or -1."""
    if state.messages.proto[m] == PROTO_EAGER:
        return eager_header(m, t, state, ep)
    return -1.0


@njit(inline="always", error_model="numpy")
def on_match(m, q, t, state, ep):  # type: ignore[no-untyped-def]
    """Match message ``m`` with receive ``q`` (state slots) at ``t``, the later of
    arrival and post.

    Sets what the receive waits for (eq. 2: the partner is ready at TSend; stack
    intervals on its critical path; the copy-out) and records the match by program
    request id. Returns when the receiver's progress engine has pinned and posted
    the RDMA get (rendezvous), or -1.
    """
    msgs = state.messages
    slot_rid = state.slots.rid
    msgs.match[m] = q
    state.slots.matched[slot_rid[m]] = slot_rid[q]
    state.requests.sync[q] = msgs.t_send[m]
    p = msgs.proto[m]
    if p == PROTO_SMALL:
        mailbox_match(m, q, t, state, ep)
        return -1.0
    if p == PROTO_EAGER:
        eager_match(m, q, t, state, ep)
        return -1.0
    return rendezvous_match(m, q, t, state, ep)


@njit(inline="always", error_model="numpy")
def keeps_slot_after_match(proto):  # type: ignore[no-untyped-def]
    """Whether matching keeps its reference on the send's slot (rendezvous: until the ack)."""
    return proto == PROTO_RDV
