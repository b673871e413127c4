"""The ranks: each runs its operation stream on its CPU until it blocks or yields.

Operations with a CPU cost (compute, posting headers, copies into pinned buffers,
pinning) first advance the rank's clock, then take effect, so that every
shared-state change (ports, queues) happens in global time order. A rank whose
resume would be the very next event anyway keeps running without a heap round
trip (the fast path of :func:`advance`).

Each operation handler returns ``(go_on, t, hn, top_live, seq)``: whether the rank
keeps running at time ``t`` or has yielded (its resume is scheduled, or it blocked),
and the heap's size, root state and sequence counter.
"""

from __future__ import annotations

from mpiuq.simulator.codes import (
    CAT_COMPUTE,
    CAT_NETWORK,
    CAT_STACK,
    CAT_SYNC,
    COL_CALL,
    COL_COMM,
    COL_COUNT,
    COL_KIND,
    COL_PEER,
    COL_REQ,
    COL_TAG,
    EV_RANK,
    N_EV,
    OP_COMPUTE,
    OP_IRECV,
    OP_ISEND,
    OP_WAIT,
    OP_WAITALL,
    OP_WAITANY,
    SLOT_DONE,
    STAGE_HDR,
)
from mpiuq.simulator.kernel.heap import push, runs_next
from mpiuq.simulator.kernel.matching import (
    enqueue,
    find_unexpected,
    init_request,
    new_slot,
    release,
    unlink,
)
from mpiuq.simulator.kernel.messages import matched
from mpiuq.simulator.kernel.protocols import (
    header_bytes,
    header_delay,
    protocol_of,
    select,
    send_complete,
    send_cost,
    send_ready,
    send_refs,
    send_tail,
)
from mpiuq.simulator.kernel.rows import keep_envelope, row_of, window_end
from mpiuq.simulator.kernel.transfers import transfer_event
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.runtime.prefetch import prefetch

INF = float("inf")


@njit(inline="always", error_model="numpy")
def advance(r, tn, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Rank ``r``'s clock moves to ``tn``: keep running if its resume would be the next
    event anyway (fast path), else schedule the resume. Returns ``(go_on, hn, top_live, seq)``."""
    if runs_next(state.heap, hn, top_live, tn, seq):
        return True, hn, top_live, seq + 1
    hn, top_live = push(state.heap, hn, top_live, tn, seq, r * N_EV + EV_RANK)
    return False, hn, top_live, seq + 1


@njit(inline="always", error_model="numpy")
def op_compute(r, i, j, c, t, prog, state, compute_scale, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """``COMPUTE`` (global row ``i``, buffer row ``j``): busy the CPU for the scaled seconds."""
    ranks = state.ranks
    if ranks.phase[r] == 0:
        d = prog.seconds[j] * compute_scale
        ranks.acc[r, CAT_COMPUTE] += d
        ranks.acc_call[c, CAT_COMPUTE] += d
        if d > 0.0:
            ranks.phase[r] = 1
            go_on, hn, top_live, seq = advance(r, t + d, state, hn, top_live, seq)
            return go_on, t + d, hn, top_live, seq
    ranks.phase[r] = 0
    ranks.pc[r] = i + 1
    return True, t, hn, top_live, seq


@njit(inline="always", error_model="numpy")
def op_isend(r, i, j, c, t, prog, net, state, rates, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """``ISEND`` (global row ``i``, buffer row ``j``): pay the protocol's CPU cost, then
    the message leaves at ``TSend = t``; the wait that consumes the send request later
    pays the regime's send-completion cost."""
    ops = prog.ops
    ranks = state.ranks
    msgs = state.messages
    rid = ops[j, COL_REQ]
    nb_ = prog.nbytes[j]
    if ranks.phase[r] == 0:
        k = select(nb_, ep)
        proto = protocol_of(k, ep)
        cost = send_cost(proto, k, nb_, ep)
        # references: the wait, and the protocol (matching, plus the data for eager;
        # the acknowledgement for rendezvous)
        m = new_slot(state.slots, rid, send_refs(proto))
        msgs.proto[m] = proto
        msgs.regime[m] = k
        ranks.acc[r, CAT_STACK] += cost
        ranks.acc_call[c, CAT_STACK] += cost
        if cost > 0.0:
            ranks.phase[r] = 1
            go_on, hn, top_live, seq = advance(r, t + cost, state, hn, top_live, seq)
            return go_on, t + cost, hn, top_live, seq
    # effect: the message leaves at TSend = t
    m = state.slots.slot_of[rid]
    ranks.phase[r] = 0
    ranks.pc[r] = i + 1
    dst = ops[j, COL_PEER]
    proto = msgs.proto[m]
    init_request(state.requests, m, i, t, send_ready(proto, t))
    state.requests.copy_s[m] = send_complete(msgs.regime[m], ep)  # paid by the send's wait
    msgs.match[m] = -1
    msgs.data_at[m] = INF
    msgs.src[m] = r
    msgs.dst[m] = dst
    msgs.tag[m] = ops[j, COL_TAG]
    msgs.comm[m] = ops[j, COL_COMM]
    msgs.nbytes[m] = nb_
    msgs.t_send[m] = t
    wire = header_bytes(proto, msgs.regime[m], nb_, ep)
    t_wire = t + header_delay(msgs.regime[m], nb_, ep)  # the regime's latency off the CPUs
    te, tc = transfer_event(t_wire, r, dst, wire, m, STAGE_HDR, net, state, rates, seq)
    hn, top_live = push(state.heap, hn, top_live, te, seq, tc)
    tail = send_tail(proto, msgs.regime[m], nb_, ep)
    if tail > 0.0:
        # the call goes on copying while the message leaves (pipelined copies): CPU time
        # after the operation, like a compute step
        ranks.acc[r, CAT_STACK] += tail
        ranks.acc_call[c, CAT_STACK] += tail
        go_on, hn, top_live, seq = advance(r, t + tail, state, hn, top_live, seq + 1)
        return go_on, t + tail, hn, top_live, seq
    return True, t, hn, top_live, seq + 1


@njit(inline="always", error_model="numpy")
def op_irecv(r, i, j, t, prog, state, ep, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """``IRECV`` (global row ``i``, buffer row ``j``): match the first unexpected message,
    or join the posted-receive queue."""
    ops = prog.ops
    queues = state.queues
    q = new_slot(state.slots, ops[j, COL_REQ], 1)  # the wait's reference
    init_request(state.requests, q, i, t, INF)
    keep_envelope(prog, state, q, j)
    state.ranks.pc[r] = i + 1
    # search the unexpected queue in arrival order
    m, prev = find_unexpected(state, r, ops[j, COL_PEER], ops[j, COL_TAG], ops[j, COL_COMM])
    if m < 0:
        enqueue(queues.posted_head, queues.posted_tail, queues.next, r, q)
    else:
        unlink(queues.unexpected_head, queues.unexpected_tail, queues.next, r, prev, m)
        hn, top_live, seq = matched(m, q, t, True, state, ep, hn, top_live, seq)
    return hn, top_live, seq


@njit(inline="always", error_model="numpy")
def _overlap(a, b, lo, hi):  # type: ignore[no-untyped-def]
    x = min(b, hi) - max(a, lo)
    return x if x > 0.0 else 0.0


@njit(inline="always", error_model="numpy")
def account_wait(r, c, a, b, q, state):  # type: ignore[no-untyped-def]
    """Split rank ``r``'s blocked interval ``[a, b]`` along request ``q``'s milestones.

    Before the partner was ready -> sync (eqs. 1-4); inside a software step of the
    protocol -> MPI stack; the remainder -> network.
    """
    if b <= a:
        return
    rq = state.requests
    acc = state.ranks.acc
    acc_call = state.ranks.acc_call
    s = rq.sync[q]
    sync = min(s, b) - a
    if sync < 0.0:
        sync = 0.0
    mid = max(a, s)
    stk = _overlap(mid, b, rq.stack1_start[q], rq.stack1_end[q]) + _overlap(
        mid, b, rq.stack2_start[q], rq.stack2_end[q]
    )
    net = (b - mid) - stk if b > mid else 0.0
    acc[r, CAT_SYNC] += sync
    acc[r, CAT_STACK] += stk
    acc[r, CAT_NETWORK] += net
    acc_call[c, CAT_SYNC] += sync
    acc_call[c, CAT_STACK] += stk
    acc_call[c, CAT_NETWORK] += net


@njit(error_model="numpy")
def _complete_in_order(r, t, waits, slot_of, ready):  # type: ignore[no-untyped-def]
    """The complete requests rank ``r``'s wait still lists, in the order the wait consumes
    them: ``(n_complete, pending)``, the program request ids in ``waits.burst[:n_complete]``.

    The order is by completion time, ties in list order (what repeatedly taking the
    earliest-completed request gives). Consumed requests are dropped from the list as
    it is scanned. Compiled as a function of its own, not inlined: the scan then gets
    registers to itself, and the event loop keeps its own for the other handlers
    (inlined, this loop made the trace replays 3-16% slower).
    """
    waits = borrowed(waits)
    slot_of = borrowed(slot_of)
    ready = borrowed(ready)
    act = waits.active
    burst = waits.burst
    burst_t = waits.burst_t
    base = waits.ptr[r]
    pending = False
    kept = base
    n = 0
    for j in range(base, base + waits.n_listed[r]):
        rid = act[j]
        q = slot_of[rid]
        if q == SLOT_DONE:
            continue
        act[kept] = rid
        kept += 1
        if q >= 0 and ready[q] <= t:
            # insertion sort, stable: usually already in order (sends complete as posted)
            x = ready[q]
            p = n
            while p > 0 and burst_t[p - 1] > x:
                burst[p] = burst[p - 1]
                burst_t[p] = burst_t[p - 1]
                p -= 1
            burst[p] = rid
            burst_t[p] = x
            n += 1
        else:
            pending = True  # not complete, or not even created yet
    waits.n_listed[r] = kept - base
    return n, pending


@njit(inline="always", error_model="numpy")
def _pay_copy_out(r, c, t, cp, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Charge a consumed request's copy-out ``cp`` (s) from ``t`` to rank ``r``'s and call
    ``c``'s MPI-stack time and run the events due before ``t + cp``; returns
    ``(go_on, t + cp, hn, top_live, seq)`` (``go_on`` false: another event runs first)."""
    ranks = state.ranks
    ranks.acc[r, CAT_STACK] += cp
    ranks.acc_call[c, CAT_STACK] += cp
    go_on, hn, top_live, seq = advance(r, t + cp, state, hn, top_live, seq)
    return go_on, t + cp, hn, top_live, seq


@njit(inline="always", error_model="numpy")
def _waitany_done(r, i, c, t, cp, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """A ``WAITANY`` consumed its request at ``t``: pay the copy-out ``cp``, then end."""
    ranks = state.ranks
    if cp > 0.0:
        go_on, t, hn, top_live, seq = _pay_copy_out(r, c, t, cp, state, hn, top_live, seq)
        if not go_on:
            ranks.phase[r] = 3  # resumed after the copy-out: the operation ends
            return False, t, hn, top_live, seq
    ranks.phase[r] = 0
    ranks.pc[r] = i + 1
    return True, t, hn, top_live, seq


@njit(inline="always", error_model="numpy")
def op_wait(r, i, j, k, c, t, prog, state, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """``WAIT`` / ``WAITALL`` / ``WAITANY`` (global row ``i``, buffer row ``j``): consume
    the complete requests earliest first, or block.

    Consuming a request splits the blocked time along its milestones (the first one
    after a wake-up; later ones find no blocked time left) and charges its copy-out.
    No other event can run while the rank keeps running, so the complete requests of
    one scan are consumed in one pass (a wait-all of k requests that all complete
    together costs one scan, not k); when a copy-out lets another event run first, the
    rank yields and scans again when it resumes.

    A ``WAITANY`` consumes only the first request of the burst (the earliest completed
    among those of its list no wait has consumed yet; ties in list order) and ends; it
    ends at once when every listed request is already consumed (MPI_UNDEFINED).
    """
    ops = prog.ops
    ranks = state.ranks
    waits = state.waits
    slot_of = state.slots.slot_of
    if ranks.phase[r] == 3:  # a WAITANY consumed its request; its copy-out is paid
        ranks.phase[r] = 0
        ranks.pc[r] = i + 1
        return True, t, hn, top_live, seq
    if ranks.phase[r] == 0:
        base = waits.ptr[r]
        ranks.wait_mark[r] = t
        ranks.phase[r] = 2
        if k == OP_WAIT:
            waits.active[base] = ops[j, COL_REQ]
            waits.n_listed[r] = 1
        else:
            lo = ops[j, COL_REQ]
            for x in range(ops[j, COL_COUNT]):
                waits.active[base + x] = prog.wait_list[lo + x]
            waits.n_listed[r] = ops[j, COL_COUNT]
    n_complete, pending = _complete_in_order(r, t, waits, slot_of, state.requests.ready)
    if n_complete > 0:
        for x in range(n_complete):
            rid = waits.burst[x]
            q = slot_of[rid]
            if q == SLOT_DONE:  # listed twice
                continue
            account_wait(r, c, ranks.wait_mark[r], t, q, state)
            cp = state.requests.copy_s[q]
            slot_of[rid] = SLOT_DONE
            release(state.slots, q)  # the wait's reference
            ranks.wait_mark[r] = t + cp
            if k == OP_WAITANY:
                return _waitany_done(r, i, c, t, cp, state, hn, top_live, seq)
            if cp > 0.0:
                go_on, t, hn, top_live, seq = _pay_copy_out(r, c, t, cp, state, hn, top_live, seq)
                if not go_on:
                    return False, t, hn, top_live, seq
        return True, t, hn, top_live, seq  # scan again: block, or the wait is over
    if pending:
        ranks.blocked[r] = True
        return False, t, hn, top_live, seq
    ranks.phase[r] = 0
    ranks.pc[r] = i + 1
    return True, t, hn, top_live, seq


@njit(inline="always", error_model="numpy")
def run_rank(r, t, prog, net, state, rates, ep, compute_scale, hn, top_live, seq):  # type: ignore[no-untyped-def]
    """Resume rank ``r`` at ``t``: run operations until it blocks, yields or ends.

    Returns ``(hn, top_live, seq, need, t)``: ``need`` when the rank stopped at the end
    of its window before the end of its stream (never for a whole program), at ``t``;
    calling again with the window refilled and the returned heap state continues.
    """
    ops = prog.ops
    ranks = state.ranks
    pc = ranks.pc
    ranks.blocked[r] = False
    end = prog.rank_ptr[r + 1]
    lim = window_end(prog, r)
    need = False
    while True:
        i = pc[r]
        if i >= lim:
            if i >= end:
                ranks.end_s[r] = t
            else:
                need = True
            break
        j = row_of(prog, r, i)
        k = ops[j, COL_KIND]
        c = ops[j, COL_CALL]
        if k == OP_COMPUTE:
            go_on, t, hn, top_live, seq = op_compute(
                r, i, j, c, t, prog, state, compute_scale, hn, top_live, seq
            )
        elif k == OP_ISEND:
            go_on, t, hn, top_live, seq = op_isend(
                r, i, j, c, t, prog, net, state, rates, ep, hn, top_live, seq
            )
        elif k == OP_IRECV:
            hn, top_live, seq = op_irecv(r, i, j, t, prog, state, ep, hn, top_live, seq)
            go_on = True
        elif k in (OP_WAIT, OP_WAITALL, OP_WAITANY):
            go_on, t, hn, top_live, seq = op_wait(r, i, j, k, c, t, prog, state, hn, top_live, seq)
        else:  # OP_MARK
            ranks.marks[ops[j, COL_REQ]] = t
            pc[r] = i + 1
            go_on = True
        if not go_on:
            break
    if need:
        return hn, top_live, seq, need, t
    # the rank yields: fetch what it reads next while other events run
    nx = pc[r]
    if nx + 4 < lim:
        j = row_of(prog, r, nx)
        prefetch(ops, j + 2)
        prefetch(ops, j + 4)
        prefetch(prog.nbytes, j + 4)
        prefetch(prog.seconds, j + 4)
    return hn, top_live, seq, need, t
