"""Network models the engine can run on, chosen by name.

Every model is a small frozen description; the compiled kernel dispatches on
its integer ``kind``. Bandwidths and the per-hop latency come from
:class:`~mpiuq.simulator.parameters.SimParams`, so calibrated values carry over.

* ``analytic`` -- ``delta_t = alpha + beta * N`` per message (eq. 5 of the reference
  paper), ``alpha = hops * hop_latency``, ``beta = 1 / min(injection_bw, link_bw)``, with
  serialisation of each node's injection port (at the injection bandwidth) and
  in-order serialised delivery through its ejection port (at the link bandwidth),
  like MACRELS. With ``hops = 2`` it is the two-node network of the benchmarks:
  injection link, one switch, link into the destination (ejection).
* ``compute-only`` -- zero network time and zero MPI-stack overhead: the limit set
  by load balance alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpiuq.simulator import _kernel
from mpiuq.simulator.errors import SettingError


@dataclass(frozen=True, slots=True)
class AnalyticNetwork:
    """Contention-free ``alpha + beta * N`` network with port serialisation.

    Parameters
    ----------
    hops
        Links traversed by every message (2 = node -> switch -> node).
    """

    hops: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.hops, bool) or not isinstance(self.hops, int) or self.hops < 1:
            raise SettingError(f"hops={self.hops!r} is invalid: expected a whole number >= 1")

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "analytic"

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return _kernel.NET_ANALYTIC

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return False


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
        return _kernel.NET_ZERO

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return True


NetworkModel = AnalyticNetwork | ComputeOnly

#: The benchmark network: two nodes through one switch.
TWO_NODE_SWITCH = AnalyticNetwork(hops=2)

NETWORK_MODELS: tuple[str, ...] = ("analytic", "compute-only")


def network_by_name(name: str, hops: int = 2) -> NetworkModel:
    """Build a network model from its registry name.

    Raises
    ------
    SettingError
        If ``name`` is not one of :data:`NETWORK_MODELS`.
    """
    if name == "analytic":
        return AnalyticNetwork(hops=hops)
    if name == "compute-only":
        return ComputeOnly()
    raise SettingError(f"network model {name!r} is unknown: expected one of {list(NETWORK_MODELS)}")
