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
* ``packet`` -- congestion-aware packet network on a topology (dragonfly, fat-tree,
  crossbar): messages are cut into packets injected one after the other; each
  packet crosses the links of its route cut-through (one hop latency per link, the
  link's bandwidth: injection links at the injection bandwidth, switch links and
  ejection links at the link bandwidth), and packets whose routes share a link
  share it first-come-first-served. Links are reserved along the whole route when
  a packet is injected (path reservation), which keeps one event per packet.
  Without contention a message takes exactly the analytic ``alpha + beta * N``.
* ``compute-only`` -- zero network time and zero MPI-stack overhead: the limit set
  by load balance alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import _kernel
from mpiuq.simulator.errors import SettingError


class TopologyArrays(Protocol):
    """What the kernel needs of a topology (see :mod:`mpiuq.simulator.topology`)."""

    @property
    def name(self) -> str: ...
    @property
    def n_nodes(self) -> int: ...
    @property
    def n_switches(self) -> int: ...
    @property
    def link_class(self) -> npt.NDArray[np.int8]: ...
    @property
    def link_src(self) -> npt.NDArray[np.int32]: ...
    @property
    def link_dst(self) -> npt.NDArray[np.int32]: ...
    @property
    def node_switch(self) -> npt.NDArray[np.int32]: ...
    @property
    def inj_link(self) -> npt.NDArray[np.int32]: ...
    @property
    def ej_link(self) -> npt.NDArray[np.int32]: ...
    @property
    def next_link(self) -> npt.NDArray[np.int32]: ...


ROUTINGS: tuple[str, ...] = ("minimal", "valiant")


@dataclass(frozen=True, slots=True)
class AnalyticNetwork:
    """Contention-free ``alpha + beta * N`` network with port serialisation.

    Parameters
    ----------
    hops
        Links traversed by every message (2 = node -> switch -> node); ignored
        when a topology is given.
    topology
        Optional topology: ``alpha`` is then the hop latency times the number of
        links on the minimal route of each message.
    """

    hops: int = 2
    topology: TopologyArrays | None = field(default=None, compare=False)

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


@dataclass(frozen=True, slots=True)
class PacketNetwork:
    """Congestion-aware packet network on a topology.

    Parameters
    ----------
    topology
        Switches, links and minimal-routing tables.
    packet_bytes
        Size of the coarse packets messages are cut into.
    routing
        ``"minimal"`` or ``"valiant"`` (minimal to a pseudo-random intermediate
        switch chosen per message from ``seed``, then minimal to the destination).
    seed
        Seed of the valiant intermediate choice.
    """

    topology: TopologyArrays = field(compare=False)
    packet_bytes: int = 4096
    routing: str = "minimal"
    seed: int = 0

    def __post_init__(self) -> None:
        if (
            isinstance(self.packet_bytes, bool)
            or not isinstance(self.packet_bytes, int)
            or self.packet_bytes < 1
        ):
            raise SettingError(
                f"packet_bytes={self.packet_bytes!r} is invalid: expected a whole number >= 1"
            )
        if self.routing not in ROUTINGS:
            raise SettingError(
                f"routing {self.routing!r} is unknown: expected one of {list(ROUTINGS)}"
            )

    @property
    def name(self) -> str:
        """Registry name of the model."""
        return "packet"

    @property
    def hops(self) -> int:
        """Not used: hop counts come from the routes."""
        return 0

    @property
    def kind(self) -> int:
        """Integer code used by the compiled kernel."""
        return _kernel.NET_PACKET

    @property
    def zero_overhead(self) -> bool:
        """Whether MPI-stack costs are switched off."""
        return False


NetworkModel = AnalyticNetwork | ComputeOnly | PacketNetwork

#: The benchmark network: two nodes through one switch.
TWO_NODE_SWITCH = AnalyticNetwork(hops=2)

NETWORK_MODELS: tuple[str, ...] = ("analytic", "compute-only", "packet")


def network_by_name(
    name: str,
    hops: int = 2,
    topology: TopologyArrays | None = None,
    **packet_options: Any,
) -> NetworkModel:
    """Build a network model from its registry name.

    Parameters
    ----------
    name
        One of :data:`NETWORK_MODELS`.
    hops
        Links per message of the analytic model without topology.
    topology
        Topology of the packet model (required) or of the analytic model (optional).
    packet_options
        ``packet_bytes``, ``routing``, ``seed`` of :class:`PacketNetwork`.

    Raises
    ------
    SettingError
        If ``name`` is not one of :data:`NETWORK_MODELS`, or the packet model lacks a topology.
    """
    if name == "analytic":
        return AnalyticNetwork(hops=hops, topology=topology)
    if name == "compute-only":
        return ComputeOnly()
    if name == "packet":
        if topology is None:
            raise SettingError(
                "network model 'packet' needs a topology, e.g. dragonfly:groups=9,switches=8"
            )
        return PacketNetwork(topology=topology, **packet_options)
    raise SettingError(f"network model {name!r} is unknown: expected one of {list(NETWORK_MODELS)}")
