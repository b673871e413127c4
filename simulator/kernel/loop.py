"""The event loop: pop the earliest event and hand it to its handler.

Handlers live beside their concept -- ranks (:mod:`.ranks`), protocol events at the
endpoints (:mod:`.messages`), transfers and packets (:mod:`.transfers`), flows
(:mod:`.flows`) -- and are inlined here, so the loop compiles to one function as fast as a hand-written one.
"""

from __future__ import annotations

from mpiuq.simulator.codes import (
    EV_ACK_ISSUE,
    EV_BITS,
    EV_DATA,
    EV_FLOW,
    EV_GET_ARRIVE,
    EV_GET_ISSUE,
    EV_HDR,
    EV_PKT,
    EV_RANK,
    EV_SHARE,
    EV_STREAM_OUT,
    N_EV,
    STAGE_ACK,
    STAGE_GET,
)
from mpiuq.simulator.kernel.flows import flow_event, share_event
from mpiuq.simulator.kernel.heap import pop_root, sift_up
from mpiuq.simulator.kernel.messages import (
    ack_arrived,
    data_arrived,
    get_arrived,
    header_arrived,
    stream_out,
)
from mpiuq.simulator.kernel.ranks import run_rank
from mpiuq.simulator.kernel.rows import is_windowed
from mpiuq.simulator.kernel.transfers import packet_event, send_stage
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit

#: Slots of the event loop's control array (:func:`event_loop`'s ``ctl``), int64.
CTL_STARTED = 0  #: 0 before the first call (the loop then seeds the heap), then 1
CTL_HN = 1  #: heap size
CTL_SEQ = 2  #: next event sequence number
CTL_EVENTS = 3  #: events processed so far
CTL_RANK = 4  #: rank stopped at the end of its window (-1: none; the run is over)
CTL_TOP_LIVE = 5  #: whether that rank's event still sits at the heap's root (0/1)
LOOP_CTL = 6  #: length of the control array


@njit(nogil=True, error_model="numpy")
def event_loop(prog, net, state, rates, ep, compute_scale, ctl, ctl_t):  # type: ignore[no-untyped-def]
    """Run ``prog`` on ``net`` from ``state`` (updated in place) until every event is done,
    or until a rank of a windowed program reaches the end of its window.

    ``ctl`` (int64, :data:`LOOP_CTL`, zeros for a fresh run) and ``ctl_t`` (float64, 1)
    carry the loop between calls: returns the rank whose window needs the rows from its
    ``pc`` on, after saving the heap size, sequence counter, event count, that rank's
    clock (``ctl_t[0]``) and whether its event is still the heap's root; calling again
    with the window refilled re-enters that rank at the same time with the same heap
    state and goes on, so the events and every float are those of one uninterrupted
    run. Returns -1 when the run is over (``ctl[CTL_EVENTS]`` holds the event count).
    For a whole program (:class:`~.rows.ProgramArrays`) the resume code compiles away.

    The bundles are borrowed (:func:`~mpiuq.simulator.runtime.borrow.borrowed`) on entry: the
    handlers are inlined, and passing a bundle to one otherwise updates the reference
    count of every array in it with an atomic instruction (with them, a replay of
    ti_lulesh_512r took 5.3-5.7 s of CPU against 0.6-0.7 s). The loop allocates nothing.
    """
    prog = borrowed(prog)
    net = borrowed(net)
    state = borrowed(state)
    ep = borrowed(ep)
    heap = state.heap
    n_ranks = prog.rank_ptr.shape[0] - 1
    cap = heap.t.shape[0]
    if ctl[CTL_STARTED] == 0:
        for r in range(n_ranks):  # rank r's start is event r, created r-th
            sift_up(heap, r, 0.0, r, r * N_EV + EV_RANK)
        hn = n_ranks
        seq = n_ranks
        n_events = 0
        ctl[CTL_STARTED] = 1
        ctl[CTL_RANK] = -1
    else:
        hn = ctl[CTL_HN]
        seq = ctl[CTL_SEQ]
        n_events = ctl[CTL_EVENTS]
    resume = is_windowed(prog) and ctl[CTL_RANK] >= 0
    while resume or hn > 0:
        if resume:
            # finish the rank that stopped at its window's end, where it stopped
            resume = False
            ev = EV_RANK
            arg = ctl[CTL_RANK]
            t = ctl_t[0]
            top_live = ctl[CTL_TOP_LIVE] != 0
        else:
            # the current event stays at the root until the handler's first push replaces
            # it, or it is popped after the handler (top_live)
            t = heap.t[0]
            code = heap.code[0]
            top_live = True
            if hn >= cap:  # an engine bug, not a property of the program
                raise RuntimeError("event heap overflow: more pending events than ranks + messages")
            n_events += 1
            ev = code & (N_EV - 1)
            arg = code >> EV_BITS
        if ev == EV_RANK:
            hn, top_live, seq, need, t_stop = run_rank(
                arg, t, prog, net, state, rates, ep, compute_scale, hn, top_live, seq
            )
            if need:
                ctl[CTL_HN] = hn
                ctl[CTL_SEQ] = seq
                ctl[CTL_EVENTS] = n_events
                ctl[CTL_RANK] = arg
                ctl[CTL_TOP_LIVE] = 1 if top_live else 0
                ctl_t[0] = t_stop
                return arg
        elif ev == EV_HDR:
            hn, top_live, seq = header_arrived(arg, t, prog, state, ep, hn, top_live, seq)
        elif ev == EV_GET_ISSUE:
            hn, top_live, seq = send_stage(
                arg, STAGE_GET, t, net, state, rates, ep, hn, top_live, seq
            )
        elif ev == EV_GET_ARRIVE:
            hn, top_live, seq = get_arrived(arg, t, net, state, rates, ep, hn, top_live, seq)
        elif ev == EV_DATA:
            hn, top_live, seq = data_arrived(arg, t, state, ep, hn, top_live, seq)
        elif ev == EV_ACK_ISSUE:
            hn, top_live, seq = send_stage(
                arg, STAGE_ACK, t, net, state, rates, ep, hn, top_live, seq
            )
        elif ev == EV_PKT:
            hn, top_live, seq = packet_event(arg, t, net, state, rates, hn, top_live, seq)
        elif ev == EV_FLOW:
            hn, top_live, seq = flow_event(arg, t, state, hn, top_live, seq)
        elif ev == EV_SHARE:
            hn, top_live, seq = share_event(t, state, hn, seq)
        elif ev == EV_STREAM_OUT:
            hn, top_live, seq = stream_out(arg, t, net, state, rates, ep, hn, top_live, seq)
        else:  # EV_ACK
            hn, top_live, seq = ack_arrived(arg, t, state, hn, top_live, seq)
        if top_live:
            hn = pop_root(heap, hn)
    ctl[CTL_HN] = hn
    ctl[CTL_SEQ] = seq
    ctl[CTL_EVENTS] = n_events
    ctl[CTL_RANK] = -1
    return -1
