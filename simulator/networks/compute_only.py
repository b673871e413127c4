"""The compute-only network: zero network time and zero MPI-stack overhead.

The limit set by load balance alone: every transfer arrives when it is sent, and
the kernel zeroes the protocol costs (``zero_overhead``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mpiuq.simulator.codes import NET_ZERO
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
        return NET_ZERO

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return True


@njit(inline="always", error_model="numpy")
def zero_arrival(t):  # type: ignore[no-untyped-def]
    """Arrival time of a transfer sent at ``t``: ``t``."""
    return t
