"""MPI matching and request bookkeeping: envelopes, FIFO queues, request slots."""

from __future__ import annotations

from mpiuq.simulator.kernel.rows import posted_envelope
from mpiuq.simulator.kernel.unsigned import U
from mpiuq.simulator.runtime.jit import njit

INF = float("inf")


@njit(inline="always", error_model="numpy")
def envelope_matches(comm, src, tag, m_comm, m_src, m_tag):  # type: ignore[no-untyped-def]
    """MPI matching: same communicator, source and tag equal or wildcards (< 0)."""
    return comm == m_comm and (src < 0 or src == m_src) and (tag < 0 or tag == m_tag)


@njit(inline="always", error_model="numpy")
def enqueue(head, tail, nxt, owner, item):  # type: ignore[no-untyped-def]
    """Append ``item`` to the linked-list queue of ``owner`` (FIFO: MPI posting order)."""
    if tail[U(owner)] < 0:
        head[U(owner)] = item
    else:
        nxt[tail[U(owner)]] = item
    tail[U(owner)] = item
    nxt[U(item)] = -1


@njit(inline="always", error_model="numpy")
def unlink(head, tail, nxt, owner, prev, item):  # type: ignore[no-untyped-def]
    """Remove ``item`` (whose predecessor is ``prev``, -1 at the head) from ``owner``'s queue."""
    if prev < 0:
        head[U(owner)] = nxt[U(item)]
    else:
        nxt[U(prev)] = nxt[U(item)]
    if tail[U(owner)] == item:
        tail[U(owner)] = prev
    nxt[U(item)] = -1


@njit(inline="always", error_model="numpy")
def find_posted(state, prog, dst, m):  # type: ignore[no-untyped-def]
    """First receive posted by rank ``dst`` that matches message ``m``: ``(slot, prev)``."""
    queues = state.queues
    msgs = state.messages
    nxt = queues.next
    prev = -1
    q = queues.posted_head[U(dst)]
    while q >= 0:
        src, tg, cm = posted_envelope(prog, state, q)
        if envelope_matches(cm, src, tg, msgs.comm[U(m)], msgs.src[U(m)], msgs.tag[U(m)]):
            break
        prev = q
        q = nxt[U(q)]
    return q, prev


@njit(inline="always", error_model="numpy")
def find_unexpected(state, r, src, tag, comm):  # type: ignore[no-untyped-def]
    """First message in rank ``r``'s unexpected queue matching a receive: ``(slot, prev)``."""
    msgs = state.messages
    nxt = state.queues.next
    prev = -1
    m = state.queues.unexpected_head[U(r)]
    while m >= 0:
        if envelope_matches(comm, src, tag, msgs.comm[U(m)], msgs.src[U(m)], msgs.tag[U(m)]):
            break
        prev = m
        m = nxt[U(m)]
    return m, prev


@njit(inline="always", error_model="numpy")
def init_request(requests, q, op, post_s, ready_s):  # type: ignore[no-untyped-def]
    """Fresh state of request slot ``q``, created by operation ``op`` at ``post_s``."""
    requests.ready[U(q)] = ready_s
    requests.sync[U(q)] = -INF  # no partner boundary yet (eqs. 1-2)
    requests.stack1_start[U(q)] = 0.0
    requests.stack1_end[U(q)] = 0.0
    requests.stack2_start[U(q)] = 0.0
    requests.stack2_end[U(q)] = 0.0
    requests.copy_s[U(q)] = 0.0
    requests.post_s[U(q)] = post_s
    requests.op[U(q)] = op


@njit(inline="always", error_model="numpy")
def new_slot(slots, rid, n_refs):  # type: ignore[no-untyped-def]
    """A free state slot for program request ``rid``, holding ``n_refs`` references.

    Freed slots are reused last in, first out, so the per-request state touches only
    as many slots as requests are ever alive at once (``counters[0]``).
    """
    counters = slots.counters
    n_free = counters[1]
    if n_free > 0:
        sl = slots.free[U(n_free - 1)]
        counters[1] = n_free - 1
    else:
        sl = counters[0]
        counters[0] = sl + 1
    slots.slot_of[U(rid)] = sl
    slots.rid[U(sl)] = rid
    slots.refs[U(sl)] = n_refs
    return sl


@njit(inline="always", error_model="numpy")
def release(slots, sl):  # type: ignore[no-untyped-def]
    """Drop one reference to slot ``sl``; the last one returns it to the free list."""
    refs = slots.refs
    counters = slots.counters
    refs[U(sl)] -= 1
    if refs[U(sl)] == 0:
        slots.free[counters[1]] = sl
        counters[1] += 1
