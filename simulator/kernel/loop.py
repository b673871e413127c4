"""The event loop: pop the earliest event and hand it to its handler.

Handlers live beside their concept -- ranks (:mod:`.ranks`), protocol events at the
endpoints (:mod:`.messages`), transfers and packets (:mod:`.transfers`) -- and are
inlined here, so the loop compiles to one function as fast as a hand-written one.
"""

from __future__ import annotations

from mpiuq.simulator._jit import njit
from mpiuq.simulator.codes import (
    EV_ACK_ISSUE,
    EV_BITS,
    EV_DATA,
    EV_GET_ARRIVE,
    EV_GET_ISSUE,
    EV_HDR,
    EV_PKT,
    EV_RANK,
    EV_STREAM_OUT,
    N_EV,
    STAGE_ACK,
    STAGE_GET,
)
from mpiuq.simulator.kernel.heap import pop_root, sift_up
from mpiuq.simulator.kernel.messages import (
    ack_arrived,
    data_arrived,
    get_arrived,
    header_arrived,
    stream_out,
)
from mpiuq.simulator.kernel.ranks import run_rank
from mpiuq.simulator.kernel.transfers import packet_event, send_stage


@njit(nrt=False, nogil=True, error_model="numpy")
def event_loop(prog, net, state, rates, ep, compute_scale):  # type: ignore[no-untyped-def]
    """Run ``prog`` on ``net`` from the fresh ``state`` (updated in place); returns the
    event count.

    Compiled without numba's reference counting: it allocates nothing, and the
    atomic reference-count updates that passing arrays to inlined helpers otherwise
    costs were a tenth of the run time.
    """
    heap = state.heap
    n_ranks = prog.rank_ptr.shape[0] - 1
    cap = heap.t.shape[0]
    hn = 0
    seq = 0
    for r in range(n_ranks):
        sift_up(heap, hn, 0.0, seq, r * N_EV + EV_RANK)
        hn += 1
        seq += 1
    n_events = 0
    while hn > 0:
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
            hn, top_live, seq = run_rank(
                arg, t, prog, net, state, rates, ep, compute_scale, hn, top_live, seq
            )
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
        elif ev == EV_STREAM_OUT:
            hn, top_live, seq = stream_out(arg, t, net, state, rates, ep, hn, top_live, seq)
        else:  # EV_ACK
            hn, top_live, seq = ack_arrived(arg, t, state, hn, top_live, seq)
        if top_live:
            hn = pop_root(heap, hn)
    return n_events
