"""Compiled loops of the trace lowering (numba).

:mod:`mpiuq.simulator.lowering.lower` chooses, with array operations, the collective
schedule template of each collective call and the requests each wait-all keeps.
:func:`plan_rows` then counts, in one pass, the program rows, fresh requests and
wait-list entries of every trace operation, and :func:`emit_program` writes the
rows in a second. Doing this with array operations took about 40 passes over the
operations (0.4 s for a million of them).
"""

from __future__ import annotations

from mpiuq.simulator import codes
from mpiuq.simulator.codes import (
    NO_PEER,
    OP_COMPUTE,
    OP_IRECV,
    OP_ISEND,
    OP_WAIT,
    OP_WAITALL,
    OP_WAITANY,
    TPL_BYTES,
    TPL_COUNT,
    TPL_KIND,
    TPL_PEER,
    TPL_REQ,
    TRACE_COMPUTE,
    TRACE_IRECV,
    TRACE_ISEND,
    TRACE_RECV,
    TRACE_SEND,
    TRACE_SENDRECV,
    TRACE_WAIT,
    TRACE_WAITALL,
    TRACE_WAITANY,
)
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit


@njit()
def plan_rows(  # type: ignore[no-untyped-def]
    kind, seconds, request, nbc_request, t_len, t_req, w_len, tid, n_requests, n_user_wl, plan
):
    """Row, request and wait-list layout of every trace operation (filled into ``plan``).

    Parameters
    ----------
    kind, seconds, request
        Trace columns.
    nbc_request
        Per trace request: whether it belongs to a nonblocking collective (its
        ``WAIT`` becomes a no-op).
    t_len, t_req, w_len
        Rows, fresh requests and wait-list entries of each schedule template.
    tid
        Template of each collective call, in trace order.
    n_requests, n_user_wl
        The trace's request count (fresh ids follow) and the number of wait-list
        entries the user wait-alls keep (fresh entries follow).
    plan
        ``(out_ptr (n + 1,), req_base, wl_base, slot)`` to fill (int64 ``out_ptr``; the
        others may be int32, when the returned totals fit): first row (and end),
        first fresh request and wait-list entry of each operation, and its index
        among the collectives (collectives) or wait lists (``WAITALL``, ``WAITANY``), else -1.

    Returns
    -------
    (rows, requests, wait_list_length) of the program.
    """
    plan = borrowed(plan)
    out_ptr, req_base, wl_base, slot = plan
    rows = 0
    req = n_requests
    wl = n_user_wl
    n_coll = 0
    n_wa = 0
    for i in range(kind.shape[0]):
        k = kind[i]
        out_ptr[i] = rows
        req_base[i] = req
        wl_base[i] = wl
        slot[i] = -1
        if k == TRACE_COMPUTE:
            if seconds[i] > 0.0:
                rows += 1
        elif k in (TRACE_ISEND, TRACE_IRECV):
            rows += 1
        elif k in (TRACE_SEND, TRACE_RECV):
            rows += 2
            req += 1
        elif k == TRACE_SENDRECV:
            rows += 3
            req += 2
            wl += 2
        elif k == TRACE_WAIT:
            if not nbc_request[request[i]]:
                rows += 1
        elif k in (TRACE_WAITALL, TRACE_WAITANY):
            rows += 1
            slot[i] = n_wa
            n_wa += 1
        else:
            tp = tid[n_coll]
            rows += t_len[tp]
            req += t_req[tp]
            wl += w_len[tp]
            slot[i] = n_coll
            n_coll += 1
    out_ptr[kind.shape[0]] = rows
    return rows, req, wl


@njit(inline="always")
def _row(out, at, kind, peer, tag, comm, nbytes, req, count, seconds):  # type: ignore[no-untyped-def]
    ops, o_nbytes, o_seconds = out
    ops[at, codes.COL_KIND] = kind
    ops[at, codes.COL_PEER] = peer
    ops[at, codes.COL_TAG] = tag
    ops[at, codes.COL_COMM] = comm
    ops[at, codes.COL_REQ] = req
    ops[at, codes.COL_COUNT] = count
    # the value a row's kind reads is written last: the lowering's nbytes and seconds
    # are two views of one column (see Program)
    if kind == OP_COMPUTE:
        o_nbytes[at] = nbytes
        o_seconds[at] = seconds
    else:
        o_seconds[at] = seconds
        o_nbytes[at] = nbytes


@njit(inline="always")
def _emit_collective(out, wait_list, bases, j, collectives, templates, comm_tables, rates):  # type: ignore[no-untyped-def]
    """Write the rows of collective call ``j`` (of :func:`emit_program`): its template's
    rows at ``at`` (``n_out`` of them), peers mapped through the communicator, requests
    from ``rb`` and wait-list entries from ``wb`` (``bases = (at, n_out, rb, wb)``)."""
    at, n_out, rb, wb = bases
    tid, c_comm, c_tag, c_op_s = collectives[0], collectives[1], collectives[2], collectives[3]
    t_first, rows_pool, combine_pool, w_first, w_len, w_pool = templates
    comm_members, comm_ptr, coll_comm_base = comm_tables
    reduce_rate = rates[1]
    tp = tid[j]
    src = t_first[tp]
    members = comm_ptr[c_comm[j]]
    cc = coll_comm_base + c_comm[j]
    for r in range(n_out):
        rk = rows_pool[src + r, TPL_KIND]
        nb_ = rows_pool[src + r, TPL_BYTES]
        cnt = rows_pool[src + r, TPL_COUNT]
        if rk in (OP_ISEND, OP_IRECV):
            pr = comm_members[members + rows_pool[src + r, TPL_PEER]]
            q = rows_pool[src + r, TPL_REQ] + rb
            _row(out, at + r, rk, pr, c_tag[j], cc, nb_, q, cnt, 0.0)
        elif rk == OP_WAITALL:
            q = rows_pool[src + r, TPL_REQ] + wb
            _row(out, at + r, rk, NO_PEER, 0, 0, nb_, q, cnt, 0.0)
        else:  # COMPUTE: a combine step, or the trace's operator cost
            cb = combine_pool[src + r]
            d = cb / reduce_rate if cb >= 0.0 else c_op_s[j]
            _row(out, at + r, rk, NO_PEER, 0, 0, nb_, -1, cnt, d)
    w0 = w_first[tp]
    for r in range(w_len[tp]):
        wait_list[wb + r] = w_pool[w0 + r] + rb


@njit()
def emit_program(  # type: ignore[no-untyped-def]
    trace_cols,
    plan,
    collectives,
    templates,
    comm_members,
    comm_ptr,
    rates,
    coll_comm_base,
    out,
    wait_list,
):
    """Write the program rows of every trace operation.

    Parameters
    ----------
    trace_cols
        Trace columns ``(kind, call, peer, peer2, tag, tag2, comm, bytes_send,
        bytes_recv, request, seconds)``.
    plan
        The layout filled by :func:`plan_rows`.
    collectives
        Per collective call ``(tid, comm, tag, op_s)`` and per kept wait-all
        ``(wa_off, wa_count)``: ``(tid, comm, tag, op_s, wa_off, wa_count)``.
    templates
        ``(t_first, rows_pool, combine_pool, w_first, w_len, w_pool)`` of the schedule
        templates (rows as in ``lowering.templates.Template``).
    comm_members, comm_ptr
        Communicator member lists (world ranks) of the trace.
    rates
        ``(compute_scale, reduce_rate_Bps)``.
    coll_comm_base
        Engine communicator id offset of collective traffic.
    out
        Output ``(ops, nbytes, seconds)`` of the program (see ``Program``); ``nbytes`` and
        ``seconds`` may be two views of one column (a ``COMPUTE`` row keeps its seconds,
        any other row its bytes).
    wait_list
        Output wait list; the user wait-all entries are already in place.
    """
    trace_cols = borrowed(trace_cols)
    plan = borrowed(plan)
    collectives = borrowed(collectives)
    templates = borrowed(templates)
    comm_members = borrowed(comm_members)
    comm_ptr = borrowed(comm_ptr)
    out = borrowed(out)
    wait_list = borrowed(wait_list)
    kind, call, peer, peer2, tag, tag2, comm, bytes_send, bytes_recv, request, seconds = trace_cols
    out_ptr, req_base, wl_base, slot = plan
    wa_off, wa_count = collectives[4], collectives[5]
    compute_scale = rates[0]
    comm_tables = (comm_members, comm_ptr, coll_comm_base)
    ops = out[0]
    for i in range(kind.shape[0]):
        at = out_ptr[i]
        n_out = out_ptr[i + 1] - at
        for r in range(at, at + n_out):
            ops[r, codes.COL_CALL] = call[i]
            for col in range(codes.COL_CALL + 1, codes.OPS_WIDTH):
                ops[r, col] = 0  # padding
        if n_out == 0:
            continue
        k = kind[i]
        if k == TRACE_COMPUTE:
            _row(out, at, OP_COMPUTE, NO_PEER, 0, 0, 0, -1, 0, seconds[i] * compute_scale)
        elif k in (TRACE_ISEND, TRACE_SEND):
            q = request[i] if k == TRACE_ISEND else req_base[i]
            _row(out, at, OP_ISEND, peer[i], tag[i], comm[i], bytes_send[i], q, 0, 0.0)
            if k == TRACE_SEND:
                _row(out, at + 1, OP_WAIT, NO_PEER, 0, 0, 0, q, 0, 0.0)
        elif k in (TRACE_IRECV, TRACE_RECV):
            q = request[i] if k == TRACE_IRECV else req_base[i]
            _row(out, at, OP_IRECV, peer[i], tag[i], comm[i], bytes_recv[i], q, 0, 0.0)
            if k == TRACE_RECV:
                _row(out, at + 1, OP_WAIT, NO_PEER, 0, 0, 0, q, 0, 0.0)
        elif k == TRACE_SENDRECV:
            q = req_base[i]
            _row(out, at, OP_IRECV, peer2[i], tag2[i], comm[i], bytes_recv[i], q, 0, 0.0)
            _row(out, at + 1, OP_ISEND, peer[i], tag[i], comm[i], bytes_send[i], q + 1, 0, 0.0)
            w = wl_base[i]
            _row(out, at + 2, OP_WAITALL, NO_PEER, 0, 0, 0, w, 2, 0.0)
            wait_list[w] = q
            wait_list[w + 1] = q + 1
        elif k == TRACE_WAIT:
            _row(out, at, OP_WAIT, NO_PEER, 0, 0, 0, request[i], 0, 0.0)
        elif k in (TRACE_WAITALL, TRACE_WAITANY):
            j = slot[i]
            wk = OP_WAITALL if k == TRACE_WAITALL else OP_WAITANY
            _row(out, at, wk, NO_PEER, 0, 0, 0, wa_off[j], wa_count[j], 0.0)
        else:  # a collective: its template, peers mapped through the communicator
            j = slot[i]
            bases = (at, n_out, req_base[i], wl_base[i])
            _emit_collective(out, wait_list, bases, j, collectives, templates, comm_tables, rates)


@njit()
def combine_steps(row_ptr, coll_ops, tid, t_first, pool, rows, nbytes):  # type: ignore[no-untyped-def]
    """Count the reductions' combine steps, and write them while ``rows`` has room.

    Parameters
    ----------
    row_ptr
        Program rows of each trace operation.
    coll_ops, tid
        Trace operation of each collective call and its schedule template.
    t_first, pool
        First entry of each template in ``pool``: the bytes each of its rows combines
        (> 0 only on combine steps).
    rows, nbytes
        Output: program row and combined bytes of each step, in collective order
        (written up to their length; pass empty arrays to count only).

    Returns
    -------
    The number of combine steps.
    """
    row_ptr = borrowed(row_ptr)
    coll_ops = borrowed(coll_ops)
    tid = borrowed(tid)
    t_first = borrowed(t_first)
    pool = borrowed(pool)
    rows = borrowed(rows)
    nbytes = borrowed(nbytes)
    n = 0
    for j in range(coll_ops.shape[0]):
        op = coll_ops[j]
        first = row_ptr[op]
        src = t_first[tid[j]]
        for r in range(row_ptr[op + 1] - first):
            cb = pool[src + r]
            if cb > 0.0:
                if n < rows.shape[0]:
                    rows[n] = first + r
                    nbytes[n] = cb
                n += 1
    return n
