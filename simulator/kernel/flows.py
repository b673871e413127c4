"""Events of the flow network: a flow's latency is paid, its last byte arrived, or the
shares of this instant's changes are recomputed.

A flow has one valid pending event, the one whose heap sequence it records; when its
rate changes, the flow network (:mod:`mpiuq.simulator.networks.flow_share`) gives it a
new end time and this module pushes a new event, leaving the old one in the heap:
popped later, a stale event is recognised by its sequence and ignored. Stale events
are counted; when they exceed the heap's room beyond its live events (``ctr[STALE_LIMIT]``,
set when the state is made) the heap is compacted (the stale ones dropped, order
restored), so live and stale events always fit.
"""

from __future__ import annotations

from mpiuq.simulator.codes import EV_BITS, EV_FLOW, EV_SHARE, FLOW_LATENCY, N_EV
from mpiuq.simulator.kernel.heap import heapify, pop_root, sift_up
from mpiuq.simulator.kernel.transfers import stage_event
from mpiuq.simulator.networks.flow_share import (
    CTR_SHARE,
    flow_join,
    flow_leave,
    recompute_pending,
)
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit

INF = float("inf")
#: Slots of the flow state's counters (``FlowState.ctr``; the others: ``networks.flow_share``).
CTR_STALE = 2  #: stale flow events in the heap
CTR_STALE_LIMIT = 3  #: most stale events the heap holds beside every live event


@njit(error_model="numpy")
def compact(heap, n, fl):  # type: ignore[no-untyped-def]
    """Drop the stale flow events of a heap of ``n`` events; returns the new size."""
    heap = borrowed(heap)
    fl = borrowed(fl)
    k = 0
    for i in range(n):
        code = heap.code[i]
        if code & (N_EV - 1) == EV_FLOW and heap.seq[i] != fl.seq[code >> EV_BITS]:
            continue
        heap.t[k] = heap.t[i]
        heap.seq[k] = heap.seq[i]
        heap.code[k] = code
        k += 1
    heapify(heap, k)
    fl.ctr[CTR_STALE] = 0
    return k


@njit(inline="always", error_model="numpy")
def schedule_flows(n, heap, hn, seq, fl):  # type: ignore[no-untyped-def]
    """Push the end events of the ``n`` flows listed in ``fl.resched``. Returns
    ``(hn, seq)``."""
    for i in range(n):
        f = fl.resched[i]
        if fl.seq[f] >= 0:  # its pending event goes stale
            fl.ctr[CTR_STALE] += 1
            if fl.ctr[CTR_STALE] > fl.ctr[CTR_STALE_LIMIT]:
                fl.seq[f] = -1
                hn = compact(heap, hn, fl)
        te = fl.t_done[f]
        if te == INF:  # no bandwidth for now: a later recomputation reschedules it
            fl.seq[f] = -1
            continue
        fl.seq[f] = seq
        sift_up(heap, hn, te, seq, f * N_EV + EV_FLOW)
        hn += 1
        seq += 1
    return hn, seq


@njit(inline="always", error_model="numpy")
def after_change(n, t, heap, hn, seq, fl):  # type: ignore[no-untyped-def]
    """Schedule what a flow's joining or leaving changed: ``n >= 0`` flows listed in
    ``fl.resched``, or (``n < 0``) this instant's recomputation. Returns ``(hn, seq)``."""
    if n >= 0:
        return schedule_flows(n, heap, hn, seq, fl)
    if fl.ctr[CTR_SHARE] == 0:
        fl.ctr[CTR_SHARE] = 1
        sift_up(heap, hn, t, seq, EV_SHARE)
        hn += 1
        seq += 1
    return hn, seq


@njit(inline="always", error_model="numpy")
def share_event(t, state, hn, seq):  # type: ignore[no-untyped-def]
    """Recompute the shares of the flows whose links changed at ``t``."""
    heap = state.heap
    fl = state.network.flow
    hn = pop_root(heap, hn)
    fl.ctr[CTR_SHARE] = 0
    n = recompute_pending(t, fl)
    hn, seq = schedule_flows(n, heap, hn, seq, fl)
    return hn, False, seq


@njit(inline="always", error_model="numpy")
def flow_event(m, t, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """The flow of message slot ``m`` paid its latency (it starts sharing) or ended at
    ``t`` (the message's protocol goes on); a stale event is left to the loop to pop."""
    heap = state.heap
    fl = state.network.flow
    if heap.seq[0] != fl.seq[m]:
        fl.ctr[CTR_STALE] -= 1
        return hn, top_live, seq
    hn = pop_root(heap, hn)
    fl.seq[m] = -1  # this event is consumed
    if fl.phase[m] == FLOW_LATENCY:
        hn, seq = after_change(flow_join(m, t, fl), t, heap, hn, seq, fl)
        return hn, False, seq
    hn, seq = after_change(flow_leave(m, t, fl), t, heap, hn, seq, fl)
    sift_up(heap, hn, t, seq, m * N_EV + stage_event(fl.stage[m]))
    return hn + 1, False, seq + 1
