"""Entry points of the kernel: one program under one parameter vector, or under many.

Both take the same bundles: the program (:class:`~.rows.ProgramArrays`, or
:class:`~.rows.WindowArrays` for :func:`run_window`), the network
(:class:`~mpiuq.simulator.networks.state.NetworkArrays`) and parameter vectors in
:data:`~mpiuq.simulator.codes.PARAMETER_NAMES` order, from which the kernel derives
the endpoint costs and network rates in SI units.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import (
    LINK_INJECTION,
    N_CATEGORIES,
    N_PARAMS,
    N_STAGES,
    NET_FLOW,
    NET_PACKET,
    P_HOP_LATENCY,
    P_INJECTION_BW,
    P_LINK_BW,
    P_MEMORY_BW,
    P_PAGE,
    P_PIN_LATENCY,
    P_PIN_PER_PAGE,
    P_POST_HEADER,
    P_POST_RDMA,
    R_WIDTH,
)
from mpiuq.simulator.kernel.loop import CTL_EVENTS, CTL_STARTED, LOOP_CTL, event_loop
from mpiuq.simulator.kernel.protocols import Endpoint
from mpiuq.simulator.kernel.state import State, new_state_compiled, reset_state, wait_offsets
from mpiuq.simulator.networks.state import Rates
from mpiuq.simulator.runtime.jit import njit
from mpiuq.simulator.topologies.routing import route_capacity


@njit(inline="always", error_model="numpy")
def endpoint_costs(params, zero_overhead):  # type: ignore[no-untyped-def]
    """The MPI-stack costs and the regime table (a view of the vector's tail) of a
    parameter vector (all costs zero with ``zero_overhead``)."""
    inv_mem = 1.0 / (params[P_MEMORY_BW] * 1e9)
    d_hdr = params[P_POST_HEADER] * 1e-6
    d_rdma = params[P_POST_RDMA] * 1e-6
    pin_lat = params[P_PIN_LATENCY] * 1e-6
    pin_page = params[P_PIN_PER_PAGE] * 1e-9
    scale = 1.0
    if zero_overhead:
        inv_mem = 0.0
        d_hdr = 0.0
        d_rdma = 0.0
        pin_lat = 0.0
        pin_page = 0.0
        scale = 0.0
    table = params[N_PARAMS:]
    return Endpoint(
        inv_mem,
        d_hdr,
        d_rdma,
        pin_lat,
        pin_page,
        params[P_PAGE],
        table,
        table.shape[0] // R_WIDTH,
        scale,
        1.0 / (min(params[P_INJECTION_BW], params[P_LINK_BW]) * 1e9),
    )


@njit(inline="always", error_model="numpy")
def network_rates(params, hops):  # type: ignore[no-untyped-def]
    """The network rates of a parameter vector."""
    inv_inj = 1.0 / (params[P_INJECTION_BW] * 1e9)
    inv_link = 1.0 / (params[P_LINK_BW] * 1e9)
    hop = params[P_HOP_LATENCY] * 1e-9
    return Rates(inv_inj, inv_link, max(inv_inj, inv_link), hop, hops * hop)


@njit(inline="always", error_model="numpy")
def _start(program, params, net, state):  # type: ignore[no-untyped-def]
    """The rates and endpoint costs of ``params``; sets the ranks' ``pc`` and the links' rates."""
    rates = network_rates(params, net.hops)
    ep = endpoint_costs(params, net.zero_overhead)
    link_inv = state.network.link_inv
    link_class = net.tables.link_class
    state.ranks.pc[:] = program.rank_ptr[:-1]
    if net.kind == NET_FLOW:  # capacities of the flow network's links, bytes per second
        ft = net.flow
        cap = state.network.flow.cap
        for lk in range(cap.shape[0]):
            inv = rates.inv_inj if ft.link_injection[lk] else rates.inv_link
            cap[lk] = ft.link_bw[lk] / inv
        return rates, ep
    for lk in range(link_inv.shape[0]):
        link_inv[lk] = rates.inv_inj if link_class[lk] == LINK_INJECTION else rates.inv_link
    return rates, ep


@njit(inline="always", error_model="numpy")
def outputs(state, n_events):  # type: ignore[no-untyped-def]
    """:func:`run_program`'s outputs: views of ``state`` and the event count."""
    ranks = state.ranks
    return (
        ranks.end_s,
        ranks.acc,
        ranks.acc_call,
        ranks.marks,
        n_events,
        ranks.pc,
        state.slots.matched,
        state.network.link_bytes,
    )


@njit(nogil=True, error_model="numpy")
def run_program(program, params, net, compute_scale, state):  # type: ignore[no-untyped-def]
    """Simulate one program with one parameter vector on ``state`` (from ``new_state``).

    Returns
    -------
    end_s : float64 (n_ranks,)
    acc : float64 (n_ranks, 4)        compute, network, mpi_stack, sync seconds
    acc_call : float64 (n_calls, 4)
    marks : float64 (n_marks,)
    n_events : int
    pc : int64 (n_ranks,)             next operation of each rank (== end when finished)
    matched : int32 (n_requests,)     matched receive request of each send (-1 if none)
    link_bytes : float64 (n_links,)   bytes carried by each link (packet network)
    """
    rates, ep = _start(program, params, net, state)
    ctl = np.zeros(LOOP_CTL, np.int64)
    ctl_t = np.zeros(1, np.float64)
    event_loop(program, net, state, rates, ep, compute_scale, ctl, ctl_t)
    return outputs(state, ctl[CTL_EVENTS])


@njit(nogil=True, error_model="numpy")
def run_window(program, params, net, compute_scale, state, ctl, ctl_t):  # type: ignore[no-untyped-def]
    """Run a windowed program (:class:`WindowArrays`) until it ends or a rank's window
    needs refilling; returns that rank, or -1 when the run is over.

    ``ctl`` and ``ctl_t`` are :func:`~.loop.event_loop`'s (zeros before the first call,
    which also sets the ranks' ``pc``); the caller refills the returned rank's window
    from its ``pc`` and calls again with the same arguments. The outputs of
    :func:`run_program` are then :func:`window_outputs` of ``state`` and ``ctl``.
    """
    if ctl[CTL_STARTED] == 0:
        rates, ep = _start(program, params, net, state)
    else:
        rates = network_rates(params, net.hops)
        ep = endpoint_costs(params, net.zero_overhead)
    return event_loop(program, net, state, rates, ep, compute_scale, ctl, ctl_t)


def window_outputs(state: State, ctl: npt.NDArray[np.int64]) -> tuple[Any, ...]:
    """:func:`run_program`'s outputs of a windowed run that :func:`run_window` finished."""
    return outputs.py_func(state, int(ctl[CTL_EVENTS]))  # type: ignore[attr-defined,no-any-return]


def state_sizes(program, net):  # type: ignore[no-untyped-def]
    """``(n_links, n_flows, n_route, flow_entries)`` of the state of ``program`` on ``net``
    (packet flows, route buffer, link entries per flow of the flow network)."""
    if net.kind == NET_FLOW:
        n_route = net.flow.max_route
        return net.flow.link_bw.shape[0], 0, n_route, 2 * n_route
    n_links = net.tables.link_class.shape[0]
    if net.kind != NET_PACKET:
        return n_links, 0, 0, 0
    n_route = route_capacity(net.tables.next_link.shape[0])
    return n_links, N_STAGES * program.n_requests, n_route, 0


#: :func:`state_sizes` compiled, for :func:`run_batch`.
state_sizes_compiled = njit(nogil=True, error_model="numpy")(state_sizes)


@njit(nogil=True, error_model="numpy")
def run_sets(  # type: ignore[no-untyped-def]
    program, params_matrix, net, compute_scale, reduce_rows, reduce_bytes, reduce_rate_Bps
):
    """Run one program under many parameter vectors on one network, per-call split kept.

    Releases the GIL: callers may run slices of ``params_matrix`` in parallel threads.
    One state is allocated and reset between the sets.

    ``program.seconds[reduce_rows]`` are the reduction (combine) steps, ``reduce_bytes``
    their combined bytes: before each set they are set to ``reduce_bytes / rate`` with
    ``rate = reduce_rate_Bps``, or, when that is <= 0, the set's memory bandwidth (as
    :meth:`~mpiuq.simulator.replay.run.ReplaySetup.lowering_options` lowers them), so one
    lowered program serves every set. ``program.seconds`` is overwritten: pass a copy.

    Returns ``marks (n_sets, n_marks)``, ``acc (n_sets, n_ranks, 4)``,
    ``acc_call (n_sets, n_calls, 4)``, ``end (n_sets, n_ranks)``, ``unfinished (n_sets,)``
    ranks that did not finish, and ``events (n_sets,)``.
    """
    n_sets = params_matrix.shape[0]
    n_ranks = program.rank_ptr.shape[0] - 1
    marks = np.empty((n_sets, program.n_marks), np.float64)
    acc = np.empty((n_sets, n_ranks, N_CATEGORIES), np.float64)
    acc_call = np.empty((n_sets, program.n_calls, N_CATEGORIES), np.float64)
    end = np.empty((n_sets, n_ranks), np.float64)
    unfinished = np.zeros(n_sets, np.int64)
    events = np.zeros(n_sets, np.int64)
    wait_ptr = wait_offsets(program.rank_ptr, program.ops)
    n_links, n_flows, n_route, flow_entries = state_sizes_compiled(program, net)
    state = new_state_compiled(
        n_ranks,
        program.n_requests,
        program.n_calls,
        program.n_marks,
        net.n_nodes,
        n_links,
        n_flows,
        n_route,
        flow_entries,
        wait_ptr,
    )
    seconds = program.seconds
    for s in range(n_sets):
        if s > 0:
            reset_state(state)
        rate = reduce_rate_Bps if reduce_rate_Bps > 0.0 else params_matrix[s, P_MEMORY_BW] * 1e9
        for j in range(reduce_rows.shape[0]):
            seconds[reduce_rows[j]] = reduce_bytes[j] / rate
        e, a, ac, mk, ne, pcs, _mm, _lb = run_program(
            program, params_matrix[s], net, compute_scale, state
        )
        marks[s] = mk
        acc[s] = a
        acc_call[s] = ac
        end[s] = e
        events[s] = ne
        for r in range(n_ranks):
            if pcs[r] < program.rank_ptr[r + 1]:
                unfinished[s] += 1
    return marks, acc, acc_call, end, unfinished, events


@njit(nogil=True, error_model="numpy")
def run_batch(program, params_matrix, net, compute_scale):  # type: ignore[no-untyped-def]
    """Run one program under many parameter vectors on one network (see :func:`run_sets`).

    Returns ``marks (n_sets, n_marks)``, ``acc (n_sets, n_ranks, 4)``,
    ``end (n_sets, n_ranks)``, ``unfinished (n_sets,)`` ranks that did not finish,
    and the total event count.
    """
    no_rows = np.zeros(0, np.int64)
    no_bytes = np.zeros(0, np.float64)
    marks, acc, _calls, end, unfinished, events = run_sets(
        program, params_matrix, net, compute_scale, no_rows, no_bytes, 1.0
    )
    return marks, acc, end, unfinished, events.sum()
