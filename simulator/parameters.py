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
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.errors import ParameterError

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

    def __post_init__(self) -> None:
        for name in CONTINUOUS_PARAMETERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(
                value, int | float | np.floating | np.integer
            ):
                raise ParameterError(name, value, "a positive finite number")
            if not math.isfinite(float(value)) or float(value) <= 0.0:
                raise ParameterError(name, value, "a positive finite number")
            object.__setattr__(self, name, float(value))
        for name in PROTOCOL_SETTINGS:
            value = getattr(self, name)
            if isinstance(value, bool) or not _is_integral(value) or int(value) <= 0:
                raise ParameterError(name, value, "a positive whole number of bytes")
            object.__setattr__(self, name, int(value))
        if self.small_max_bytes > self.eager_max_bytes:
            raise ParameterError(
                "small_max_bytes",
                self.small_max_bytes,
                f"at most eager_max_bytes={self.eager_max_bytes}",
            )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: SimParams | None = None) -> SimParams:
        """Build a parameter set from ``{name: value}``, on top of ``base`` (defaults if None).

        Raises
        ------
        ParameterError
            For an unknown name or an invalid value.
        """
        known = set(parameter_names())
        for name in values:
            if name not in known:
                raise ParameterError(name, values[name], f"one of {sorted(known)}")
        return replace(base if base is not None else cls(), **dict(values))

    def as_dict(self) -> dict[str, float | int]:
        """Return ``{name: value}`` for every parameter."""
        return asdict(self)

    def with_values(self, **values: float | int) -> SimParams:
        """Return a copy with some parameters changed (validated)."""
        return SimParams.from_mapping(values, base=self)

    def protocol_of(self, size_bytes: int) -> str:
        """Name of the protocol used for a message of ``size_bytes``."""
        if size_bytes <= self.small_max_bytes:
            return "small"
        if size_bytes <= self.eager_max_bytes:
            return "eager"
        return "rendezvous"


def _is_integral(value: object) -> bool:
    if isinstance(value, int | np.integer):
        return True
    return (
        isinstance(value, float | np.floating)
        and math.isfinite(value)
        and float(value).is_integer()
    )


def parameter_names() -> tuple[str, ...]:
    """All parameter names of :class:`SimParams`, in declaration order."""
    return tuple(f.name for f in fields(SimParams))


PROTOCOL_NAMES: tuple[str, ...] = ("small", "eager", "rendezvous")


def params_matrix(
    base: SimParams,
    names: tuple[str, ...] | list[str],
    values: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """Stack parameter sets into the engine's ``(n_sets, n_params)`` float matrix.

    Column order is :func:`parameter_names`. ``values`` has shape ``(n_sets, len(names))``
    and overrides the named columns of ``base``; every row is validated.

    Raises
    ------
    ParameterError
        If a name is unknown or any row holds an invalid value (the row is named).
    """
    all_names = parameter_names()
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim != 2 or vals.shape[1] != len(names):
        raise ParameterError(
            "values",
            f"array of shape {vals.shape}",
            f"shape (n_sets, {len(names)}) for {list(names)}",
        )
    columns = []
    for name in names:
        if name not in all_names:
            raise ParameterError(name, "(column)", f"one of {list(all_names)}")
        columns.append(all_names.index(name))
    out = np.tile(np.array([float(v) for v in base.as_dict().values()]), (vals.shape[0], 1))
    out[:, columns] = vals
    _validate_matrix(out, all_names)
    return out


def _validate_matrix(matrix: npt.NDArray[np.float64], names: tuple[str, ...]) -> None:
    bad = ~np.isfinite(matrix) | (matrix <= 0.0)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ParameterError(
            names[col], float(matrix[row, col]), f"a positive finite number (parameter set {row})"
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
