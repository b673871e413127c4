"""The compiled discrete-event kernel of the simulator (numba).

:mod:`mpiuq.simulator.engine` is the typed Python face; everything here works on
flat arrays held in typed bundles, so that 10^7 events run without touching the
Python interpreter. Model (the reference paper, section 3.1 and Figs. 1-3):

* Each rank executes its operation stream on its CPU (:mod:`.ranks`). Operations
  with a CPU cost (posting headers, copies into pinned buffers, pinning) first
  advance the rank's clock, then take effect, so that every shared-state change
  (ports, queues) happens in global time order.
* Each rank also has a *progress engine* (NIC / progress thread) that performs the
  receiver-side protocol steps triggered by arrivals: posting RDMA gets, pinning
  rendezvous receive buffers, posting acknowledgements (:mod:`.protocols`). Its
  steps are serialised per rank and are charged to the rank as MPI-stack time
  when the rank is blocked waiting on them.
* Time a rank spends blocked in a wait is split along the completing request's
  milestones: before the partner was ready -> ``sync`` (eqs. 1-4, with the
  deferred-wait forms 3-4 following from starting the clock at the wait); inside a
  software step of the protocol (remote or progress-engine pinning or posting) ->
  ``mpi_stack``; the remainder -> ``network``.
* Transfers go through the network units of :mod:`mpiuq.simulator.networks`.

Modules: :mod:`.run` (entry points), :mod:`.loop` (the event loop), :mod:`.heap`,
:mod:`.state` (the bundles), :mod:`.matching` (MPI matching, request slots),
:mod:`.ranks`, :mod:`.messages`, :mod:`.transfers`, :mod:`.flows` (the flow network's
events), :mod:`.protocols` (mailbox, eager, rendezvous, stream, detached; the regime
table lookup). Integer codes come from :mod:`mpiuq.simulator.codes`.

Extending it
------------
* **A protocol**: a module in :mod:`.protocols` with its handlers (send cost, what a
  match sets, its later steps), a ``PROTO_*`` code in :mod:`mpiuq.simulator.codes`
  (its name in ``regimes.PROTOCOLS``), and one branch in each dispatcher of
  :mod:`.protocols`; new event kinds go into ``codes.EVENT_NAMES`` (the event-code
  width follows) and :func:`.loop.event_loop`'s dispatch (``stream_rendezvous`` added
  ``EV_STREAM_OUT`` this way).
* **Protocol regimes as data**: the regime table is the tail of the parameter vector;
  :class:`.Endpoint` carries it as a view, :func:`.protocols.select` returns a
  message's regime (:mod:`.protocols.table`) and the handlers read its costs.
* **A network**: a module in :mod:`mpiuq.simulator.networks` with the frozen
  description and its compiled unit (start a transfer: arrival time, or a flow
  whose packets follow), a ``NET_*`` code, and one branch in
  :func:`mpiuq.simulator.networks._dispatch.start_transfer`; a network whose transfers
  interact over time (the flow network) starts them in :func:`.transfers.transfer_event`
  and handles its own events (:mod:`.flows`).
* **Batch replay**: :func:`.run_batch` takes any program and any network bundle
  (topology and packet network included) and reuses one state across parameter
  vectors.
* **Streaming the program in windows**: ranks read their operations only through
  the functions of :mod:`.rows`, which compile to global indexing for a whole
  :class:`.ProgramArrays` and to a per-rank window for a :class:`.WindowArrays`;
  :func:`.run_window` stops when a rank's ``pc`` reaches its window's end and
  resumes where it stopped once the caller has refilled it
  (:func:`mpiuq.simulator.replay.windowed.simulate_windowed`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.kernel.loop import LOOP_CTL
from mpiuq.simulator.kernel.protocols import HEADER_BYTES, Endpoint
from mpiuq.simulator.kernel.rows import ProgramArrays, WindowArrays
from mpiuq.simulator.kernel.run import (
    run_batch,
    run_program,
    run_sets,
    run_window,
    state_sizes,
    window_outputs,
)
from mpiuq.simulator.kernel.state import State, new_state, wait_offsets
from mpiuq.simulator.networks.state import NetworkArrays

__all__ = [
    "HEADER_BYTES",
    "LOOP_CTL",
    "Endpoint",
    "ProgramArrays",
    "State",
    "WindowArrays",
    "new_state",
    "run_batch",
    "run_program",
    "run_sets",
    "run_window",
    "state_for",
    "wait_offsets",
    "window_outputs",
]


def state_for(
    program: ProgramArrays | WindowArrays,
    net: NetworkArrays,
    wait_ptr: npt.NDArray[np.int64] | None = None,
) -> State:
    """A fresh :class:`State` sized for ``program`` on ``net`` (allocated by NumPy).

    ``wait_ptr`` (:func:`wait_offsets` of the whole program) is required for a
    :class:`WindowArrays`, whose rows are not all at hand.
    """
    if wait_ptr is None:
        if isinstance(program, WindowArrays):
            raise TypeError("state_for: a windowed program needs wait_ptr")
        wait_ptr = wait_offsets(program.rank_ptr, program.ops)
    n_links, n_flows, n_route, flow_entries = state_sizes(program, net)
    n_ranks = int(program.rank_ptr.shape[0]) - 1
    return new_state(  # type: ignore[no-any-return]
        n_ranks,
        program.n_requests,
        program.n_calls,
        program.n_marks,
        net.n_nodes,
        int(n_links),
        int(n_flows),
        int(n_route),
        int(flow_entries),
        wait_ptr,
    )
