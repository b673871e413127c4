"""Max-min fair shares of the flows, recomputed incrementally when a flow joins or leaves.

The allocation is SimGrid's ``lmm`` max-min (``src/kernel/lmm/maxmin.cpp``): each flow
``f`` has a sharing penalty ``p_f``, a bound ``b_f`` and weight ``w_fc`` on each link
``c`` it uses; every link's capacity bounds ``sum_f w_fc x_f``. Progressive filling:
the *level* of a link is its remaining capacity over the sum of ``w_fc / p_f`` of its
unfixed flows; the links of the lowest level saturate, and their unfixed flows get
``x_f = level / p_f`` -- unless some of them would exceed their bound first
(``b_f p_f < level``), in which case those of the smallest ``b_f p_f`` are fixed at
their bound and the round repeats. A flow's rate is ``x_f`` times its bandwidth factor.

Incremental: a flow that joins is given its bound at once when that overloads none of
its links (no other share can change); a flow that leaves changes nothing when none of
its links was saturated. Otherwise its links become *pending*, and one recomputation at
the same instant (the kernel's ``EV_SHARE`` event, after the other events of that
instant) recomputes the *components* of all pending links: the flows that share links,
directly or through others, with them -- so flows starting or ending together cost one
recomputation. Flows whose rate changed have their remaining bytes brought up to date
and a new end time; they are listed in ``resched`` for the kernel to schedule.
"""

from __future__ import annotations

from mpiuq.simulator.codes import FLOW_SHARING
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit

INF = float("inf")
#: Relative tolerance of saturation tests (SimGrid's maxmin precision is 1e-5 absolute).
EPS = 1e-9
#: Slots of ``FlowState.ctr`` (the kernel's stale-event slots are 2 and 3).
CTR_EPOCH = 0  #: recomputations so far (their marks)
CTR_ROUND = 1  #: filling rounds so far (their marks)
CTR_PENDING = 4  #: links waiting for a recomputation
CTR_SHARE = 5  #: 1 while a recomputation event is scheduled


@njit(inline="always", error_model="numpy")
def _link_in(fl, m, e):  # type: ignore[no-untyped-def]
    """Put entry ``e`` of flow ``m`` at the head of its link's list."""
    n_e = fl.cnst.shape[1]
    c = fl.cnst[m, e]
    el = m * n_e + e
    head = fl.head[c]
    fl.el_prev[el] = -1
    fl.el_next[el] = head
    if head >= 0:
        fl.el_prev[head] = el
    fl.head[c] = el


@njit(inline="always", error_model="numpy")
def _link_out(fl, m, e):  # type: ignore[no-untyped-def]
    """Take entry ``e`` of flow ``m`` off its link's list."""
    n_e = fl.cnst.shape[1]
    el = m * n_e + e
    prev = fl.el_prev[el]
    nxt = fl.el_next[el]
    if prev >= 0:
        fl.el_next[prev] = nxt
    else:
        fl.head[fl.cnst[m, e]] = nxt
    if nxt >= 0:
        fl.el_prev[nxt] = prev


@njit(inline="always", error_model="numpy")
def _set_rate(fl, f, t, value, n):  # type: ignore[no-untyped-def]
    """Give flow ``f`` share ``value`` at ``t``; list it in ``resched`` (now ``n``) if its
    rate changed. Returns the new count."""
    rate = value * fl.factor[f]
    fl.value[f] = value
    if rate == fl.rate[f]:
        return n
    rem = fl.rem[f] - fl.rate[f] * (t - fl.t_last[f])
    fl.rem[f] = rem if rem > 0.0 else 0.0
    fl.t_last[f] = t
    fl.rate[f] = rate
    fl.t_done[f] = t + fl.rem[f] / rate if rate > 0.0 else INF
    fl.resched[n] = f
    return n + 1


@njit(inline="always", error_model="numpy")
def _mark_pending(m, fl):  # type: ignore[no-untyped-def]
    """Flow ``m``'s links wait for the recomputation of this instant."""
    for e in range(fl.n_ent[m]):
        c = fl.cnst[m, e]
        if fl.c_pending[c] == 0:
            fl.c_pending[c] = 1
            fl.pending[fl.ctr[CTR_PENDING]] = c
            fl.ctr[CTR_PENDING] += 1


@njit(error_model="numpy")
def flow_join(m, t, fl):  # type: ignore[no-untyped-def]
    """Flow ``m`` has paid its latency at ``t`` and starts sharing. Returns the number of
    flows listed in ``fl.resched`` (``m`` among them), or -1 when its links wait for the
    recomputation of this instant (:func:`recompute_pending`)."""
    fl = borrowed(fl)
    fl.phase[m] = FLOW_SHARING
    fl.t_last[m] = t
    fl.rate[m] = 0.0
    ne = fl.n_ent[m]
    if fl.rem[m] <= 0.0:  # nothing to move: done now, on no link
        fl.n_ent[m] = 0
        fl.value[m] = 0.0
        fl.t_done[m] = t
        fl.resched[0] = m
        return 1
    if ne == 0:  # no shared link (fat pipes only): at its bound
        return _set_rate(fl, m, t, fl.bound[m], 0)
    b = fl.bound[m]
    fits = fl.ctr[CTR_PENDING] == 0  # loads are up to date
    for e in range(ne):
        _link_in(fl, m, e)
        c = fl.cnst[m, e]
        if fl.load[c] + fl.weight[m, e] * b > fl.cap[c] * (1.0 + EPS):
            fits = False
    if fits:
        for e in range(ne):
            fl.load[fl.cnst[m, e]] += fl.weight[m, e] * b
        return _set_rate(fl, m, t, b, 0)
    _mark_pending(m, fl)
    return -1


@njit(error_model="numpy")
def flow_leave(m, t, fl):  # type: ignore[no-untyped-def]
    """Flow ``m`` ends at ``t`` and stops sharing. Returns 0 (no share changes), or -1
    when its links wait for the recomputation of this instant."""
    fl = borrowed(fl)
    ne = fl.n_ent[m]
    saturated = fl.ctr[CTR_PENDING] > 0
    for e in range(ne):
        _link_out(fl, m, e)
        c = fl.cnst[m, e]
        if fl.load[c] >= fl.cap[c] * (1.0 - EPS):
            saturated = True
        fl.load[c] -= fl.weight[m, e] * fl.value[m]
    fl.phase[m] = -1
    fl.seq[m] = -1
    if not saturated:
        return 0
    _mark_pending(m, fl)
    return -1


@njit(error_model="numpy")
def _component(fl):  # type: ignore[no-untyped-def]
    """The pending links and the links and flows reachable from them (a new epoch marks
    them); the pending list is emptied. Returns ``(n_links, n_flows)`` in ``fl.comp_c``
    and ``fl.comp_f``."""
    fl = borrowed(fl)
    fl.ctr[CTR_EPOCH] += 1
    epoch = fl.ctr[CTR_EPOCH]
    n_e = fl.cnst.shape[1]
    nc = 0
    nf = 0
    for i in range(fl.ctr[CTR_PENDING]):
        c = fl.pending[i]
        fl.c_pending[c] = 0
        if fl.c_stamp[c] != epoch:
            fl.c_stamp[c] = epoch
            fl.comp_c[nc] = c
            nc += 1
    fl.ctr[CTR_PENDING] = 0
    qi = 0
    while qi < nc:
        el = fl.head[fl.comp_c[qi]]
        qi += 1
        while el >= 0:
            f = el // n_e
            if fl.f_stamp[f] != epoch:
                fl.f_stamp[f] = epoch
                fl.comp_f[nf] = f
                nf += 1
                for e in range(fl.n_ent[f]):
                    c = fl.cnst[f, e]
                    if fl.c_stamp[c] != epoch:
                        fl.c_stamp[c] = epoch
                        fl.comp_c[nc] = c
                        nc += 1
            el = fl.el_next[el]
    return nc, nf


@njit(inline="always", error_model="numpy")
def _fix(fl, f, x, epoch):  # type: ignore[no-untyped-def]
    """Fix flow ``f``'s share at ``x``: take it off its links' remaining capacity."""
    fl.f_done[f] = epoch
    fl.new_value[f] = x
    p = fl.penalty[f]
    for e in range(fl.n_ent[f]):
        c = fl.cnst[f, e]
        w = fl.weight[f, e]
        fl.c_rem[c] -= w * x
        fl.c_usage[c] -= w / p
        fl.c_left[c] -= 1


@njit(error_model="numpy")
def _fill(nc, nf, fl, epoch):  # type: ignore[no-untyped-def]
    """Progressive filling of the component in ``comp_c[:nc]``, ``comp_f[:nf]`` (module
    docstring); the shares go to ``new_value``."""
    fl = borrowed(fl)
    n_e = fl.cnst.shape[1]
    for i in range(nc):
        c = fl.comp_c[i]
        fl.c_rem[c] = fl.cap[c]
        fl.c_usage[c] = 0.0
        fl.c_left[c] = 0
    for i in range(nf):
        f = fl.comp_f[i]
        p = fl.penalty[f]
        for e in range(fl.n_ent[f]):
            c = fl.cnst[f, e]
            fl.c_usage[c] += fl.weight[f, e] / p
            fl.c_left[c] += 1
    na = 0
    for i in range(nc):
        fl.active[na] = fl.comp_c[i]
        na += 1
    fixed = 0
    while na > 0 and fixed < nf:
        level = INF
        for i in range(na):
            c = fl.active[i]
            r = fl.c_rem[c] / fl.c_usage[c] if fl.c_rem[c] > 0.0 else 0.0
            if r < level:
                level = r
        fl.ctr[CTR_ROUND] += 1
        mark = fl.ctr[CTR_ROUND]
        ns = 0
        min_bound = INF
        for i in range(na):
            c = fl.active[i]
            r = fl.c_rem[c] / fl.c_usage[c] if fl.c_rem[c] > 0.0 else 0.0
            if r > level * (1.0 + EPS):
                continue
            el = fl.head[c]
            while el >= 0:
                f = el // n_e
                if fl.f_done[f] != epoch and fl.f_mark[f] != mark:
                    fl.f_mark[f] = mark
                    fl.sat_f[ns] = f
                    ns += 1
                    bp = fl.bound[f] * fl.penalty[f]
                    if bp < level and bp < min_bound:
                        min_bound = bp
                el = fl.el_next[el]
        for i in range(ns):
            f = fl.sat_f[i]
            if min_bound < INF:
                if fl.bound[f] * fl.penalty[f] <= min_bound * (1.0 + EPS):
                    _fix(fl, f, fl.bound[f], epoch)
                    fixed += 1
            else:
                _fix(fl, f, level / fl.penalty[f], epoch)
                fixed += 1
        keep = 0
        for i in range(na):
            c = fl.active[i]
            if fl.c_left[c] > 0:
                fl.active[keep] = c
                keep += 1
        na = keep
    for i in range(nf):  # flows no link bounds (none in practice): their bound
        f = fl.comp_f[i]
        if fl.f_done[f] != epoch:
            fl.new_value[f] = fl.bound[f]


@njit(error_model="numpy")
def recompute_pending(t, fl):  # type: ignore[no-untyped-def]
    """Recompute the shares of the components of the pending links at ``t``. Returns the
    number of flows listed in ``fl.resched`` (their rate changed)."""
    fl = borrowed(fl)
    nc, nf = _component(fl)
    epoch = fl.ctr[CTR_EPOCH]
    _fill(nc, nf, fl, epoch)
    n = 0
    for i in range(nf):
        f = fl.comp_f[i]
        n = _set_rate(fl, f, t, fl.new_value[f], n)
    for i in range(nc):
        c = fl.comp_c[i]
        fl.load[c] = fl.cap[c] - fl.c_rem[c]
    return n
