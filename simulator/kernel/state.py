"""The kernel's state: typed bundles of flat arrays, allocated once per run.

:func:`new_state` returns a :class:`State`; the event loop reads and updates it in
place and allocates nothing. Per-request state lives in *slots*, indexed like the
program's request ids but reused once a request is complete (last in, first out),
so a run touches only as many slots as requests are ever alive at once;
``np.empty`` pages that are never touched cost nothing. A message is the slot of
its send request.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import (
    COL_COUNT,
    COL_KIND,
    N_CATEGORIES,
    OP_WAITALL,
    OP_WAITANY,
    SLOT_NONE,
)
from mpiuq.simulator.kernel.heap import Heap
from mpiuq.simulator.networks.state import FlowState, NetState
from mpiuq.simulator.runtime.jit import njit, register_jitable

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


class RankState(NamedTuple):
    """Per rank (and per call kind, per mark): where it is and where its time went."""

    pc: I64  #: next operation (set by run_program)
    phase: I64  #: 0 fresh, 1 CPU cost paid, 2 waiting, 3 WAITANY paying its copy-out
    blocked: npt.NDArray[np.bool_]  #: blocked in a wait
    wait_mark: F64  #: start of the wait interval not yet accounted, s
    end_s: F64  #: time the rank finished, s
    acc: F64  #: (n_ranks, N_CATEGORIES) seconds per category
    acc_call: F64  #: (n_calls, N_CATEGORIES) seconds per category per call kind
    marks: F64  #: (n_marks,) times recorded by MARK operations
    prog_free: F64  #: progress engine busy until, s


class Queues(NamedTuple):
    """MPI matching queues: singly linked lists through request slots."""

    posted_head: I64  #: posted-receive queue of each rank
    posted_tail: I64
    unexpected_head: I64  #: unexpected-message queue of each rank
    unexpected_tail: I64
    next: I64  #: next slot in the queue


class Requests(NamedTuple):
    """Per request slot: what its wait reads."""

    ready: F64  #: completion time
    sync: F64  #: partner ready at (eqs. 1-2)
    stack1_start: F64  #: first MPI-stack interval on the request's critical path
    stack1_end: F64
    stack2_start: F64  #: second MPI-stack interval
    stack2_end: F64
    copy_s: F64  #: CPU seconds charged at the wait (copy-out, receive or send-completion overhead)
    post_s: F64  #: post time of receives
    op: I64  #: creating operation


class Messages(NamedTuple):
    """Per send slot: the message in flight."""

    src: I32  #: source rank
    dst: I32  #: destination rank
    tag: I32
    comm: I32
    nbytes: I64
    proto: npt.NDArray[np.int8]  #: PROTO_* code
    regime: npt.NDArray[np.int8]  #: index of its regime in the regime table
    t_send: F64  #: TSend
    match: I64  #: matched receive slot (-1: none yet)
    data_at: F64  #: data arrival
    get_start: F64  #: eager get posting start
    get_end: F64  #: ... end


class Slots(NamedTuple):
    """Request slots: which program request holds which slot."""

    slot_of: I32  #: slot of each program request (or SLOT_NONE, SLOT_DONE)
    rid: I64  #: program request of each slot
    refs: npt.NDArray[np.int8]  #: references held on each slot
    free: I64  #: free-slot stack
    matched: I32  #: matched receive request of each send request (-1 if none)
    counters: I64  #: [slots ever used, free slots on the stack]


class Waits(NamedTuple):
    """Per rank, the requests its current wait still needs."""

    active: I64  #: room for the requests of each rank's largest wait
    ptr: I64  #: (n_ranks + 1,) offset of each rank's room (wait_offsets)
    n_listed: I64  #: requests still listed per rank
    burst: I64  #: scratch shared by the ranks (room of the largest wait): the complete
    #: requests of one scan in consumption order (used before the rank yields)
    burst_t: F64  #: ... and their completion times


class State(NamedTuple):
    """Everything a run reads and writes besides the program and the network description."""

    ranks: RankState
    queues: Queues
    requests: Requests
    messages: Messages
    network: NetState
    heap: Heap
    slots: Slots
    waits: Waits


@register_jitable
def _rank_state(n_ranks, n_calls, n_marks):  # type: ignore[no-untyped-def]
    return RankState(
        np.zeros(n_ranks, np.int64),
        np.zeros(n_ranks, np.int64),
        np.zeros(n_ranks, np.bool_),
        np.zeros(n_ranks, np.float64),
        np.zeros(n_ranks, np.float64),
        np.zeros((n_ranks, N_CATEGORIES), np.float64),
        np.zeros((n_calls, N_CATEGORIES), np.float64),
        np.full(n_marks, np.nan),
        np.zeros(n_ranks, np.float64),
    )


@register_jitable
def _queues(n_ranks, n_requests):  # type: ignore[no-untyped-def]
    return Queues(
        np.full(n_ranks, -1, np.int64),
        np.full(n_ranks, -1, np.int64),
        np.full(n_ranks, -1, np.int64),
        np.full(n_ranks, -1, np.int64),
        np.empty(n_requests, np.int64),
    )


@register_jitable
def _requests(n_requests):  # type: ignore[no-untyped-def]
    f64 = np.float64
    return Requests(
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, f64),
        np.empty(n_requests, np.int64),
    )


@register_jitable
def _messages(n_requests):  # type: ignore[no-untyped-def]
    return Messages(
        np.empty(n_requests, np.int32),
        np.empty(n_requests, np.int32),
        np.empty(n_requests, np.int32),
        np.empty(n_requests, np.int32),
        np.empty(n_requests, np.int64),
        np.empty(n_requests, np.int8),
        np.empty(n_requests, np.int8),
        np.empty(n_requests, np.float64),
        np.empty(n_requests, np.int64),
        np.empty(n_requests, np.float64),
        np.empty(n_requests, np.float64),
        np.empty(n_requests, np.float64),
    )


@register_jitable
def _slots(n_requests):  # type: ignore[no-untyped-def]
    # the two arrays filled for every program request are int32 (a program's request
    # ids and hence its slots fit: Program.validate), 8 bytes per request instead of 16
    return Slots(
        np.full(n_requests, SLOT_NONE, np.int32),
        np.empty(n_requests, np.int64),
        np.empty(n_requests, np.int8),
        np.empty(n_requests, np.int64),
        np.full(n_requests, -1, np.int32),
        np.zeros(2, np.int64),
    )


@register_jitable
def _flow_state(n_fs, n_fl, flow_entries, stale_room):  # type: ignore[no-untyped-def]
    """The flow network's state: ``n_fs`` message slots (one flow at a time) of
    ``flow_entries`` link entries, ``n_fl`` links (all 0 for the other networks)."""
    f64 = np.float64
    ctr = np.zeros(6, np.int64)
    ctr[3] = stale_room - 1
    return FlowState(
        np.full(n_fs, -1, np.int8),
        np.zeros(n_fs, np.int8),
        np.full(n_fs, -1, np.int64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, f64),
        np.zeros(n_fs, np.int32),
        np.zeros((n_fs, flow_entries), np.int32),
        np.zeros((n_fs, flow_entries), f64),
        np.zeros(n_fs * flow_entries, np.int64),
        np.zeros(n_fs * flow_entries, np.int64),
        np.zeros(n_fs, np.int64),
        np.zeros(n_fs, np.int64),
        np.zeros(n_fs, np.int64),
        np.zeros(n_fs, np.int64),
        np.zeros(n_fs, np.int64),
        np.zeros(n_fs, np.int64),
        np.full(n_fl, -1, np.int64),
        np.zeros(n_fl, f64),
        np.zeros(n_fl, f64),
        np.zeros(n_fl, f64),
        np.zeros(n_fl, f64),
        np.zeros(n_fl, np.int64),
        np.zeros(n_fl, np.int64),
        np.zeros(n_fl, np.int64),
        np.zeros(n_fl, np.int64),
        np.zeros(n_fl, np.int64),
        np.zeros(n_fl, np.int8),
        ctr,
    )


@register_jitable
def _waits(n_ranks, wait_ptr):  # type: ignore[no-untyped-def]
    largest = 0
    if n_ranks > 0:
        largest = np.max(wait_ptr[1:] - wait_ptr[:-1])
    return Waits(
        np.empty(wait_ptr[-1], np.int64),
        wait_ptr,
        np.zeros(n_ranks, np.int64),
        np.empty(largest, np.int64),
        np.empty(largest, np.float64),
    )


def new_state(  # type: ignore[no-untyped-def]
    n_ranks,
    n_requests,
    n_calls,
    n_marks,
    n_nodes,
    n_links,
    n_flows,
    n_route,
    flow_entries,
    wait_ptr,
):
    """Fresh simulation state for ``run_program``.

    ``n_route``: length of the route buffer of the packet or flow network
    (``route_capacity`` of its topology, or the zone's longest route); ``flow_entries``:
    link entries per flow of the flow network (0 for other networks); ``wait_ptr``
    comes from :func:`wait_offsets`. Plain NumPy, so
    that callers allocate large state through NumPy (which asks the kernel for huge
    pages, cutting page-fault time for a million requests by about four);
    :func:`new_state_compiled` is the same function compiled for loops over
    parameter sets (the bundles' helpers are ``register_jitable``: plain Python here,
    compiled there).
    """
    # at most one pending event per rank (its resume) and per message (the next step
    # of its protocol, or its flow's event), so this capacity is never exceeded; the flow
    # network's heap has as much room again for stale flow events (kernel.flows);
    # untouched pages cost nothing
    live = n_ranks + n_requests + 1
    if flow_entries > 0:
        live += 1  # the flow network's recomputation event
    stale_room = live if flow_entries > 0 else 0
    cap = live + stale_room
    # the flow network: per message slot (one flow at a time) and per link; empty otherwise
    n_fs = n_requests if flow_entries > 0 else 0
    n_fl = n_links if flow_entries > 0 else 0
    network = NetState(
        np.zeros(n_nodes, np.float64),
        np.zeros(n_nodes, np.float64),
        np.empty(n_flows, np.float64),
        np.zeros(n_links, np.float64),
        np.zeros(n_links, np.float64),
        np.zeros(n_links, np.float64),
        np.zeros(n_route, np.int32),
        _flow_state(n_fs, n_fl, flow_entries, stale_room),
    )
    heap = Heap(np.empty(cap, np.float64), np.empty(cap, np.int64), np.empty(cap, np.int64))
    return State(
        _rank_state(n_ranks, n_calls, n_marks),
        _queues(n_ranks, n_requests),
        _requests(n_requests),
        _messages(n_requests),
        network,
        heap,
        _slots(n_requests),
        _waits(n_ranks, wait_ptr),
    )


new_state_compiled = njit(nogil=True)(new_state)


@njit(nogil=True)
def reset_state(state):  # type: ignore[no-untyped-def]
    """Return a used ``state`` to what :func:`new_state` makes (for loops over parameter
    sets: no allocation, no fresh pages). Fields that ``new_state`` leaves empty are
    never read before they are written, so they keep their stale values.
    """
    ranks = state.ranks
    ranks.pc[:] = 0
    ranks.phase[:] = 0
    ranks.blocked[:] = False
    ranks.wait_mark[:] = 0.0
    ranks.end_s[:] = 0.0
    ranks.acc[:] = 0.0
    ranks.acc_call[:] = 0.0
    ranks.marks[:] = np.nan
    ranks.prog_free[:] = 0.0
    queues = state.queues
    queues.posted_head[:] = -1
    queues.posted_tail[:] = -1
    queues.unexpected_head[:] = -1
    queues.unexpected_tail[:] = -1
    slots = state.slots
    slots.slot_of[:] = SLOT_NONE
    slots.matched[:] = -1
    slots.counters[:] = 0
    network = state.network
    network.inj_free[:] = 0.0
    network.ej_free[:] = 0.0
    network.link_busy[:] = 0.0
    network.link_bytes[:] = 0.0
    network.link_inv[:] = 0.0
    network.route[:] = 0
    flow = network.flow
    flow.phase[:] = -1
    flow.seq[:] = -1
    flow.head[:] = -1
    flow.load[:] = 0.0
    flow.c_pending[:] = 0
    flow.ctr[2] = 0  # stale events (the epoch and round marks go on increasing)
    flow.ctr[4] = 0  # pending links
    flow.ctr[5] = 0  # recomputation scheduled
    state.waits.n_listed[:] = 0


@njit(nogil=True)
def wait_offsets(rank_ptr, ops):  # type: ignore[no-untyped-def]
    """Per rank, the offset of its room for one wait's requests (``n_ranks + 1``).

    The room holds the rank's largest ``WAITALL`` or ``WAITANY`` (at least one request).
    """
    n_ranks = rank_ptr.shape[0] - 1
    ptr = np.zeros(n_ranks + 1, np.int64)
    for r in range(n_ranks):
        room = 1
        for i in range(rank_ptr[r], rank_ptr[r + 1]):
            k = ops[i, COL_KIND]
            if (k in (OP_WAITALL, OP_WAITANY)) and ops[i, COL_COUNT] > room:
                room = ops[i, COL_COUNT]
        ptr[r + 1] = ptr[r] + room
    return ptr
