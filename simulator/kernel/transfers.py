"""Transfers of a message's stages through the network units, as heap events.

Every message moves at most ``N_STAGES`` transfers (header, get request, data,
acknowledgement); transfer ``stage`` of message ``m`` is flow ``m * N_STAGES + stage``.
A transfer becomes the event that continues the protocol when it arrives, or, on
the packet network, the first packet injection of its flow, or, on the flow network,
the event of its flow paying its latency (:mod:`.flows`). With ``control_free`` a
control message (a header without payload, get request, go-ahead, acknowledgement)
arrives when sent.
"""

from __future__ import annotations

from mpiuq.simulator.codes import (
    EV_ACK,
    EV_DATA,
    EV_FLOW,
    EV_GET_ARRIVE,
    EV_HDR,
    EV_PKT,
    N_EV,
    N_STAGES,
    NET_FLOW,
    PROTO_SMALL,
    PROTO_STREAM,
    STAGE_DATA,
    STAGE_GET,
    STAGE_HDR,
)
from mpiuq.simulator.kernel.heap import push
from mpiuq.simulator.kernel.protocols import HEADER_BYTES, data_bytes
from mpiuq.simulator.networks._dispatch import start_transfer
from mpiuq.simulator.networks.flow_start import start_flow
from mpiuq.simulator.networks.packet import inject_packet
from mpiuq.simulator.runtime.jit import njit


@njit(inline="always", error_model="numpy")
def stage_event(stage):  # type: ignore[no-untyped-def]
    """Event that continues a message when the transfer of ``stage`` has arrived."""
    if stage == STAGE_HDR:
        return EV_HDR
    if stage == STAGE_GET:
        return EV_GET_ARRIVE
    if stage == STAGE_DATA:
        return EV_DATA
    return EV_ACK


@njit(inline="always", error_model="numpy")
def is_control(stage, proto):  # type: ignore[no-untyped-def]
    """Whether a message's transfer of ``stage`` carries no payload (the mailbox's and the
    stream's headers carry theirs)."""
    if stage == STAGE_DATA:
        return False
    return stage != STAGE_HDR or (proto != PROTO_SMALL and proto != PROTO_STREAM)


@njit(inline="always", error_model="numpy")
def transfer_event(t, src, dst, nbytes, m, stage, net, state, rates, seq):  # type: ignore[no-untyped-def]
    """``(time, code)`` of the event that a transfer of message ``m`` started at ``t`` causes
    (pushed with heap sequence ``seq``)."""
    if net.control_free and is_control(stage, state.messages.proto[m]):
        return t, m * N_EV + stage_event(stage)
    if net.kind == NET_FLOW:
        a = net.node_of[src]
        b = net.node_of[dst]
        if a != b:
            te = start_flow(t, a, b, nbytes, m, stage, seq, net, state.network, rates)
            return te, m * N_EV + EV_FLOW
    flow = m * N_STAGES + stage
    arr = start_transfer(t, src, dst, nbytes, flow, net, state.network, rates)
    if arr < 0.0:
        return t, flow * N_EV + EV_PKT
    return arr, m * N_EV + stage_event(stage)


@njit(inline="always", error_model="numpy")
def send_stage(m, stage, t, net, state, rates, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Start the get request (or go-ahead), data or acknowledgement transfer of message
    ``m`` at ``t``."""
    msgs = state.messages
    if stage == STAGE_DATA:
        te, tc = transfer_event(
            t, msgs.src[m], msgs.dst[m], data_bytes(m, state, ep), m, stage, net, state, rates, seq
        )
    else:  # get request or acknowledgement: receiver -> sender
        te, tc = transfer_event(
            t, msgs.dst[m], msgs.src[m], HEADER_BYTES, m, stage, net, state, rates, seq
        )
    hn, top_live = push(state.heap, hn, top_live, te, seq, tc)
    return hn, top_live, seq + 1


@njit(inline="always", error_model="numpy")
def packet_event(f, t, net, state, rates, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Inject the next packet of flow ``f``; schedule the next packet or the arrival."""
    msgs = state.messages
    m = f // N_STAGES
    stage = f % N_STAGES
    if stage in (STAGE_HDR, STAGE_DATA):
        a = net.node_of[msgs.src[m]]
        b = net.node_of[msgs.dst[m]]
    else:
        a = net.node_of[msgs.dst[m]]
        b = net.node_of[msgs.src[m]]
    next_t, more = inject_packet(t, f, a, b, state.slots.rid[m], state.network, rates, net)
    next_code = f * N_EV + EV_PKT if more else m * N_EV + stage_event(stage)
    hn, top_live = push(state.heap, hn, top_live, next_t, seq, next_code)
    return hn, top_live, seq + 1
