"""Calibratable endpoint and network parameters of the simulator.

The canonical names and units below are the contract shared by the campaign
files, the surrogate designs and trace replay. Defaults are the maximum
likelihood values of Table 1 of the reference paper (../shared/papers/004_*.txt),
with the hop latency fixed at its nominal 100 ns and protocol thresholds of
4096 B (largest "mailbox" message) and 65536 B (largest eager-RDMA message).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import regimes as _regimes
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameter_limits import (
    MAX_PROTOCOL_BYTES,
    PARAMETER_MAGNITUDE,
    REGIME_COST_RANGE,
    check_in_range,
)
from mpiuq.simulator.regimes import Regime

#: Names of the continuous (calibratable) parameters, in canonical order.
CONTINUOUS_PARAMETERS: tuple[str, ...] = (
    "injection_bw_GBps",
    "link_bw_GBps",
    "memory_bw_GBps",
    "post_header_delay_us",
    "post_rdma_delay_us",
    "rdma_pin_latency_us",
    "rdma_pin_per_page_ns",
    "hop_latency_ns",
)

#: Names of the integer protocol settings.
PROTOCOL_SETTINGS: tuple[str, ...] = ("small_max_bytes", "eager_max_bytes", "page_bytes")

#: Table 1 prior ranges of the reference study (100 Gb/s Omni-Path), for documentation
#: and as a starting point of campaign files. Hop latency was fixed there.
TABLE1_PRIOR_RANGES: dict[str, tuple[float, float]] = {
    "injection_bw_GBps": (8.0, 16.0),
    "link_bw_GBps": (10.0, 15.0),
    "memory_bw_GBps": (8.0, 15.0),
    "post_header_delay_us": (0.1, 1.5),
    "post_rdma_delay_us": (0.5, 2.0),
    "rdma_pin_latency_us": (1.0, 7.0),
    "rdma_pin_per_page_ns": (1.0, 100.0),
}

#: Unit of each parameter, for tables and plots.
UNITS: dict[str, str] = {
    "injection_bw_GBps": "GB/s",
    "link_bw_GBps": "GB/s",
    "memory_bw_GBps": "GB/s",
    "post_header_delay_us": "us",
    "post_rdma_delay_us": "us",
    "rdma_pin_latency_us": "us",
    "rdma_pin_per_page_ns": "ns",
    "hop_latency_ns": "ns",
    "small_max_bytes": "B",
    "eager_max_bytes": "B",
    "page_bytes": "B",
}


@dataclass(frozen=True, slots=True)
class SimParams:
    """One validated parameter set of the endpoint and network models.

    Parameters
    ----------
    injection_bw_GBps
        Bandwidth of a node's injection link into its switch, in GB/s (1e9 B/s).
    link_bw_GBps
        Bandwidth of switch output links (including the ejection link into the
        destination node), in GB/s.
    memory_bw_GBps
        Memory-copy bandwidth of the MPI stack (mailbox and eager-buffer copies), GB/s.
    post_header_delay_us
        Software delay to post a header (or a mailbox message), microseconds.
    post_rdma_delay_us
        Software delay to post an RDMA get, microseconds.
    rdma_pin_latency_us
        Fixed latency of pinning (registering) a buffer, microseconds.
    rdma_pin_per_page_ns
        Additional pinning delay per memory page, nanoseconds.
    hop_latency_ns
        Zero-load latency of one link traversal (switch + wire), nanoseconds.
    small_max_bytes
        Largest message sent through receiver mailboxes.
    eager_max_bytes
        Largest message sent with the eager-RDMA protocol; larger ones use rendezvous.
    page_bytes
        Memory page size used to count pinned pages.
    regimes
        The protocol regimes (:mod:`mpiuq.simulator.regimes`), ordered by size; empty
        (the default) means mailbox up to ``small_max_bytes``, eager up to
        ``eager_max_bytes`` and rendezvous beyond. With an explicit table the two
        thresholds are not used.
    """

    injection_bw_GBps: float = 13.04
    link_bw_GBps: float = 12.47
    memory_bw_GBps: float = 11.20
    post_header_delay_us: float = 0.36
    post_rdma_delay_us: float = 0.88
    rdma_pin_latency_us: float = 5.43
    rdma_pin_per_page_ns: float = 50.50
    hop_latency_ns: float = 100.0
    small_max_bytes: int = 4096
    eager_max_bytes: int = 65536
    page_bytes: int = 4096
    regimes: tuple[Regime, ...] = ()

    def __post_init__(self) -> None:
        for name in CONTINUOUS_PARAMETERS:  # the one range check (parameter_limits)
            value = check_in_range(name, getattr(self, name), *PARAMETER_MAGNITUDE, UNITS[name])
            object.__setattr__(self, name, value)
        for name in PROTOCOL_SETTINGS:
            value = getattr(self, name)
            if isinstance(value, bool) or not _is_integral(value):
                raise ParameterError(name, value, "a positive whole number of bytes")
            check_in_range(name, value, 1, MAX_PROTOCOL_BYTES, "B")
            object.__setattr__(self, name, int(value))
        if self.small_max_bytes > self.eager_max_bytes:
            raise ParameterError(
                "small_max_bytes",
                self.small_max_bytes,
                f"at most eager_max_bytes={self.eager_max_bytes}",
            )
        if not isinstance(self.regimes, tuple) or not all(
            isinstance(r, Regime) for r in self.regimes
        ):
            raise ParameterError("regimes", self.regimes, "a tuple of Regime")
        if self.regimes:
            object.__setattr__(self, "regimes", _regimes.validate_regimes(self.regimes))
            if _regimes.is_default_shape(self.regimes):  # the two thresholds agree with it
                small, eager = _regimes.thresholds(self.regimes)
                object.__setattr__(self, "small_max_bytes", small)
                object.__setattr__(self, "eager_max_bytes", eager)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: SimParams | None = None) -> SimParams:
        """Build a parameter set from ``{name: value}``, on top of ``base`` (defaults if None).

        Names are the scalar parameters (:func:`parameter_names`), ``regimes`` (a tuple of
        :class:`~mpiuq.simulator.regimes.Regime`) and regime slots ``regime<k>_<field>``:
        a mapping with ``regime0_protocol`` describes a whole table by its slots (as
        :meth:`as_dict` writes it); otherwise slots change the regimes of ``base``.

        With an explicit table the thresholds are the table's: a default-shaped table
        (mailbox, eager, rendezvous) sets ``small_max_bytes`` and ``eager_max_bytes`` to
        its thresholds, and other tables do not use them.

        Raises
        ------
        ParameterError
            For an unknown name, an invalid value, or a threshold that contradicts the
            explicit regime table.
        """
        known = set(parameter_names())
        scalars: dict[str, Any] = {}
        slots: dict[str, Any] = {}
        table: tuple[Regime, ...] | None = None
        for name, value in values.items():
            if name in known:
                scalars[name] = value
            elif name == "regimes":
                table = tuple(value)
            elif _regimes.parse_slot_name(name) is not None:
                slots[name] = value
            else:
                raise ParameterError(
                    name, value, f"one of {sorted(known)}, regimes or regime<k>_<field>"
                )
        start = base if base is not None else cls()
        if "regime0_protocol" in slots and table is None:
            table = _table_from_slots(slots)
            slots = {}
        out = replace(start, **scalars)
        if table is not None:
            out = replace(out, regimes=table)
        if slots:
            out = replace(out, regimes=_regimes.with_slots(out.regime_table(), slots))
        for name in ("small_max_bytes", "eager_max_bytes"):
            if name in scalars and out.regimes and int(scalars[name]) != getattr(out, name):
                raise ParameterError(
                    name,
                    scalars[name],
                    f"{getattr(out, name)} or no value: the explicit regime table sets the "
                    "thresholds (regime<k>_max_bytes)",
                )
        return out

    def regime_table(self) -> tuple[Regime, ...]:
        """The effective regimes: the explicit table, or the default one of the thresholds."""
        if self.regimes:
            return self.regimes
        return _regimes.default_regimes(self.small_max_bytes, self.eager_max_bytes)

    def as_dict(self) -> dict[str, float | int]:
        """``{name: value}`` of every scalar parameter, then the slots of every effective
        regime (``regime<k>_<field>``, protocols as codes): the kernel's vector order."""
        out: dict[str, float | int] = {n: getattr(self, n) for n in parameter_names()}
        out.update(_regimes.flatten(self.regime_table()))
        return out

    def as_json_dict(self) -> dict[str, float | int | None]:
        """:meth:`as_dict` for a JSON document: the last regime's unbounded ``max_bytes``
        (infinity, which JSON cannot hold) is written as ``None`` (no bound)."""
        return {k: None if v == math.inf else v for k, v in self.as_dict().items()}

    def with_values(self, **values: float | int) -> SimParams:
        """Return a copy with some parameters changed (validated)."""
        return SimParams.from_mapping(values, base=self)

    def protocol_of(self, size_bytes: int) -> str:
        """Name of the protocol regime used for a message of ``size_bytes``."""
        table = self.regime_table()
        return table[_regimes.regime_index(table, size_bytes)].label

    def thresholds(self) -> tuple[int, ...]:
        """Largest size of every regime but the last, ascending (bytes)."""
        return _regimes.thresholds(self.regime_table())


def _table_from_slots(slots: Mapping[str, Any]) -> tuple[Regime, ...]:
    """A regime table from the slots ``regime<k>_<field>`` of every regime."""
    per: dict[int, dict[str, Any]] = {}
    for name, value in slots.items():
        parsed = _regimes.parse_slot_name(name)
        if parsed is not None:
            per.setdefault(parsed[0], {})[parsed[1]] = value
    n = max(per) + 1
    table: list[Regime] = []
    for k in range(n):
        fields_k = dict(per.get(k, {}))
        if "protocol" not in fields_k:
            raise ParameterError(f"regime{k}_protocol", "(missing)", "a protocol for every regime")
        code = fields_k["protocol"]
        if not isinstance(code, str):
            if not _is_integral(code) or not 0 <= int(code) < len(_regimes.PROTOCOLS):
                raise ParameterError(
                    f"regime{k}_protocol",
                    code,
                    f"a protocol name or code 0..{len(_regimes.PROTOCOLS) - 1}",
                )
            fields_k["protocol"] = _regimes.PROTOCOLS[int(code)]
        regime = _regimes.regime_from_mapping(k, fields_k)
        if not regime.name and regime.label in [r.label for r in table]:
            # slots carry no names: a second regime of a protocol is told apart by index
            regime = replace(regime, name=f"{regime.label}_{k}")
        table.append(regime)
    return _regimes.validate_regimes(tuple(table))


def _is_integral(value: object) -> bool:
    if isinstance(value, int | np.integer):
        return True
    return (
        isinstance(value, float | np.floating)
        and math.isfinite(value)
        and float(value).is_integer()
    )


def parameter_names() -> tuple[str, ...]:
    """Names of the scalar parameters of :class:`SimParams`, in declaration order (the
    first slots of the kernel's vector; the regime slots follow, see ``as_dict``)."""
    return tuple(f.name for f in fields(SimParams) if f.name != "regimes")


PROTOCOL_NAMES: tuple[str, ...] = ("small", "eager", "rendezvous")


def params_matrix(
    base: SimParams,
    names: tuple[str, ...] | list[str],
    values: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """Stack parameter sets into the engine's ``(n_sets, n_params)`` float matrix.

    Column order is ``base.as_dict()``: the scalar parameters (:func:`parameter_names`),
    then the slots of ``base``'s regimes. ``values`` has shape ``(n_sets, len(names))``
    and overrides the named columns of ``base`` (scalar names or continuous regime slots
    such as ``regime1_recv_overhead_us``; a former field name such as ``latency_us`` is
    read as its current one); every row is validated.

    Raises
    ------
    ParameterError
        If a name is unknown or any row holds an invalid value (the row is named).
    """
    base_values = base.as_dict()
    all_names = tuple(base_values)
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim != 2 or vals.shape[1] != len(names):
        raise ParameterError(
            "values",
            f"array of shape {vals.shape}",
            f"shape (n_sets, {len(names)}) for {list(names)}",
        )
    columns = []
    for name in (_regimes.canonical_name(n) for n in names):
        slot = _regimes.parse_slot_name(name)
        if name not in all_names or (slot is not None and slot[1] not in _regimes.CONTINUOUS_SLOTS):
            raise ParameterError(
                name,
                "(column)",
                f"one of {list(parameter_names())} or a continuous regime slot of "
                f"{len(base.regime_table())} regimes ({', '.join(_regimes.CONTINUOUS_SLOTS)})",
            )
        columns.append(all_names.index(name))
    out = np.tile(np.array([float(v) for v in base_values.values()]), (vals.shape[0], 1))
    out[:, columns] = vals
    _validate_matrix(out, all_names, len(parameter_names()))
    return out


def _validate_matrix(
    matrix: npt.NDArray[np.float64], names: tuple[str, ...], n_scalar: int
) -> None:
    low = np.array([PARAMETER_MAGNITUDE[0] if n in CONTINUOUS_PARAMETERS else 1 for n in names])
    high = np.array(
        [
            PARAMETER_MAGNITUDE[1] if n in CONTINUOUS_PARAMETERS else MAX_PROTOCOL_BYTES
            for n in names
        ]
    )
    scalar = matrix[:, :n_scalar]
    bad = ~np.isfinite(scalar) | (scalar < low[:n_scalar]) | (scalar > high[:n_scalar])
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        value = float(matrix[row, col])
        unit = UNITS.get(names[col], "")
        raise ParameterError(
            names[col],
            value,
            f"a number in [{low[col]:g}, {high[col]:g}] {unit} (parameter set {row})",
        )
    costs = [
        j
        for j, n in enumerate(names)
        if (_regimes.parse_slot_name(n) or (0, ""))[1] in _regimes.CONTINUOUS_SLOTS
    ]
    if costs:
        sub = matrix[:, costs]
        bad = ~np.isfinite(sub) | (sub < REGIME_COST_RANGE[0]) | (sub > REGIME_COST_RANGE[1])
        if bad.any():
            row, col = (int(i) for i in np.argwhere(bad)[0])
            slot = (_regimes.parse_slot_name(names[costs[col]]) or (0, ""))[1]
            raise ParameterError(
                names[costs[col]],
                float(sub[row, col]),
                f"a number in [{REGIME_COST_RANGE[0]:g}, {REGIME_COST_RANGE[1]:g}] "
                f"{_regimes.SLOT_UNITS.get(slot, '')} (parameter set {row})",
            )
    small = names.index("small_max_bytes")
    eager = names.index("eager_max_bytes")
    inverted = matrix[:, small] > matrix[:, eager]
    if inverted.any():
        row = int(np.argmax(inverted))
        raise ParameterError(
            "small_max_bytes",
            float(matrix[row, small]),
            f"at most eager_max_bytes={matrix[row, eager]:g} (parameter set {row})",
        )
