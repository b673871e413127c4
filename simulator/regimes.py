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

Per-regime parameters: ``latency_us`` (an extra software latency of the sender per
message, e.g. a protocol step the global parameters do not cover), ``copy_bw_GBps`` (the
regime's copy bandwidth; 0 means the global ``memory_bw_GBps``), ``segment_bytes`` and
``segment_us`` (stream protocols). The table travels in the simulator's parameter vector
(:func:`flatten`), so a calibration can treat ``regime<k>_latency_us`` like any parameter
and replay uses the same regimes.

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

#: Fields of a regime in the parameter vector, in slot order.
SLOTS: tuple[str, ...] = (
    "max_bytes",
    "protocol",
    "latency_us",
    "copy_bw_GBps",
    "segment_bytes",
    "segment_us",
)
#: Continuous per-regime parameters (calibratable).
CONTINUOUS_SLOTS: tuple[str, ...] = ("latency_us", "copy_bw_GBps", "segment_us")
#: Unit of each per-regime parameter.
SLOT_UNITS: dict[str, str] = {
    "max_bytes": "B",
    "protocol": "",
    "latency_us": "us",
    "copy_bw_GBps": "GB/s",
    "segment_bytes": "B",
    "segment_us": "us",
}
WIDTH = len(SLOTS)
_SLOT_NAME = re.compile(r"^regime(\d+)_(" + "|".join(SLOTS) + r")$")


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
    latency_us
        Extra software latency of the sender per message, us (>= 0).
    copy_bw_GBps
        Copy bandwidth of the regime's copies, GB/s; 0 uses ``memory_bw_GBps``.
    segment_bytes
        Payload bytes per segment of a stream protocol (the TCP MSS).
    segment_us
        Host cost per segment on each side of a stream protocol, us (>= 0).
    """

    protocol: str
    max_bytes: float = math.inf
    name: str = ""
    latency_us: float = 0.0
    copy_bw_GBps: float = 0.0
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    segment_us: float = 0.0

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
        out.append(
            replace(
                r,
                max_bytes=math.inf if last else int(mx),
                latency_us=float(r.latency_us),
                copy_bw_GBps=float(r.copy_bw_GBps),
                segment_bytes=int(r.segment_bytes),
                segment_us=float(r.segment_us),
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
        r.latency_us == 0.0 and r.copy_bw_GBps == 0.0 and r.segment_us == 0.0 for r in regimes
    )


def slot_names(n_regimes: int) -> tuple[str, ...]:
    """Names of the parameter-vector slots of ``n_regimes`` regimes (``regime<k>_<slot>``)."""
    return tuple(f"regime{k}_{s}" for k in range(n_regimes) for s in SLOTS)


def parse_slot_name(name: str) -> tuple[int, str] | None:
    """``(k, slot)`` of a name ``regime<k>_<slot>``, or None.

    Examples
    --------
    >>> parse_slot_name("regime2_latency_us"), parse_slot_name("link_bw_GBps")
    ((2, 'latency_us'), None)
    """
    m = _SLOT_NAME.match(name)
    return (int(m.group(1)), m.group(2)) if m else None


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
        elif slot in ("max_bytes", "segment_bytes") and (
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
    for key, value in values.items():
        if key not in known:
            raise ParameterError(f"regime{k}_{key}", value, f"one of the fields {sorted(known)}")
    return Regime(**values)  # type: ignore[arg-type]


def _whole(v: object) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and math.isfinite(v) and v.is_integer()
