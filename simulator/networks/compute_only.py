"""The compute-only network: zero network time and zero MPI-stack overhead.

The limit set by load balance alone: every transfer arrives when it is sent, and
the kernel zeroes the protocol costs (``zero_overhead``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.simulator.networks.registry import NetworkModelEntry, model_code, register_network
from mpiuq.simulator.runtime.jit import njit


@dataclass(frozen=True, slots=True)
class ComputeOnly:
    """Instantaneous network and free MPI stack: only computation and waiting remain."""

    hops: int = 0

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "compute-only"

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return model_code("compute-only")

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return True


@njit(inline="always", error_model="numpy")
def zero_arrival(t, a, b, nbytes, flow, state, rates, tables):  # type: ignore[no-untyped-def]
    """Arrival time of a transfer sent at ``t``: ``t``."""
    return t


def build_compute_only(hops: int, topology: object, options: Mapping[str, Any]) -> ComputeOnly:
    """The compute-only model (it has no network: ``hops`` and ``topology`` do not apply)."""
    return ComputeOnly()


ENTRY = register_network(
    NetworkModelEntry(
        "compute-only",
        "zero network time and zero MPI-stack overhead: the limit set by load balance alone",
        ComputeOnly,
        build_compute_only,
        on_platform=True,
        cost_rank=3,
        start=zero_arrival,
    )
)
