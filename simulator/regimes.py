"""Protocol regimes as data: an ordered table of message-size ranges, each with its protocol.

An MPI stack switches protocols at message-size thresholds, and real stacks have more
than two: Open MPI over InfiniBand inlines tiny messages into the work request, changes
fragment sizes at 2 and 4 KiB, ends its eager range near 12 KiB and stops copying at
256 KiB; the TCP transport sends eagerly up to 64 KiB and then shakes hands. A
:class:`Regime` says up to which size (inclusive) a protocol is used and with which
per-regime costs; a stack is an ordered tuple of regimes whose last one is unbounded.

Protocols (:data:`PROTOCOLS`; the kernel's ``PROTO_*`` codes are their indices and each
has a handler module in :mod:`mpiuq.simulator.kernel.protocols`):

``mailbox``
    the payload travels with the header; the receiver copies it out (Fig. 1).
``eager``
    copy into a pinned buffer, header, the receiver's progress engine posts an RDMA get,
    copy out (Fig. 2).
``rendezvous``
    pin, header; once matched the receiver pins and gets zero-copy; acknowledgement (Fig. 3).
``stream``
    a TCP-like byte stream without pinning or RDMA: the sender copies the payload into
    the socket (a per-message post, a copy at the regime's copy bandwidth and a host cost
    per segment of ``segment_bytes``, the TCP maximum segment size) and its send completes;
    the payload crosses the wire with per-segment framing (:data:`SEGMENT_WIRE_BYTES`);
    the receiver pays the same per-message, copy and per-segment costs when its receive
    consumes the message (progress happens inside MPI calls, as in Open MPI's TCP BTL).
``stream_rendezvous``
    the same stream after a handshake (Open MPI's ob1 rendezvous over TCP): header;
    once matched the receiver posts an acknowledgement; on its arrival the sender copies
    the payload into the socket (its send completes), the data cross, the receiver copies
    them out.
``detached``
    SMPI's detached send (SimGrid, sizes below ``smpi/send-is-detached-thresh``): the
    sender copies the payload into a buffer of its own (the regime's copy bandwidth) and
    posts a header; its send completes at once. Once matched, the receiver's progress
    engine answers with a go-ahead (``post_header_delay``), the payload crosses, and the
    receiver copies it out. The payload moves only after the match, as in SimGrid.

Per-regime costs, in the LogGP vocabulary (o_s, o_r: CPU overheads of the sender and
the receiver; L, G: the wire's latency and per-byte gap, the network's parameters, to
which a regime can add a latency of its own):

``send_overhead_us``
    sender CPU per message in the send call, on top of the global post delay
    (``post_header_delay_us``): a protocol step the global parameters do not cover (o_s).
``send_complete_us``
    sender CPU to complete a send request in its wait (progress poll, request release):
    what ``MPI_Send`` costs more than ``MPI_Isend`` of the same eager message.
``recv_overhead_us``
    receiver CPU per message when its receive completes (matching, completion; o_r),
    charged with the copy-out in the receive's wait.
``unexpected_us``
    receiver CPU on top of ``recv_overhead_us`` when the message (its header) arrived
    before the receive was posted: MPI's unexpected-message path (search of the
    unexpected queue, the late processing of the arrival, cold buffers). The call-timing
    benchmark ``recv_arrived`` measures it; ping-pongs never take this path.
``wire_latency_us``, ``wire_ns_per_byte``
    extra one-way latency of the regime's messages that no CPU spends, fixed and per
    byte of the message (the first transfer, header or eager payload, starts that much
    later): TCP's delayed acknowledgement of a message of several segments, a NIC's
    store-and-forward DMA of a bounce buffer over PCIe. It lengthens a round trip but
    neither a call on either side nor the rate of a stream of messages (a pipeline hides
    it).
``copy_bw_GBps``
    the regime's copy bandwidth (0: the global ``memory_bw_GBps``).
``segment_bytes``, ``segment_us``
    stream protocols: payload per segment and host cost per segment and side.
``fragment_bytes``
    ``stream`` only: copies pipelined with the transfer in fragments of this size (0, the
    default: the whole message is copied, then sent, then copied out). The sender's call
    still copies every byte, but the message leaves once its first fragment is copied
    (later if the copy is slower than the wire, so that the wire never overtakes the
    copy), and a receive posted before the message arrived has only the last fragment
    left to copy out (an unexpected message is copied out whole). Open MPI's send
    pipeline and UCX's multi-fragment bcopy work this way.

The table travels in the simulator's parameter vector (:func:`flatten`), so a calibration
can treat ``regime<k>_recv_overhead_us`` like any parameter and replay uses the same
regimes. ``latency_us``, the former name of ``send_overhead_us``, is still read
(:data:`SLOT_ALIASES`) so that stored results keep working.

The default table (``SimParams.regimes == ()``) is mailbox up to ``small_max_bytes``,
eager up to ``eager_max_bytes``, rendezvous beyond, with no per-regime costs: the model
of the reference paper, bit for bit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameter_limits import MAX_PROTOCOL_BYTES, REGIME_COST_RANGE, check_in_range

#: Protocols a regime can use, in code order.
PROTOCOLS: tuple[str, ...] = (
    "mailbox",
    "eager",
    "rendezvous",
    "stream",
    "stream_rendezvous",
    "detached",
)
#: Default regime name of each protocol (``"small"`` for the mailbox, as in the paper).
DEFAULT_NAMES: dict[str, str] = {
    "mailbox": "small",
    "eager": "eager",
    "rendezvous": "rendezvous",
    "stream": "stream",
    "stream_rendezvous": "stream_rendezvous",
    "detached": "detached",
}
#: Protocols without pinning or RDMA (their regimes need ``segment_us``).
STREAM_PROTOCOLS: tuple[str, ...] = ("stream", "stream_rendezvous")
#: Protocols that pin buffers and post RDMA gets (they use the ``rdma_*`` parameters).
RDMA_PROTOCOLS: tuple[str, ...] = ("eager", "rendezvous")
#: Most regimes in a table.
MAX_REGIMES = 8
#: Bytes on the wire per TCP segment besides its payload on 1500-byte-MTU Ethernet: TCP
#: (20 + 12 timestamp option) and IPv4 (20) headers, Ethernet header and FCS (18), preamble
#: and inter-frame gap (20). A full segment carries 1448 payload bytes in 1538 wire bytes.
SEGMENT_WIRE_BYTES = 90
#: Payload of a full TCP segment on 1500-byte-MTU Ethernet (1500 - 20 - 32), bytes.
DEFAULT_SEGMENT_BYTES = 1448
#: Largest fragment of a pipelined regime, bytes (1 GiB: a typo guard).
MAX_FRAGMENT_BYTES = 1 << 30

#: Fields of a regime in the parameter vector, in slot order.
SLOTS: tuple[str, ...] = (
    "max_bytes",
    "protocol",
    "send_overhead_us",
    "copy_bw_GBps",
    "segment_bytes",
    "segment_us",
    "recv_overhead_us",
    "unexpected_us",
    "send_complete_us",
    "fragment_bytes",
    "wire_latency_us",
    "wire_ns_per_byte",
)
#: Continuous per-regime parameters (calibratable).
CONTINUOUS_SLOTS: tuple[str, ...] = (
    "send_overhead_us",
    "copy_bw_GBps",
    "segment_us",
    "recv_overhead_us",
    "unexpected_us",
    "send_complete_us",
    "wire_latency_us",
    "wire_ns_per_byte",
)
#: Former names of regime fields, still read (``regime<k>_latency_us`` of stored results).
SLOT_ALIASES: dict[str, str] = {"latency_us": "send_overhead_us"}
#: Unit of each per-regime parameter.
SLOT_UNITS: dict[str, str] = {
    "max_bytes": "B",
    "protocol": "",
    "send_overhead_us": "us",
    "copy_bw_GBps": "GB/s",
    "segment_bytes": "B",
    "segment_us": "us",
    "recv_overhead_us": "us",
    "unexpected_us": "us",
    "send_complete_us": "us",
    "fragment_bytes": "B",
    "wire_latency_us": "us",
    "wire_ns_per_byte": "ns/B",
}
WIDTH = len(SLOTS)
_SLOT_NAME = re.compile(r"^regime(\d+)_(" + "|".join((*SLOTS, *SLOT_ALIASES)) + r")$")


@dataclass(frozen=True, slots=True)
class Regime:
    """One protocol regime: messages up to ``max_bytes`` (inclusive) use ``protocol``.

    Attributes
    ----------
    protocol
        One of :data:`PROTOCOLS`.
    max_bytes
        Largest message size of the regime, bytes; ``math.inf`` for the last regime.
    name
        Label in reports (default: the protocol's, see :data:`DEFAULT_NAMES`).
    send_overhead_us
        Sender CPU per message in the send call beyond the global post delay, us (>= 0).
    copy_bw_GBps
        Copy bandwidth of the regime's copies, GB/s; 0 uses ``memory_bw_GBps``.
    segment_bytes
        Payload bytes per segment of a stream protocol (the TCP MSS).
    segment_us
        Host cost per segment on each side of a stream protocol, us (>= 0).
    fragment_bytes
        Fragment of the pipelined copies of a ``stream`` regime, bytes (0: not pipelined).
    recv_overhead_us
        Receiver CPU per message when its receive completes (matching, completion), us.
    unexpected_us
        Extra receiver CPU when the message arrived before its receive was posted, us.
    send_complete_us
        Sender CPU to complete a send request in its wait, us.
    wire_latency_us
        Extra one-way latency of the regime's messages off every CPU, us.
    wire_ns_per_byte
        Extra one-way latency per byte of the message off every CPU, ns/B.
    """

    protocol: str
    max_bytes: float = math.inf
    name: str = ""
    send_overhead_us: float = 0.0
    copy_bw_GBps: float = 0.0
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    segment_us: float = 0.0
    recv_overhead_us: float = 0.0
    unexpected_us: float = 0.0
    send_complete_us: float = 0.0
    fragment_bytes: int = 0
    wire_latency_us: float = 0.0
    wire_ns_per_byte: float = 0.0

    @property
    def label(self) -> str:
        """The regime's name, or its protocol's default name."""
        return self.name or DEFAULT_NAMES.get(self.protocol, self.protocol)


def default_regimes(small_max_bytes: int, eager_max_bytes: int) -> tuple[Regime, ...]:
    """The reference model: mailbox, eager RDMA, zero-copy rendezvous, no per-regime costs.

    Examples
    --------
    >>> [(r.label, r.max_bytes) for r in default_regimes(4096, 65536)]
    [('small', 4096), ('eager', 65536), ('rendezvous', inf)]
    """
    return (
        Regime("mailbox", small_max_bytes),
        Regime("eager", eager_max_bytes),
        Regime("rendezvous", math.inf),
    )


def validate_regimes(regimes: tuple[Regime, ...]) -> tuple[Regime, ...]:
    """Check a regime table; returns it with numbers normalised (floats, int sizes).

    Raises
    ------
    ParameterError
        Naming ``regime<k>_<field>``, the value and what is allowed: an unknown protocol,
        thresholds not strictly increasing, a bounded last regime or an unbounded earlier
        one, negative costs, more than :data:`MAX_REGIMES` regimes.
    """
    if not 1 <= len(regimes) <= MAX_REGIMES:
        raise ParameterError("regimes", len(regimes), f"1 to {MAX_REGIMES} regimes")
    out = []
    previous = 0.0
    for k, r in enumerate(regimes):
        if r.protocol not in PROTOCOLS:
            raise ParameterError(f"regime{k}_protocol", r.protocol, f"one of {list(PROTOCOLS)}")
        last = k == len(regimes) - 1
        mx = r.max_bytes
        if last:
            if mx != math.inf:
                raise ParameterError(
                    f"regime{k}_max_bytes",
                    mx,
                    "no bound (inf): the last regime takes every larger size",
                )
        else:
            if not _whole(mx) or float(mx) <= previous:
                raise ParameterError(
                    f"regime{k}_max_bytes",
                    mx,
                    f"a whole number of bytes above the previous regime's {previous:g} "
                    "(thresholds strictly increasing)",
                )
            previous = float(mx)
        if not last and float(mx) > MAX_PROTOCOL_BYTES:
            raise ParameterError(
                f"regime{k}_max_bytes", mx, f"a whole number of bytes up to {MAX_PROTOCOL_BYTES}"
            )
        for name in CONTINUOUS_SLOTS:  # the one range check (parameter_limits)
            check_in_range(
                f"regime{k}_{name}", getattr(r, name), *REGIME_COST_RANGE, SLOT_UNITS[name]
            )
        if not _whole(r.segment_bytes) or not 1 <= r.segment_bytes <= 1 << 20:
            raise ParameterError(
                f"regime{k}_segment_bytes", r.segment_bytes, "a whole number of bytes in 1..1048576"
            )
        if not _whole(r.fragment_bytes) or not 0 <= r.fragment_bytes <= MAX_FRAGMENT_BYTES:
            raise ParameterError(
                f"regime{k}_fragment_bytes",
                r.fragment_bytes,
                f"a whole number of bytes in 0..{MAX_FRAGMENT_BYTES} (0: not pipelined)",
            )
        if r.fragment_bytes and r.protocol != "stream":
            raise ParameterError(
                f"regime{k}_fragment_bytes",
                r.fragment_bytes,
                f"0 for a {r.protocol} regime: only the stream protocol pipelines its copies",
            )
        costs: dict[str, Any] = {name: float(getattr(r, name)) for name in CONTINUOUS_SLOTS}
        out.append(
            replace(
                r,
                max_bytes=math.inf if last else int(mx),
                segment_bytes=int(r.segment_bytes),
                fragment_bytes=int(r.fragment_bytes),
                **costs,
            )
        )
    labels = [r.label for r in out]
    for k, label in enumerate(labels):
        if label in labels[:k]:
            raise ParameterError(
                f"regime{k}_name", label, f"a name not used by another regime {labels[:k]}"
            )
    return tuple(out)


def is_default_shape(regimes: tuple[Regime, ...]) -> bool:
    """Whether a table is mailbox, eager, rendezvous without per-regime costs (the reference
    model with some thresholds)."""
    return tuple(r.protocol for r in regimes) == ("mailbox", "eager", "rendezvous") and all(
        getattr(r, name) == 0.0 for r in regimes for name in (*CONTINUOUS_SLOTS, "fragment_bytes")
    )


def slot_names(n_regimes: int) -> tuple[str, ...]:
    """Names of the parameter-vector slots of ``n_regimes`` regimes (``regime<k>_<slot>``)."""
    return tuple(f"regime{k}_{s}" for k in range(n_regimes) for s in SLOTS)


def parse_slot_name(name: str) -> tuple[int, str] | None:
    """``(k, slot)`` of a name ``regime<k>_<slot>``, or None; a former field name
    (:data:`SLOT_ALIASES`) gives the field's current name.

    Examples
    --------
    >>> parse_slot_name("regime2_recv_overhead_us"), parse_slot_name("link_bw_GBps")
    ((2, 'recv_overhead_us'), None)
    >>> parse_slot_name("regime1_latency_us")
    (1, 'send_overhead_us')
    """
    m = _SLOT_NAME.match(name)
    if not m:
        return None
    return int(m.group(1)), SLOT_ALIASES.get(m.group(2), m.group(2))


def canonical_name(name: str) -> str:
    """``name`` with a former regime field name replaced by its current one.

    Examples
    --------
    >>> canonical_name("regime1_latency_us"), canonical_name("link_bw_GBps")
    ('regime1_send_overhead_us', 'link_bw_GBps')
    """
    parsed = parse_slot_name(name)
    return name if parsed is None else f"regime{parsed[0]}_{parsed[1]}"


def flatten(regimes: tuple[Regime, ...]) -> dict[str, float]:
    """``{regime<k>_<slot>: value}`` of a table, the protocol as its code (vector slots)."""
    out: dict[str, float] = {}
    for k, r in enumerate(regimes):
        for s in SLOTS:
            v = PROTOCOLS.index(r.protocol) if s == "protocol" else getattr(r, s)
            out[f"regime{k}_{s}"] = float(v)
    return out


def with_slots(regimes: tuple[Regime, ...], values: Mapping[str, object]) -> tuple[Regime, ...]:
    """The table with some ``regime<k>_<slot>`` values replaced (validated).

    A protocol may be given by name or code.

    Raises
    ------
    ParameterError
        For a slot of a regime the table does not have, or an invalid value.
    """
    table = list(regimes)
    for name, value in values.items():
        parsed = parse_slot_name(name)
        if parsed is None:
            raise ParameterError(name, value, "a regime slot regime<k>_<field>")
        k, slot = parsed
        if k >= len(table):
            raise ParameterError(
                name,
                value,
                f"a slot of one of the {len(table)} regimes (regime0 .. regime{len(table) - 1})",
            )
        v: Any = value
        if slot == "protocol" and not isinstance(value, str):
            if not _whole(value) or not 0 <= int(value) < len(PROTOCOLS):  # type: ignore[call-overload]
                raise ParameterError(
                    name, value, f"a protocol name or code 0..{len(PROTOCOLS) - 1}"
                )
            v = PROTOCOLS[int(value)]  # type: ignore[call-overload]
        elif slot in ("max_bytes", "segment_bytes", "fragment_bytes") and (
            isinstance(value, bool) or not isinstance(value, int | float)
        ):
            raise ParameterError(name, value, "a whole number of bytes")
        table[k] = replace(table[k], **{slot: v})
    return validate_regimes(tuple(table))


def regime_index(regimes: tuple[Regime, ...], size_bytes: int) -> int:
    """Index of the regime of a message of ``size_bytes``."""
    for k, r in enumerate(regimes):
        if size_bytes <= r.max_bytes:
            return k
    return len(regimes) - 1


def thresholds(regimes: tuple[Regime, ...]) -> tuple[int, ...]:
    """Largest size of every regime but the last, ascending."""
    return tuple(int(r.max_bytes) for r in regimes[:-1])


def regime_from_mapping(k: int, values: Mapping[str, object]) -> Regime:
    """A :class:`Regime` from ``{field: value}`` (``max_bytes`` absent: unbounded).

    Raises
    ------
    ParameterError
        For an unknown field (named ``regime<k>_<field>``).
    """
    known = {f.name for f in fields(Regime)}
    current = {SLOT_ALIASES.get(key, key): value for key, value in values.items()}
    for key, value in current.items():
        if key not in known:
            raise ParameterError(f"regime{k}_{key}", value, f"one of the fields {sorted(known)}")
    return Regime(**current)  # type: ignore[arg-type]


def _whole(v: object) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v) and v.is_integer()
