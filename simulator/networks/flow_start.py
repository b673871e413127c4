"""Starting a flow: its route, latency, sharing penalty, bound and factors (compiled).

As SimGrid 3.32's ``NetworkCm02Model::communicate``: the route's latency is the sum of its
links' latencies; the bound is the smallest bandwidth on the route and, with a TCP
window, ``gamma / (2 latency)``; with latency penalties the sharing penalty is the
latency plus ``weight_s / bandwidth`` per link (1 when the flow has no latency to pay, as
SimGrid's variable starts with weight 1 then), else 1 for every flow; the flow loads every shared link of its route with weight 1
and, with cross-traffic, every shared link of its reverse route with that weight (a
link on both gets the sum). Fat pipes bound the flow but are not shared.
"""

from __future__ import annotations

from mpiuq.simulator.codes import FLOW_LATENCY
from mpiuq.simulator.runtime.borrow import borrowed
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies.zone_routing import zone_route

INF = float("inf")


@njit(inline="always", error_model="numpy")
def size_factor(size, thresholds, values):  # type: ignore[no-untyped-def]
    """SMPI's piecewise factor of a transfer of ``size`` bytes: the value of the last
    threshold below ``size`` (1 below the first)."""
    current = 1.0
    for k in range(thresholds.shape[0]):
        if size <= thresholds[k]:
            return current
        current = values[k]
    return current


@njit(inline="always", error_model="numpy")
def _add_entry(fl, m, n, link, w):  # type: ignore[no-untyped-def]
    """Load ``link`` with weight ``w`` for flow ``m`` (``n`` entries so far); returns n."""
    for e in range(n):
        if fl.cnst[m, e] == link:
            fl.weight[m, e] += w
            return n
    fl.cnst[m, n] = link
    fl.weight[m, n] = w
    return n + 1


@njit(error_model="numpy")
def start_flow(t, a, b, nbytes, m, stage, seq, net, ns, rates):  # type: ignore[no-untyped-def]
    """Start the flow of message slot ``m`` (``stage``) of ``nbytes`` from node ``a`` to
    ``b`` at ``t``; its first event (latency paid) has heap sequence ``seq``. Returns
    that event's time."""
    net = borrowed(net)
    ns = borrowed(ns)
    ft = net.flow
    fl = ns.flow
    route = ns.route
    n = zone_route(ft.zone, net.tables, a, b, route)
    if n < 0:  # an engine bug, not a property of the program
        raise RuntimeError("flow route longer than the route buffer: broken zone tables")
    size = nbytes + ft.envelope
    lat = 0.0
    pen = 0.0
    bound = INF
    ne = 0
    for j in range(n):
        lk = route[j]
        lat += ft.link_lat[lk] * rates.hop
        bw = fl.cap[lk]
        if ft.weight_s > 0.0:
            pen += ft.weight_s / bw
        if bw < bound:
            bound = bw
        ns.link_bytes[lk] += size
        if not ft.link_fatpipe[lk]:
            ne = _add_entry(fl, m, ne, lk, 1.0)
    if ft.cross > 0.0:
        nb = zone_route(ft.zone, net.tables, b, a, route)
        if nb < 0:
            raise RuntimeError("flow route longer than the route buffer: broken zone tables")
        for j in range(nb):
            lk = route[j]
            if not ft.link_fatpipe[lk]:
                ne = _add_entry(fl, m, ne, lk, ft.cross)
    if ft.tcp_gamma > 0.0 and lat > 0.0:
        window = ft.tcp_gamma / (2.0 * lat)
        if window < bound:
            bound = window
    lat_paid = lat * size_factor(size, ft.factor_bytes, ft.lat_factor)
    fl.n_ent[m] = ne
    fl.penalty[m] = lat + pen if ft.latency_penalty and lat_paid > 0.0 else 1.0
    fl.bound[m] = bound
    fl.factor[m] = size_factor(size, ft.factor_bytes, ft.bw_factor)
    fl.rem[m] = size
    fl.rate[m] = 0.0
    fl.value[m] = 0.0
    fl.stage[m] = stage
    fl.phase[m] = FLOW_LATENCY
    fl.seq[m] = seq
    return t + lat_paid
