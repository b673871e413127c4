"""Every integer code and index that the compiled loops share, defined once.

The compiled kernel (:mod:`mpiuq.simulator.kernel`), the program checker, the
lowering loops and the network units read their integer constants from here;
the Python-facing enumerations (:class:`mpiuq.simulator.program.table.Op`, the names of
protocols, network models, routings and link classes) are views of these
definitions, and the parameter slots ``P_*`` are derived from the field order of
:class:`~mpiuq.simulator.parameters.SimParams`, so reordering a field moves its
slot with it. ``tests/unit/test_codes.py`` fails if a copy of a code reappears
elsewhere in ``simulator/`` or ``cli/``.

numba freezes module-level integers into the compiled code, so these must stay
plain ``int`` constants (no enums, no arrays).
"""

from __future__ import annotations

from mpiuq.simulator.parameters import parameter_names
from mpiuq.simulator.regimes import PROTOCOLS
from mpiuq.simulator.regimes import SLOTS as REGIME_SLOTS
from mpiuq.simulator.trace import ir as _trace_ir
from mpiuq.simulator.trace.ir import OpKind

# --- operations of the lowered program (Program.ops, column COL_KIND) ----------------------

OP_COMPUTE = 0  #: busy the rank for ``seconds``
OP_ISEND = 1  #: start sending ``nbytes`` to ``peer``; request ``req``
OP_IRECV = 2  #: post a receive from ``peer`` (or ANY_SOURCE); request ``req``
OP_WAIT = 3  #: block until request ``req`` completes
OP_WAITALL = 4  #: block until ``wait_list[req:req + count]`` all complete
OP_MARK = 5  #: record the current time in mark ``req``
#: block until one request of ``wait_list[req:req + count]`` not yet consumed completes,
#: and consume it (the earliest-completed; ties in list order; none live: no-op)
OP_WAITANY = 6
#: Names of the operation codes, in code order (``program.Op`` is built from them).
OP_NAMES: tuple[str, ...] = ("COMPUTE", "ISEND", "IRECV", "WAIT", "WAITALL", "MARK", "WAITANY")

# --- columns of the operation table (Program.ops: one int32 row of OPS_WIDTH per operation) -

COL_KIND = 0  #: operation code (OP_*)
COL_PEER = 1  #: partner world rank, or ANY_SOURCE
COL_TAG = 2  #: message tag, or ANY_TAG
COL_COMM = 3  #: communicator (matching context)
COL_REQ = 4  #: request id, wait-list offset (WAITALL, WAITANY) or mark id (MARK)
COL_COUNT = 5  #: number of requests of a WAITALL or WAITANY
COL_CALL = 6  #: index into Program.call_names
OPS_WIDTH = 8  #: columns per row (32 bytes, two rows per cache line); the last is padding
TABLE_COLUMNS: tuple[str, ...] = ("kind", "peer", "tag", "comm", "req", "count", "call")

# --- columns of a collective schedule template row (lowering.templates.Template.rows) -----

TPL_KIND = 0  #: OP_* code
TPL_PEER = 1  #: communicator rank, or NO_PEER
TPL_BYTES = 2  #: message bytes
TPL_REQ = 3  #: local request index, local wait-list offset (WAITALL), or -1
TPL_COUNT = 4  #: requests of a WAITALL
TPL_WIDTH = 5

# --- peers and tags that are not ranks (the trace's values: the lowering copies them) --------

ANY_SOURCE: int = _trace_ir.ANY_SOURCE  #: receive from any rank (COL_PEER of an IRECV)
ANY_TAG: int = _trace_ir.ANY_TAG  #: receive any tag
NO_PEER: int = _trace_ir.NO_PEER  #: COL_PEER of operations without a partner

# --- trace operation kinds, as the lowering loops read them (views of trace.ir.OpKind) -----

TRACE_COMPUTE = int(OpKind.COMPUTE)
TRACE_SEND = int(OpKind.SEND)
TRACE_RECV = int(OpKind.RECV)
TRACE_ISEND = int(OpKind.ISEND)
TRACE_IRECV = int(OpKind.IRECV)
TRACE_WAIT = int(OpKind.WAIT)
TRACE_WAITALL = int(OpKind.WAITALL)
TRACE_WAITANY = int(OpKind.WAITANY)
TRACE_SENDRECV = int(OpKind.SENDRECV)

# --- events of the kernel's heap: code = argument << EV_BITS | kind ------------------------

EV_RANK = 0  #: resume a rank (argument: rank)
EV_HDR = 1  #: header (or whole mailbox message) arrived at the receiver (argument: message)
EV_GET_ISSUE = 2  #: receiver's progress engine posted the RDMA get: inject the get request
EV_GET_ARRIVE = 3  #: get request reached the sender's NIC: inject the data
EV_DATA = 4  #: RDMA data arrived at the receiver
EV_ACK_ISSUE = 5  #: receiver's progress engine posted the acknowledgement: inject it
EV_ACK = 6  #: acknowledgement reached the sender: the send request is complete
EV_PKT = 7  #: packet network: inject the next packet of a flow (argument: flow)
#: stream rendezvous: the sender has copied the payload into the socket (argument: message)
EV_STREAM_OUT = 8
#: flow network: a flow's latency is paid (it joins the sharing) or its last byte arrived
#: (argument: message; valid only if its heap sequence is the flow's, see networks.flow)
EV_FLOW = 9
#: flow network: recompute the shares of the flows whose links changed at this time
#: (one recomputation for all the flows that start or end at one instant)
EV_SHARE = 10
EVENT_NAMES: tuple[str, ...] = (
    "rank",
    "header",
    "get_issue",
    "get_arrive",
    "data",
    "ack_issue",
    "ack",
    "packet",
    "stream_out",
    "flow",
    "share",
)
#: Bits of an event code holding its kind (room for every kind above).
EV_BITS = max(1, (len(EVENT_NAMES) - 1).bit_length())
N_EV = 1 << EV_BITS  #: event codes are ``argument * N_EV + kind``; kind = code & (N_EV - 1)

# --- flows: every message moves at most N_STAGES transfers; flow id = message * N_STAGES + stage

STAGE_HDR = 0  #: header or mailbox message, sender -> receiver, continues with EV_HDR
STAGE_GET = 1  #: RDMA get request, receiver -> sender, continues with EV_GET_ARRIVE
STAGE_DATA = 2  #: RDMA data, sender -> receiver, continues with EV_DATA
STAGE_ACK = 3  #: rendezvous acknowledgement, receiver -> sender, continues with EV_ACK
N_STAGES = 4

# --- accounting categories: columns of the per-rank and per-call time splits --------------

#: Category names, in column order.
CATEGORIES: tuple[str, ...] = ("compute", "network", "mpi_stack", "sync")
CAT_COMPUTE = CATEGORIES.index("compute")
CAT_NETWORK = CATEGORIES.index("network")
CAT_STACK = CATEGORIES.index("mpi_stack")
CAT_SYNC = CATEGORIES.index("sync")
N_CATEGORIES = len(CATEGORIES)

# --- point-to-point protocols (names: regimes.PROTOCOLS, the protocols of a regime table) ---

PROTO_SMALL = PROTOCOLS.index("mailbox")  #: mailbox: the message travels with its header
PROTO_EAGER = PROTOCOLS.index("eager")  #: eager RDMA get into a pinned buffer, copy-out
PROTO_RDV = PROTOCOLS.index("rendezvous")  #: zero-copy rendezvous with acknowledgement
PROTO_STREAM = PROTOCOLS.index("stream")  #: TCP-like byte stream: copies and segments
#: the stream after a handshake: header, the receiver's go-ahead, then the stream's data
PROTO_STREAM_RDV = PROTOCOLS.index("stream_rendezvous")
#: SMPI's detached send: completes when posted; the payload moves once the receive matches
PROTO_DETACHED = PROTOCOLS.index("detached")

# --- network models: derived from the network-model registry (networks/registry.py) ---------

# BEGIN GENERATED network models: `python -m mpiuq.generate_networks` writes this
# block from the registry entries of simulator/networks/*.py; do not edit it by hand.
#: Registry names of the network models, in code order (a model's code is its position).
NETWORK_MODELS: tuple[str, ...] = ("analytic", "compute-only", "packet", "flow")
#: Network models that run on a SimGrid platform file (its cluster is a flow network).
PLATFORM_MODELS: tuple[str, ...] = ("flow", "compute-only")
#: Models in the order a replay starts several at once (the costliest first).
NETWORK_COST_ORDER: tuple[str, ...] = ("packet", "flow", "analytic", "compute-only")
#: Module registering each model, in code order (imported by ``mpiuq.simulator.networks``).
NETWORK_MODULES: tuple[str, ...] = (
    "mpiuq.simulator.networks.analytic",
    "mpiuq.simulator.networks.compute_only",
    "mpiuq.simulator.networks.packet",
    "mpiuq.simulator.networks.flow",
)
# END GENERATED network models

#: Codes of the models whose events the kernel runs itself (packet injections, flows).
NET_PACKET = NETWORK_MODELS.index("packet")
NET_FLOW = NETWORK_MODELS.index("flow")
#: Sharing rules of the flow network, by name (``networks.FlowSharing``: equal max-min
#: shares, and SimGrid's CM02, LV08 and SMPI models).
FLOW_SHARING_NAMES: tuple[str, ...] = ("maxmin", "cm02", "lv08", "smpi")

# --- flow network: the phases of a flow and how its routes are found -------------------------

FLOW_LATENCY = 0  #: the flow pays its latency (it takes no bandwidth yet)
FLOW_SHARING = 1  #: the flow shares the bandwidth of its links (max-min)
#: Routing of a flow network, in code order: a topology's tables (minimal routing), or
#: the route rules of a SimGrid cluster zone (flat with optional backbone, fat-tree,
#: dragonfly, torus; :mod:`mpiuq.simulator.topologies.zones`).
ZONE_KINDS: tuple[str, ...] = ("tables", "star", "fattree", "dragonfly", "torus")
ZONE_TABLES = ZONE_KINDS.index("tables")
ZONE_STAR = ZONE_KINDS.index("star")
ZONE_FATTREE = ZONE_KINDS.index("fattree")
ZONE_DRAGONFLY = ZONE_KINDS.index("dragonfly")
ZONE_TORUS = ZONE_KINDS.index("torus")

# --- routing of the packet network -----------------------------------------------------------

#: Routing names, in code order.
ROUTINGS: tuple[str, ...] = ("minimal", "valiant")
ROUTE_MINIMAL = ROUTINGS.index("minimal")
ROUTE_VALIANT = ROUTINGS.index("valiant")

#: How a topology picks Valiant intermediates: none (no alternative paths), a switch
#: in a group other than the source's and destination's (dragonfly), or a top-level
#: switch (fat-tree).
VALIANT_RULES: tuple[str, ...] = ("none", "other-group", "top-level")
VALIANT_NONE = VALIANT_RULES.index("none")
VALIANT_OTHER_GROUP = VALIANT_RULES.index("other-group")
VALIANT_TOP_LEVEL = VALIANT_RULES.index("top-level")

# --- link classes of a topology ----------------------------------------------------------------

#: Link class names, in code order.
LINK_CLASS_NAMES: tuple[str, ...] = ("injection", "network", "ejection")
LINK_INJECTION = LINK_CLASS_NAMES.index("injection")  #: node -> switch
LINK_NETWORK = LINK_CLASS_NAMES.index("network")  #: switch -> switch
LINK_EJECTION = LINK_CLASS_NAMES.index("ejection")  #: switch -> node

# --- state of a program request in the kernel's ``slot_of`` (else its state slot) ----------

SLOT_NONE = -1  #: not created yet
SLOT_DONE = -2  #: completed and consumed by a wait

# --- slots of the parameter vector: the field order of SimParams ----------------------------

PARAMETER_NAMES: tuple[str, ...] = parameter_names()


def _slot(name: str) -> int:
    return PARAMETER_NAMES.index(name)


P_INJECTION_BW = _slot("injection_bw_GBps")
P_LINK_BW = _slot("link_bw_GBps")
P_MEMORY_BW = _slot("memory_bw_GBps")
P_POST_HEADER = _slot("post_header_delay_us")
P_POST_RDMA = _slot("post_rdma_delay_us")
P_PIN_LATENCY = _slot("rdma_pin_latency_us")
P_PIN_PER_PAGE = _slot("rdma_pin_per_page_ns")
P_HOP_LATENCY = _slot("hop_latency_ns")
P_SMALL_MAX = _slot("small_max_bytes")
P_EAGER_MAX = _slot("eager_max_bytes")
P_PAGE = _slot("page_bytes")
N_PARAMS = len(PARAMETER_NAMES)

# --- slots of one protocol regime: the regime table follows the scalars in the vector ------
# (regime k's field f sits at N_PARAMS + k * R_WIDTH + R_<F>; see simulator/regimes.py)

R_MAX_BYTES = REGIME_SLOTS.index("max_bytes")  #: largest message of the regime (inf: last)
R_PROTOCOL = REGIME_SLOTS.index("protocol")  #: PROTO_* code
R_SEND_OVERHEAD = REGIME_SLOTS.index("send_overhead_us")  #: extra sender CPU per message, us
R_COPY_BW = REGIME_SLOTS.index("copy_bw_GBps")  #: copy bandwidth, GB/s (0: memory_bw_GBps)
R_SEGMENT_BYTES = REGIME_SLOTS.index("segment_bytes")  #: stream payload per segment, bytes
R_SEGMENT_US = REGIME_SLOTS.index("segment_us")  #: stream host cost per segment and side, us
R_RECV_OVERHEAD = REGIME_SLOTS.index("recv_overhead_us")  #: receiver CPU per message, us
R_UNEXPECTED = REGIME_SLOTS.index("unexpected_us")  #: extra receiver CPU, unexpected message, us
R_SEND_COMPLETE = REGIME_SLOTS.index("send_complete_us")  #: sender CPU completing a send, us
R_FRAGMENT = REGIME_SLOTS.index("fragment_bytes")  #: pipelined copies' fragment (0: none), bytes
R_WIRE_LATENCY = REGIME_SLOTS.index("wire_latency_us")  #: extra one-way latency off the CPUs, us
R_WIRE_PER_BYTE = REGIME_SLOTS.index("wire_ns_per_byte")  #: ... and per byte, ns/B
R_WIDTH = len(REGIME_SLOTS)
