"""Compiled discrete-event kernel of the simulator (numba).

This module holds the hot loop only; :mod:`mpiuq.simulator.engine` is the typed
Python face. Everything here works on flat arrays so that 10^7 events run
without touching the Python interpreter.

Model (see ``docs`` of :mod:`mpiuq.simulator.engine` and the reference paper,
section 3.1 and Figs. 1-3):

* Each rank executes its operation stream on its CPU. Operations with a CPU
  cost (posting headers, copies into pinned buffers, pinning) first advance the
  rank's clock, then take effect, so that every shared-state change (ports,
  queues) happens in global time order.
* Each rank also has a *progress engine* (NIC / progress thread) that performs
  the receiver-side protocol steps triggered by arrivals: posting RDMA gets,
  pinning rendezvous receive buffers, posting acknowledgements. Its steps are
  serialised per rank and are charged to the rank as MPI-stack time when the
  rank is blocked waiting on them.
* Time a rank spends blocked in a wait is split along the completing request's
  milestones: before the partner was ready -> ``sync`` (eqs. 1-4, with the
  deferred-wait forms 3-4 following from starting the clock at the wait);
  inside a software step of the protocol (remote or progress-engine pinning or
  posting) -> ``mpi_stack``; the remainder -> ``network``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from mpiuq.simulator import program_layout as layout
from mpiuq.simulator._jit import njit_no_refcount
from mpiuq.simulator._prefetch import prefetch

# operation codes (must match program.Op)
OP_COMPUTE = 0
OP_ISEND = 1
OP_IRECV = 2
OP_WAIT = 3
OP_WAITALL = 4
OP_MARK = 5

# columns of the operation table ``ops`` (Program.ops; sizes and seconds are arrays)
O_KIND, O_PEER, O_TAG = layout.COL_KIND, layout.COL_PEER, layout.COL_TAG
O_COMM, O_REQ, O_COUNT, O_CALL = layout.COL_COMM, layout.COL_REQ, layout.COL_COUNT, layout.COL_CALL

# event codes
EV_RANK = 0  # resume a rank
EV_HDR = 1  # header (or whole mailbox message) arrived at the receiver
EV_GET_ISSUE = 2  # receiver's progress engine posted the RDMA get: inject get request
EV_GET_ARRIVE = 3  # get request reached the sender's NIC: inject data
EV_DATA = 4  # RDMA data arrived at the receiver
EV_ACK_ISSUE = 5  # receiver's progress engine posted the ack: inject it
EV_ACK = 6  # ack reached the sender: send request complete
EV_PKT = 7  # packet network: inject the next packet of a flow (arg = flow id)
N_EV = 8  # event codes are arg * N_EV + type; decoded with & 7 and >> 3

# flows: every message moves at most four transfers, flow id = message * 4 + stage
STAGE_HDR = 0  # header or mailbox message, sender -> receiver, continues with EV_HDR
STAGE_GET = 1  # RDMA get request, receiver -> sender, continues with EV_GET_ARRIVE
STAGE_DATA = 2  # RDMA data, sender -> receiver, continues with EV_DATA
STAGE_ACK = 3  # rendezvous acknowledgement, receiver -> sender, continues with EV_ACK

# accounting categories
CAT_COMPUTE = 0
CAT_NETWORK = 1
CAT_STACK = 2
CAT_SYNC = 3

# protocols
PROTO_SMALL = 0
PROTO_EAGER = 1
PROTO_RDV = 2

# network kinds
NET_ANALYTIC = 0
NET_ZERO = 1
NET_PACKET = 2

# routing of the packet network
ROUTE_MINIMAL = 0
ROUTE_VALIANT = 1

# link classes of a topology (see mpiuq.simulator.topology)
LINK_INJECTION = 0
LINK_NETWORK = 1
LINK_EJECTION = 2

# indices into the parameter vector (canonical order of parameters.parameter_names())
P_INJ = 0
P_LINK = 1
P_MEM = 2
P_HDR = 3
P_RDMA = 4
P_PINLAT = 5
P_PINPAGE = 6
P_HOP = 7
P_SMALL = 8
P_EAGER = 9
P_PAGE = 10
N_PARAMS = 11

# state of a program request in ``slot_of`` (else its state slot)
SLOT_NONE = -1  # not created yet
SLOT_DONE = -2  # completed and consumed by a wait

#: Size of protocol headers, RDMA get requests and acknowledgements on the wire, bytes.
HEADER_BYTES = 64

INF = np.inf


@nb.njit(cache=True, inline="always", error_model="numpy")
def _less(ta: float, sa: int, tb: float, sb: int) -> bool:
    return (ta < tb) | ((ta == tb) & (sa < sb))  # branch-free: both sides are cheap


@nb.njit(cache=True, inline="always", error_model="numpy")
def _sift_up(h_t, h_s, h_c, n, t, seq, code):  # type: ignore[no-untyped-def]
    """Insert ``(t, seq, code)`` as element ``n`` (capacity must allow it)."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if _less(t, seq, h_t[parent], h_s[parent]):
            h_t[i] = h_t[parent]
            h_s[i] = h_s[parent]
            h_c[i] = h_c[parent]
            i = parent
        else:
            break
    h_t[i] = t
    h_s[i] = seq
    h_c[i] = code


@nb.njit(cache=True, inline="always", error_model="numpy")
def _sift_down(h_t, h_s, h_c, n, t, s, c):  # type: ignore[no-untyped-def]
    """Place ``(t, s, c)`` at the root of a heap of ``n`` elements and restore order."""
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        right = left + 1
        if right < n and _less(h_t[right], h_s[right], h_t[left], h_s[left]):
            child = right
        if _less(h_t[child], h_s[child], t, s):
            h_t[i] = h_t[child]
            h_s[i] = h_s[child]
            h_c[i] = h_c[child]
            i = child
        else:
            break
    h_t[i] = t
    h_s[i] = s
    h_c[i] = c


@nb.njit(cache=True, inline="always", error_model="numpy")
def _push(h_t, h_s, h_c, n, top_live, t, seq, code):  # type: ignore[no-untyped-def]
    """Push an event while the current event may still sit at the root.

    The event loop leaves the event being handled at the root (``top_live``); the
    first push of a handler replaces it (one sift-down instead of a pop and a push).
    Returns the new size and whether the root is still the current event.
    """
    if top_live:
        _sift_down(h_t, h_s, h_c, n, t, seq, code)
        return n, False
    _sift_up(h_t, h_s, h_c, n, t, seq, code)
    return n + 1, False


@nb.njit(cache=True, inline="always", error_model="numpy")
def _runs_next(t, seq, h_t, h_s, n, top_live):  # type: ignore[no-untyped-def]
    """Whether an event ``(t, seq)`` would be the next one popped (fast-path test)."""
    if top_live:
        if n <= 1:
            return True
        best = 1
        if n > 2 and _less(h_t[2], h_s[2], h_t[1], h_s[1]):
            best = 2
        return _less(t, seq, h_t[best], h_s[best])
    return n == 0 or _less(t, seq, h_t[0], h_s[0])


@nb.njit(cache=True, inline="always", error_model="numpy")
def _heap_pop(h_t, h_s, h_c, n):  # type: ignore[no-untyped-def]
    """Remove the root; returns (time, code). ``n`` is the size before removal."""
    t0 = h_t[0]
    c0 = h_c[0]
    n -= 1
    if n > 0:
        _sift_down(h_t, h_s, h_c, n, h_t[n], h_s[n], h_c[n])
    return t0, c0


@nb.njit(cache=True, inline="always", error_model="numpy")
def _overlap(a: float, b: float, lo: float, hi: float) -> float:
    x = min(b, hi) - max(a, lo)
    return x if x > 0.0 else 0.0


@nb.njit(cache=True, error_model="numpy")
def _switch_hops(a_switch, b_switch, next_link, link_dst):  # type: ignore[no-untyped-def]
    """Switch-to-switch links on the minimal route between two switches."""
    n = 0
    cur = a_switch
    while cur != b_switch:
        cur = link_dst[next_link[cur, b_switch]]
        n += 1
    return n


@nb.njit(cache=True, inline="always", error_model="numpy")
def _net_arrival(net_kind, t, src, dst, nbytes, flow, node_of, net_state, net_scalars, topo):  # type: ignore[no-untyped-def]
    """Start moving ``nbytes`` from rank ``src`` to rank ``dst`` at time ``t``.

    Returns the arrival time, or -1 for the packet network, whose flow ``flow`` the
    caller then starts with an EV_PKT event at ``t``. Ranks on the same node
    exchange through memory (no network time).

    * ``NET_ANALYTIC``: eq. (5), ``alpha + beta * N`` with ``beta = 1 / min(B_inj, B_link)``,
      serialising the source node's injection port and delivering in order through the
      destination's ejection port (like MACRELS). With a topology (``node_switch`` not
      empty) ``alpha`` is the hop latency times the links of the minimal route.
    * ``NET_PACKET``: the flow is cut into packets injected one after the other (EV_PKT).
    """
    inj_free, ej_free, flow_rem = net_state
    alpha, hop, inv_inj, inv_link, inv_min = net_scalars
    node_switch, next_link, link_dst = topo
    a = node_of[src]
    b = node_of[dst]
    if net_kind == NET_ZERO or a == b:
        return t
    if net_kind == NET_PACKET:
        flow_rem[flow] = nbytes
        return -1.0
    lat = alpha
    if node_switch.shape[0] > 0:
        lat = hop * (2 + _switch_hops(node_switch[a], node_switch[b], next_link, link_dst))
    start = max(t, inj_free[a])
    inj_free[a] = start + nbytes * inv_inj
    arrive = start + lat + nbytes * inv_min
    serial = ej_free[b] + nbytes * inv_link
    if serial > arrive:
        arrive = serial
    ej_free[b] = arrive
    return arrive


@nb.njit(cache=True, inline="always", error_model="numpy")
def _envelope_matches(comm, src, tag, m_comm, m_src, m_tag):  # type: ignore[no-untyped-def]
    """MPI matching: same communicator, source and tag equal or wildcards (< 0)."""
    return comm == m_comm and (src < 0 or src == m_src) and (tag < 0 or tag == m_tag)


@nb.njit(cache=True, inline="always", error_model="numpy")
def _enqueue(head, tail, nxt, owner, item):  # type: ignore[no-untyped-def]
    """Append ``item`` to the linked-list queue of ``owner`` (FIFO: MPI posting order)."""
    if tail[owner] < 0:
        head[owner] = item
    else:
        nxt[tail[owner]] = item
    tail[owner] = item
    nxt[item] = -1


@nb.njit(cache=True, inline="always", error_model="numpy")
def _unlink(head, tail, nxt, owner, prev, item):  # type: ignore[no-untyped-def]
    """Remove ``item`` (whose predecessor is ``prev``, -1 at the head) from ``owner``'s queue."""
    if prev < 0:
        head[owner] = nxt[item]
    else:
        nxt[prev] = nxt[item]
    if tail[owner] == item:
        tail[owner] = prev
    nxt[item] = -1


@nb.njit(cache=True, inline="always", error_model="numpy")
def _stage_event(stage):  # type: ignore[no-untyped-def]
    """Event that continues a message when the transfer of ``stage`` has arrived."""
    if stage == STAGE_HDR:
        return EV_HDR
    if stage == STAGE_GET:
        return EV_GET_ARRIVE
    if stage == STAGE_DATA:
        return EV_DATA
    return EV_ACK


@nb.njit(cache=True, inline="always", error_model="numpy")
def _transfer_event(net_kind, t, src, dst, nbytes, m, stage, node_of, net_state, net_scalars, topo):  # type: ignore[no-untyped-def]
    """``(time, code)`` of the event that a transfer of message ``m`` starts at ``t``.

    The arrival event of ``stage`` for the analytic and compute-only networks, or the
    first packet injection (EV_PKT) of the flow for the packet network.
    """
    flow = m * 4 + stage
    arr = _net_arrival(net_kind, t, src, dst, nbytes, flow, node_of, net_state, net_scalars, topo)
    if arr < 0.0:
        return t, flow * N_EV + EV_PKT
    return arr, m * N_EV + _stage_event(stage)


@nb.njit(cache=True, inline="always", error_model="numpy")
def _match(m, q, t, prog_free, requests, messages, slots, costs):  # type: ignore[no-untyped-def]
    """Match message ``m`` with receive ``q`` (state slots) at time ``t``, the later of
    arrival and post.

    Sets what the receive waits for (eq. 2: the partner is ready at TSend; stack
    intervals on its critical path; the copy-out) and, for rendezvous, the sender's
    sync boundary (eq. 1: TPostRecv); records the match by program request id.
    Returns when the receiver's progress engine has pinned and posted the RDMA get
    (rendezvous), or -1.
    """
    rq_ready, rq_sync, rq_s1a, rq_s1b, _s2a, _s2b, rq_copy, rq_post, _op = requests
    _src, m_dst, _tag, _comm, m_bytes, m_proto, m_tsend, m_match, m_data, m_pa, m_pb = messages
    slot_rid, matched = slots[1], slots[4]
    inv_mem, pin_lat, pin_page, page, d_rdma = costs
    m_match[m] = q
    matched[slot_rid[m]] = slot_rid[q]
    rq_sync[q] = m_tsend[m]
    p = m_proto[m]
    if p == PROTO_SMALL:
        rq_copy[q] = m_bytes[m] * inv_mem
        rq_ready[q] = t
        return -1.0
    if p == PROTO_EAGER:
        # the get was posted when the header arrived (Fig. 2); done if the data is in
        rq_copy[q] = m_bytes[m] * inv_mem
        rq_s1a[q] = m_pa[m]
        rq_s1b[q] = m_pb[m]
        if m_data[m] <= t:
            rq_ready[q] = t
        return -1.0
    dst = m_dst[m]
    start = max(t, prog_free[dst])
    end = start + pin_lat + np.ceil(m_bytes[m] / page) * pin_page + d_rdma
    prog_free[dst] = end
    rq_s1a[q] = start
    rq_s1b[q] = end
    rq_s1a[m] = start
    rq_s1b[m] = end
    rq_sync[m] = rq_post[q]
    return end


@nb.njit(cache=True, inline="always", error_model="numpy")
def _init_request(requests, q, op, post_s, ready_s):  # type: ignore[no-untyped-def]
    """Fresh state of request slot ``q``, created by operation ``op`` at ``post_s``."""
    rq_ready, rq_sync, rq_s1a, rq_s1b, rq_s2a, rq_s2b, rq_copy, rq_post, rq_op = requests
    rq_ready[q] = ready_s
    rq_sync[q] = -INF  # no partner boundary yet (eqs. 1-2)
    rq_s1a[q] = 0.0
    rq_s1b[q] = 0.0
    rq_s2a[q] = 0.0
    rq_s2b[q] = 0.0
    rq_copy[q] = 0.0
    rq_post[q] = post_s
    rq_op[q] = op


@nb.njit(cache=True, inline="always", error_model="numpy")
def _new_slot(slots, rid, n_refs):  # type: ignore[no-untyped-def]
    """A free state slot for program request ``rid``, holding ``n_refs`` references.

    Freed slots are reused last in, first out, so the per-request state touches only
    as many slots as requests are ever alive at once (``counters[0]``).
    """
    slot_of, slot_rid, refs, free, _matched, counters = slots
    n_free = counters[1]
    if n_free > 0:
        sl = free[n_free - 1]
        counters[1] = n_free - 1
    else:
        sl = counters[0]
        counters[0] = sl + 1
    slot_of[rid] = sl
    slot_rid[sl] = rid
    refs[sl] = n_refs
    return sl


@nb.njit(cache=True, inline="always", error_model="numpy")
def _release(slots, sl):  # type: ignore[no-untyped-def]
    """Drop one reference to slot ``sl``; the last one returns it to the free list."""
    refs, free, counters = slots[2], slots[3], slots[5]
    refs[sl] -= 1
    if refs[sl] == 0:
        free[counters[1]] = sl
        counters[1] += 1


@nb.njit(cache=True, error_model="numpy")
def _valiant_switch(flow, n_switches, seed):  # type: ignore[no-untyped-def]
    """Deterministic pseudo-random intermediate switch of a flow (splitmix64 hash)."""
    z = (flow * 4 + seed * 7919 + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z = z ^ (z >> 31)
    return z % n_switches


@njit_no_refcount(nogil=True, error_model="numpy")
def _event_loop(  # type: ignore[no-untyped-def]
    program,
    node_of,
    state,
    topology,
    costs_s,
    sizes,
    switches,
):
    """The event loop of :func:`run_program` on the state of :func:`new_state`.

    Compiled without numba's reference counting (``_nrt=False``): it allocates
    nothing, and the atomic reference-count updates that passing arrays to inlined
    helpers otherwise costs were a tenth of the run time. Returns the event count.
    """
    rank_ptr, ops, nbytes, seconds, wait_list = program
    rank_state, queues, requests, messages, network, heap, slots, waits = state
    act, act_ptr, act_n = waits
    pc, phase, blocked, wait_mark, end_s, acc, acc_call, marks, prog_free = rank_state
    pq_head, pq_tail, uq_head, uq_tail, nxt = queues
    rq_ready, rq_sync, rq_s1a, rq_s1b, rq_s2a, rq_s2b, rq_copy, _post, rq_op = requests
    slot_of, slot_rid = slots[0], slots[1]
    m_src, m_dst, m_tag, m_comm, m_bytes, m_proto, m_tsend, m_match, m_data, m_pa, m_pb = messages
    inj_free, ej_free, flow_rem, link_busy, link_bytes, link_inv = network
    link_dst, node_switch, inj_link, ej_link, next_link, switch_level, up_links = topology
    h_t, h_s, h_c = heap
    inv_inj, inv_link, inv_min, inv_mem, d_hdr, d_rdma, pin_lat, pin_page, hop, alpha = costs_s
    small_max, eager_max, page, compute_scale, packet_bytes = sizes
    net_kind, routing, route_seed, up_radix = switches
    n_ranks = rank_ptr.shape[0] - 1
    n_switches = next_link.shape[0]
    cap = h_t.shape[0]
    net_state = (inj_free, ej_free, flow_rem)
    net_scalars = (alpha, hop, inv_inj, inv_link, inv_min)
    topo = (node_switch, next_link, link_dst)
    costs = (inv_mem, pin_lat, pin_page, page, d_rdma)
    hn = 0
    seq = 0
    for r in range(n_ranks):
        _sift_up(h_t, h_s, h_c, hn, 0.0, seq, r * N_EV + EV_RANK)
        hn += 1
        seq += 1
    n_events = 0
    while hn > 0:
        # the current event stays at the root until the handler's first push replaces
        # it, or it is popped after the handler (top_live)
        t = h_t[0]
        code = h_c[0]
        top_live = True
        if hn >= cap:  # an engine bug, not a property of the program
            raise RuntimeError("event heap overflow: more pending events than ranks + messages")
        n_events += 1
        ev = code & (N_EV - 1)  # N_EV is a power of two
        arg = code >> 3
        if ev == EV_RANK:
            r = arg
            blocked[r] = False
            while True:
                i = pc[r]
                if i >= rank_ptr[r + 1]:
                    end_s[r] = t
                    break
                k = ops[i, O_KIND]
                c = ops[i, O_CALL]
                if k == OP_COMPUTE:
                    if phase[r] == 0:
                        d = seconds[i] * compute_scale
                        acc[r, CAT_COMPUTE] += d
                        acc_call[c, CAT_COMPUTE] += d
                        if d > 0.0:
                            phase[r] = 1
                            tn = t + d
                            if _runs_next(tn, seq, h_t, h_s, hn, top_live):
                                # fast path: this resume would be the next event anyway
                                t = tn
                                seq += 1
                                continue
                            hn, top_live = _push(
                                h_t, h_s, h_c, hn, top_live, tn, seq, r * N_EV + EV_RANK
                            )
                            seq += 1
                            break
                    phase[r] = 0
                    pc[r] = i + 1
                elif k == OP_ISEND:
                    rid = ops[i, O_REQ]
                    nb_ = nbytes[i]
                    if phase[r] == 0:
                        if nb_ <= small_max:
                            proto = PROTO_SMALL
                            cost = d_hdr
                        elif nb_ <= eager_max:
                            proto = PROTO_EAGER
                            cost = nb_ * inv_mem + d_hdr
                        else:
                            proto = PROTO_RDV
                            pages = np.ceil(nb_ / page)
                            cost = pin_lat + pages * pin_page + d_hdr
                        # references: the wait, and the protocol (matching, plus the
                        # data for eager; the acknowledgement for rendezvous)
                        m = _new_slot(slots, rid, 3 if proto == PROTO_EAGER else 2)
                        m_proto[m] = proto
                        acc[r, CAT_STACK] += cost
                        acc_call[c, CAT_STACK] += cost
                        if cost > 0.0:
                            phase[r] = 1
                            tn = t + cost
                            if _runs_next(tn, seq, h_t, h_s, hn, top_live):
                                t = tn
                                seq += 1
                                continue
                            hn, top_live = _push(
                                h_t, h_s, h_c, hn, top_live, tn, seq, r * N_EV + EV_RANK
                            )
                            seq += 1
                            break
                    # effect: the message leaves at TSend = t
                    m = slot_of[rid]
                    phase[r] = 0
                    pc[r] = i + 1
                    dst = ops[i, O_PEER]
                    # eager sends complete locally
                    _init_request(requests, m, i, t, t if m_proto[m] != PROTO_RDV else INF)
                    m_match[m] = -1
                    m_data[m] = INF
                    m_src[m] = r
                    m_dst[m] = dst
                    m_tag[m] = ops[i, O_TAG]
                    m_comm[m] = ops[i, O_COMM]
                    m_bytes[m] = nb_
                    m_tsend[m] = t
                    wire = HEADER_BYTES
                    if m_proto[m] == PROTO_SMALL:
                        wire += nb_
                    te, tc = _transfer_event(
                        net_kind,
                        t,
                        r,
                        dst,
                        wire,
                        m,
                        STAGE_HDR,
                        node_of,
                        net_state,
                        net_scalars,
                        topo,
                    )
                    hn, top_live = _push(h_t, h_s, h_c, hn, top_live, te, seq, tc)
                    seq += 1
                elif k == OP_IRECV:
                    q = _new_slot(slots, ops[i, O_REQ], 1)  # the wait's reference
                    _init_request(requests, q, i, t, INF)
                    pc[r] = i + 1
                    # search the unexpected queue in arrival order
                    prev = -1
                    m = uq_head[r]
                    src = ops[i, O_PEER]
                    tg = ops[i, O_TAG]
                    cm = ops[i, O_COMM]
                    while m >= 0:
                        if _envelope_matches(cm, src, tg, m_comm[m], m_src[m], m_tag[m]):
                            break
                        prev = m
                        m = nxt[m]
                    if m < 0:
                        _enqueue(pq_head, pq_tail, nxt, r, q)
                    else:
                        _unlink(uq_head, uq_tail, nxt, r, prev, m)
                        get_at = _match(m, q, t, prog_free, requests, messages, slots, costs)
                        if get_at >= 0.0:
                            hn, top_live = _push(
                                h_t, h_s, h_c, hn, top_live, get_at, seq, m * N_EV + EV_GET_ISSUE
                            )
                            seq += 1
                        if m_proto[m] != PROTO_RDV:
                            _release(slots, m)  # matched: the protocol's reference
                elif k in (OP_WAIT, OP_WAITALL):
                    base = act_ptr[r]
                    if phase[r] == 0:
                        wait_mark[r] = t
                        phase[r] = 2
                        # the requests this wait still needs, in order; completed ones
                        # are dropped as the list is scanned (a wait-all of k requests
                        # is woken about 2k times: rescanning all of them cost k^2)
                        if k == OP_WAIT:
                            act[base] = ops[i, O_REQ]
                            act_n[r] = 1
                        else:
                            lo = ops[i, O_REQ]
                            for j in range(ops[i, O_COUNT]):
                                act[base + j] = wait_list[lo + j]
                            act_n[r] = ops[i, O_COUNT]
                    best = -1
                    best_rid = -1
                    best_t = INF
                    pending = False
                    kept = base
                    for j in range(base, base + act_n[r]):
                        rid = act[j]
                        q = slot_of[rid]
                        if q == SLOT_DONE:
                            continue
                        act[kept] = rid
                        kept += 1
                        if q >= 0 and rq_ready[q] <= t:
                            if rq_ready[q] < best_t:
                                best_t = rq_ready[q]
                                best = q
                                best_rid = rid
                        else:
                            pending = True  # not complete, or not even created yet
                    act_n[r] = kept - base
                    if best >= 0:
                        # split the blocked interval [wait_mark, t] along best's milestones
                        a = wait_mark[r]
                        b = t
                        if b > a:
                            s = rq_sync[best]
                            sync = min(s, b) - a
                            if sync < 0.0:
                                sync = 0.0
                            mid = max(a, s)
                            stk = _overlap(mid, b, rq_s1a[best], rq_s1b[best]) + _overlap(
                                mid, b, rq_s2a[best], rq_s2b[best]
                            )
                            net = (b - mid) - stk if b > mid else 0.0
                            acc[r, CAT_SYNC] += sync
                            acc[r, CAT_STACK] += stk
                            acc[r, CAT_NETWORK] += net
                            acc_call[c, CAT_SYNC] += sync
                            acc_call[c, CAT_STACK] += stk
                            acc_call[c, CAT_NETWORK] += net
                        cp = rq_copy[best]
                        slot_of[best_rid] = SLOT_DONE
                        _release(slots, best)  # the wait's reference
                        wait_mark[r] = t + cp
                        if cp > 0.0:
                            acc[r, CAT_STACK] += cp
                            acc_call[c, CAT_STACK] += cp
                            tn = t + cp
                            if _runs_next(tn, seq, h_t, h_s, hn, top_live):
                                t = tn
                                seq += 1
                                continue
                            hn, top_live = _push(
                                h_t, h_s, h_c, hn, top_live, tn, seq, r * N_EV + EV_RANK
                            )
                            seq += 1
                            break
                        continue
                    if pending:
                        blocked[r] = True
                        break
                    phase[r] = 0
                    pc[r] = i + 1
                else:  # OP_MARK
                    marks[ops[i, O_REQ]] = t
                    pc[r] = i + 1
            # the rank yields: fetch what it reads next while other events run
            nx = pc[r]
            if nx + 4 < rank_ptr[r + 1]:
                prefetch(ops, nx + 2)
                prefetch(ops, nx + 4)
                prefetch(nbytes, nx + 4)
                prefetch(seconds, nx + 4)
        elif ev == EV_HDR:
            m = arg
            dst = m_dst[m]
            p = m_proto[m]
            if p == PROTO_EAGER:
                # the receiver fetches eager data as soon as the header is in (Fig. 2)
                start = max(t, prog_free[dst])
                prog_free[dst] = start + d_rdma
                m_pa[m] = start
                m_pb[m] = start + d_rdma
                hn, top_live = _push(
                    h_t, h_s, h_c, hn, top_live, start + d_rdma, seq, m * N_EV + EV_GET_ISSUE
                )
                seq += 1
            # search the posted-receive queue in posting order
            prev = -1
            q = pq_head[dst]
            while q >= 0:
                j = rq_op[q]
                src = ops[j, O_PEER]
                tg = ops[j, O_TAG]
                if _envelope_matches(ops[j, O_COMM], src, tg, m_comm[m], m_src[m], m_tag[m]):
                    break
                prev = q
                q = nxt[q]
            if q < 0:
                _enqueue(uq_head, uq_tail, nxt, dst, m)
            else:
                _unlink(pq_head, pq_tail, nxt, dst, prev, q)
                get_at = _match(m, q, t, prog_free, requests, messages, slots, costs)
                if get_at >= 0.0:
                    hn, top_live = _push(
                        h_t, h_s, h_c, hn, top_live, get_at, seq, m * N_EV + EV_GET_ISSUE
                    )
                    seq += 1
                if m_proto[m] != PROTO_RDV:
                    _release(slots, m)  # matched: the protocol's reference
                if rq_ready[q] <= t and blocked[dst]:
                    blocked[dst] = False
                    hn, top_live = _push(h_t, h_s, h_c, hn, top_live, t, seq, dst * N_EV + EV_RANK)
                    seq += 1
        elif ev == EV_GET_ISSUE:
            m = arg
            te, tc = _transfer_event(
                net_kind,
                t,
                m_dst[m],
                m_src[m],
                HEADER_BYTES,
                m,
                STAGE_GET,
                node_of,
                net_state,
                net_scalars,
                topo,
            )
            hn, top_live = _push(h_t, h_s, h_c, hn, top_live, te, seq, tc)
            seq += 1
        elif ev == EV_GET_ARRIVE:
            m = arg
            te, tc = _transfer_event(
                net_kind,
                t,
                m_src[m],
                m_dst[m],
                m_bytes[m],
                m,
                STAGE_DATA,
                node_of,
                net_state,
                net_scalars,
                topo,
            )
            hn, top_live = _push(h_t, h_s, h_c, hn, top_live, te, seq, tc)
            seq += 1
        elif ev == EV_DATA:
            m = arg
            m_data[m] = t
            q = m_match[m]
            dst = m_dst[m]
            if m_proto[m] == PROTO_RDV:
                # zero copy: the receive is complete; the progress engine acknowledges
                start = max(t, prog_free[dst])
                prog_free[dst] = start + d_hdr
                rq_s2a[m] = start
                rq_s2b[m] = start + d_hdr
                hn, top_live = _push(
                    h_t, h_s, h_c, hn, top_live, start + d_hdr, seq, m * N_EV + EV_ACK_ISSUE
                )
                seq += 1
            if q >= 0:
                rq_ready[q] = t
                if blocked[dst]:
                    blocked[dst] = False
                    hn, top_live = _push(h_t, h_s, h_c, hn, top_live, t, seq, dst * N_EV + EV_RANK)
                    seq += 1
            if m_proto[m] == PROTO_EAGER:
                _release(slots, m)  # the data's reference
        elif ev == EV_ACK_ISSUE:
            m = arg
            te, tc = _transfer_event(
                net_kind,
                t,
                m_dst[m],
                m_src[m],
                HEADER_BYTES,
                m,
                STAGE_ACK,
                node_of,
                net_state,
                net_scalars,
                topo,
            )
            hn, top_live = _push(h_t, h_s, h_c, hn, top_live, te, seq, tc)
            seq += 1
        elif ev == EV_PKT:
            f = arg
            m = f // 4
            stage = f % 4
            if stage in (STAGE_HDR, STAGE_DATA):
                na = node_of[m_src[m]]
                nb_node = node_of[m_dst[m]]
            else:
                na = node_of[m_dst[m]]
                nb_node = node_of[m_src[m]]
            rem = flow_rem[f]
            pkt = min(packet_bytes, rem)
            # first link: the source node's injection link
            lk = inj_link[na]
            e = max(t, link_busy[lk])
            tail = e + pkt * link_inv[lk]
            link_busy[lk] = tail
            link_bytes[lk] += pkt
            first_tail = tail
            cur = node_switch[na]
            target = node_switch[nb_node]
            goal = target
            if routing == ROUTE_VALIANT and cur != target:
                mid = _valiant_switch(slot_rid[m], n_switches, route_seed)
                if mid != cur and mid != target:
                    goal = mid
            # cut-through along the route: the head advances one hop latency per link,
            # the tail cannot leave a link before it left the previous one
            while True:
                while cur != goal:
                    lk = next_link[cur, goal]
                    if (
                        up_radix > 0
                        and goal == target
                        and switch_level[link_dst[lk]] > switch_level[cur]
                    ):
                        # fat-tree d-mod-k: the up-port depends on the destination node
                        # (only on the leg to the destination: a valiant leg heads for
                        # a given intermediate switch)
                        lk = up_links[cur, (nb_node // up_radix ** switch_level[cur]) % up_radix]
                    e = max(e + hop, link_busy[lk])
                    tail = max(e + pkt * link_inv[lk], tail + hop)
                    link_busy[lk] = tail
                    link_bytes[lk] += pkt
                    cur = link_dst[lk]
                if goal == target:
                    break
                goal = target
            lk = ej_link[nb_node]
            e = max(e + hop, link_busy[lk])
            tail = max(e + pkt * link_inv[lk], tail + hop)
            link_busy[lk] = tail
            link_bytes[lk] += pkt
            arrive = tail + hop
            rem -= pkt
            flow_rem[f] = rem
            if rem > 0.0:
                next_t = first_tail
                next_code = f * N_EV + EV_PKT
            else:
                next_t = arrive
                next_code = m * N_EV + _stage_event(stage)
            hn, top_live = _push(h_t, h_s, h_c, hn, top_live, next_t, seq, next_code)
            seq += 1
        else:  # EV_ACK
            m = arg
            rq_ready[m] = t
            src = m_src[m]
            _release(slots, m)  # the acknowledgement's reference
            if blocked[src]:
                blocked[src] = False
                hn, top_live = _push(h_t, h_s, h_c, hn, top_live, t, seq, src * N_EV + EV_RANK)
                seq += 1
        if top_live:
            _heap_pop(h_t, h_s, h_c, hn)
            hn -= 1
    return n_events


def new_state(n_ranks, n_requests, n_calls, n_marks, n_nodes, n_links, n_flows, wait_ptr):  # type: ignore[no-untyped-def]
    """Fresh simulation state for :func:`run_program`: a tuple of tuples of arrays.

    ``(ranks, queues, requests, messages, network, heap, slots, waits)``;
    ``wait_ptr`` comes from :func:`wait_offsets`. Plain NumPy, so that callers allocate large state through
    NumPy (which asks the kernel for huge pages, cutting page-fault time for a
    million requests by about four); :func:`new_state_compiled` is the same function
    compiled for loops over parameter sets.
    """
    ranks = (
        np.zeros(n_ranks, np.int64),  # pc: next operation (set by run_program)
        np.zeros(n_ranks, np.int64),  # phase: 0 fresh, 1 cost paid, 2 waiting
        np.zeros(n_ranks, np.bool_),  # blocked in a wait
        np.zeros(n_ranks, np.float64),  # wait_mark: start of the unaccounted wait
        np.zeros(n_ranks, np.float64),  # end_s
        np.zeros((n_ranks, 4), np.float64),  # acc: compute, network, stack, sync
        np.zeros((n_calls, 4), np.float64),  # acc_call
        np.full(n_marks, np.nan),  # marks
        np.zeros(n_ranks, np.float64),  # prog_free: progress engine busy until
    )
    # Per-request state lives in slots (see _new_slot), indexed like the program's
    # request ids but reused once a request is complete: np.empty pages that are
    # never used cost nothing, and every field is set when its slot is taken.
    # matching queues: singly linked lists through slots
    queues = (
        np.full(n_ranks, -1, np.int64),  # posted-receive queue head
        np.full(n_ranks, -1, np.int64),  # ... tail
        np.full(n_ranks, -1, np.int64),  # unexpected-message queue head
        np.full(n_ranks, -1, np.int64),  # ... tail
        np.empty(n_requests, np.int64),  # next in queue
    )
    requests = (
        np.empty(n_requests, np.float64),  # ready: completion time
        np.empty(n_requests, np.float64),  # sync: partner ready at (eqs. 1-2)
        np.empty(n_requests, np.float64),  # first stack interval start
        np.empty(n_requests, np.float64),  # ... end
        np.empty(n_requests, np.float64),  # second stack interval start
        np.empty(n_requests, np.float64),  # ... end
        np.empty(n_requests, np.float64),  # copy-out seconds at the wait
        np.empty(n_requests, np.float64),  # post time of receives
        np.empty(n_requests, np.int64),  # creating operation
    )
    # a message is the slot of its send request
    messages = (
        np.empty(n_requests, np.int32),  # source rank
        np.empty(n_requests, np.int32),  # destination rank
        np.empty(n_requests, np.int32),  # tag
        np.empty(n_requests, np.int32),  # communicator
        np.empty(n_requests, np.int64),  # bytes
        np.empty(n_requests, np.int8),  # protocol
        np.empty(n_requests, np.float64),  # TSend
        np.empty(n_requests, np.int64),  # matched receive slot (-1: none yet)
        np.empty(n_requests, np.float64),  # data arrival
        np.empty(n_requests, np.float64),  # eager get posting start
        np.empty(n_requests, np.float64),  # ... end
    )
    slots = (
        np.full(n_requests, SLOT_NONE, np.int64),  # slot of each program request
        np.empty(n_requests, np.int64),  # program request of each slot
        np.empty(n_requests, np.int8),  # references held on each slot
        np.empty(n_requests, np.int64),  # free-slot stack
        np.full(n_requests, -1, np.int64),  # matched receive request of each send
        np.zeros(2, np.int64),  # slots ever used, free slots on the stack
    )
    network = (
        np.zeros(n_nodes, np.float64),  # injection port free at
        np.zeros(n_nodes, np.float64),  # ejection port free at
        np.empty(n_flows, np.float64),  # bytes left per packet flow (set when it starts)
        np.zeros(n_links, np.float64),  # link busy until
        np.zeros(n_links, np.float64),  # bytes carried per link
        np.zeros(n_links, np.float64),  # seconds per byte per link (set by run_program)
    )
    # at most one pending event per rank (its resume) and per message (the next step
    # of its protocol), so this capacity is never exceeded; untouched pages cost nothing
    cap = n_ranks + n_requests + 1
    heap = (np.empty(cap, np.float64), np.empty(cap, np.int64), np.empty(cap, np.int64))
    # per rank, room for the requests of its largest wait (see wait_offsets)
    waits = (np.empty(wait_ptr[-1], np.int64), wait_ptr, np.zeros(n_ranks, np.int64))
    return ranks, queues, requests, messages, network, heap, slots, waits


new_state_compiled = nb.njit(cache=True, nogil=True)(new_state)


@nb.njit(cache=True, nogil=True)
def wait_offsets(rank_ptr, ops):  # type: ignore[no-untyped-def]
    """Per rank, the offset of its room for one wait's requests (``n_ranks + 1``).

    The room holds the rank's largest ``WAITALL`` (at least one request).
    """
    n_ranks = rank_ptr.shape[0] - 1
    ptr = np.zeros(n_ranks + 1, np.int64)
    for r in range(n_ranks):
        room = 1
        for i in range(rank_ptr[r], rank_ptr[r + 1]):
            if ops[i, O_KIND] == OP_WAITALL and ops[i, O_COUNT] > room:
                room = ops[i, O_COUNT]
        ptr[r + 1] = ptr[r] + room
    return ptr


@nb.njit(cache=True, nogil=True, error_model="numpy")
def run_program(  # type: ignore[no-untyped-def]
    rank_ptr,
    ops,
    nbytes,
    seconds,
    wait_list,
    params,
    node_of,
    n_nodes,
    hops,
    net_kind,
    zero_overhead,
    compute_scale,
    link_class,
    link_dst,
    node_switch,
    inj_link,
    ej_link,
    next_link,
    switch_level,
    up_links,
    up_radix,
    routing,
    packet_bytes,
    route_seed,
    state,
):
    """Simulate one program with one parameter vector.

    ``link_class .. next_link`` describe the topology (empty arrays for the
    two-node and analytic networks without topology); ``routing``,
    ``packet_bytes`` and ``route_seed`` configure the packet network. ``state``
    comes from :func:`new_state` (updated in place).

    Returns
    -------
    end_s : float64 (n_ranks,)
    acc : float64 (n_ranks, 4)        compute, network, mpi_stack, sync seconds
    acc_call : float64 (n_calls, 4)
    marks : float64 (n_marks,)
    n_events : int
    pc : int64 (n_ranks,)             next operation of each rank (== end when finished)
    matched : int64 (n_requests,)     matched receive request of each send (-1 if none)
    link_bytes : float64 (n_links,)   bytes carried by each link (packet network)
    """
    # ---- parameters in SI units
    inv_inj = 1.0 / (params[P_INJ] * 1e9)
    inv_link = 1.0 / (params[P_LINK] * 1e9)
    inv_min = max(inv_inj, inv_link)
    inv_mem = 1.0 / (params[P_MEM] * 1e9)
    d_hdr = params[P_HDR] * 1e-6
    d_rdma = params[P_RDMA] * 1e-6
    pin_lat = params[P_PINLAT] * 1e-6
    pin_page = params[P_PINPAGE] * 1e-9
    hop = params[P_HOP] * 1e-9
    alpha = hops * hop
    small_max = params[P_SMALL]
    eager_max = params[P_EAGER]
    page = params[P_PAGE]
    if zero_overhead:
        inv_mem = 0.0
        d_hdr = 0.0
        d_rdma = 0.0
        pin_lat = 0.0
        pin_page = 0.0
    pc, end_s, acc, acc_call, marks = (
        state[0][0],
        state[0][4],
        state[0][5],
        state[0][6],
        state[0][7],
    )
    matched = state[6][4]
    link_bytes, link_inv = state[4][4], state[4][5]
    pc[:] = rank_ptr[:-1]
    for lk in range(link_inv.shape[0]):
        link_inv[lk] = inv_inj if link_class[lk] == LINK_INJECTION else inv_link
    n_events = _event_loop(
        (rank_ptr, ops, nbytes, seconds, wait_list),
        node_of,
        state,
        (link_dst, node_switch, inj_link, ej_link, next_link, switch_level, up_links),
        (inv_inj, inv_link, inv_min, inv_mem, d_hdr, d_rdma, pin_lat, pin_page, hop, alpha),
        (small_max, eager_max, page, compute_scale, packet_bytes),
        (net_kind, routing, route_seed, up_radix),
    )
    return end_s, acc, acc_call, marks, n_events, pc, matched, link_bytes


@nb.njit(cache=True, nogil=True, error_model="numpy")
def run_batch(  # type: ignore[no-untyped-def]
    rank_ptr,
    ops,
    nbytes,
    seconds,
    wait_list,
    n_requests,
    n_calls,
    n_marks,
    params_matrix,
    node_of,
    n_nodes,
    hops,
    net_kind,
):
    """Run one program under many parameter vectors (releases the GIL: callers may
    run slices of ``params_matrix`` in parallel threads).

    Returns ``marks (n_sets, n_marks)``, ``acc (n_sets, n_ranks, 4)``,
    ``end (n_sets, n_ranks)``, ``unfinished (n_sets,)`` and the total event count.
    """
    n_sets = params_matrix.shape[0]
    n_ranks = rank_ptr.shape[0] - 1
    marks = np.empty((n_sets, n_marks), np.float64)
    acc = np.empty((n_sets, n_ranks, 4), np.float64)
    end = np.empty((n_sets, n_ranks), np.float64)
    unfinished = np.zeros(n_sets, np.int64)
    events = np.zeros(n_sets, np.int64)
    no_i8 = np.zeros(0, np.int8)
    no_i4 = np.zeros(0, np.int32)
    no_i4_2d = np.zeros((0, 0), np.int32)
    wait_ptr = wait_offsets(rank_ptr, ops)
    for s in range(n_sets):
        state = new_state_compiled(n_ranks, n_requests, n_calls, n_marks, n_nodes, 0, 0, wait_ptr)
        e, a, _ac, mk, ne, pcs, _mm, _lb = run_program(
            rank_ptr,
            ops,
            nbytes,
            seconds,
            wait_list,
            params_matrix[s],
            node_of,
            n_nodes,
            hops,
            net_kind,
            False,
            1.0,
            no_i8,
            no_i4,
            no_i4,
            no_i4,
            no_i4,
            no_i4_2d,
            no_i4,
            no_i4_2d,
            0,
            0,
            1.0,
            0,
            state,
        )
        marks[s] = mk
        acc[s] = a
        end[s] = e
        events[s] = ne
        for r in range(n_ranks):
            if pcs[r] < rank_ptr[r + 1]:
                unfinished[s] += 1
    return marks, acc, end, unfinished, events.sum()
