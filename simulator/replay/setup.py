"""What to replay a trace with: :class:`ReplaySetup`, and the network and placement it gives.

:func:`network_and_nodes` turns a setup into a network factory (model name -> network
model) and the node of every rank: a topology spec and placement, a SimGrid platform
file and hostfile, or one node per rank.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.codes import FLOW_SHARING_NAMES, PLATFORM_MODELS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.lowering.lower import LoweringOptions
from mpiuq.simulator.networks import (
    NETWORK_MODELS,
    FlowSharing,
    NetworkModel,
    network_by_name,
)
from mpiuq.simulator.parameters import SimParams

#: Sharing rules of the flow model, by name (:class:`~mpiuq.simulator.networks.FlowSharing`).
FLOW_SHARINGS: dict[str, FlowSharing] = dict(
    zip(
        FLOW_SHARING_NAMES,
        (FlowSharing(), FlowSharing.cm02(), FlowSharing.lv08(), FlowSharing.smpi()),
        strict=True,
    )
)


@dataclass(frozen=True, slots=True)
class ReplaySetup:
    """What to replay a trace with.

    Parameters
    ----------
    models
        Network model names (see :data:`mpiuq.simulator.networks.NETWORK_MODELS`).
    compute_scale
        Factor applied to the trace's compute durations (the reference study used 0.1).
    reduce_rate_Bps
        Rate of reduction operators, bytes per second; ``None``: the memory bandwidth
        ``memory_bw_GBps`` of the parameters.
    algorithms
        ``(collective, algorithm)`` pairs overriding the defaults.
    hops
        Links per message of the analytic model when no topology is given.
    topology
        Topology spec for the models that use one (``packet`` needs one; without it
        the packet model gets the reference paper's dragonfly sized for the trace).
    placement
        Rank placement on the topology's nodes: ``linear``, ``round-robin`` or ``random``.
    sharing
        Sharing rules of the flow model: ``maxmin`` (equal shares), ``cm02``, ``lv08``
        or ``smpi`` (SimGrid's models of those names, :class:`~mpiuq.simulator.networks.FlowSharing`).
    free_endpoints
        The flow model's endpoints charge no MPI-stack costs (SimGrid's SMPI charges none).
    platform, hostfile
        A SimGrid platform file of one cluster, and an SMPI hostfile placing rank ``r``
        on its entry ``r`` (modulo its length; default: the platform's hosts sorted by
        name, as SimGrid does).
        Replaces the topology and placement; models: ``flow`` and ``compute-only``.
    """

    models: tuple[str, ...] = ("analytic", "compute-only")
    compute_scale: float = 1.0
    reduce_rate_Bps: float | None = None
    algorithms: tuple[tuple[str, str], ...] = ()
    hops: int = 2
    topology: str | None = None
    placement: str = "linear"
    sharing: str = "maxmin"
    free_endpoints: bool = False
    platform: str | None = None
    hostfile: str | None = None

    def __post_init__(self) -> None:
        if not self.models:
            raise SettingError("models is empty: expected at least one network model name")
        for m in self.models:
            if m not in NETWORK_MODELS:
                raise SettingError(
                    f"network model {m!r} is unknown: expected one of {list(NETWORK_MODELS)}"
                )
        if len(set(self.models)) != len(self.models):
            raise SettingError(f"models {list(self.models)} repeat a name")
        if self.sharing not in FLOW_SHARINGS:
            raise SettingError(
                f"sharing {self.sharing!r} is unknown: expected one of {list(FLOW_SHARINGS)}"
            )
        if self.hostfile is not None and self.platform is None:
            raise SettingError("a hostfile places ranks on a platform's hosts: give the platform")
        if self.platform is not None:
            if self.topology is not None:
                raise SettingError(
                    f"topology {self.topology!r} and platform {self.platform!r} both given: "
                    "the platform file describes the network"
                )
            other = [m for m in self.models if m not in PLATFORM_MODELS]
            if other:
                raise SettingError(
                    f"models {other} do not run on a SimGrid platform: expected "
                    f"{list(PLATFORM_MODELS)} (the platform's cluster is a flow network)"
                )

    def lowering_options(self, params: SimParams) -> LoweringOptions:
        """Lowering options under ``params`` (reductions at memory bandwidth by default)."""
        rate = self.reduce_rate_Bps
        if rate is None:
            rate = float(params.memory_bw_GBps) * 1e9
        return LoweringOptions(
            reduce_rate_Bps=rate, compute_scale=self.compute_scale, algorithms=self.algorithms
        )


NetworkFactory = Callable[[str], NetworkModel]


def network_and_nodes(
    setup: ReplaySetup, n_ranks: int
) -> tuple[NetworkFactory, npt.NDArray[np.int64] | None]:
    """Default network factory and rank placement of ``setup``.

    Raises
    ------
    PlatformError
        If the platform file or hostfile cannot be read or is refused.
    """
    flow: dict[str, Any] = {
        "sharing": FLOW_SHARINGS[setup.sharing],
        "zero_overhead": setup.free_endpoints,
    }
    if setup.platform is not None:
        from mpiuq.simulator.platform import place_ranks_on_hosts, read_hostfile, read_platform

        platform = read_platform(setup.platform)
        hosts = read_hostfile(setup.hostfile) if setup.hostfile is not None else None
        on_hosts = place_ranks_on_hosts(platform, n_ranks, hosts)
        zone = platform.zone
        return (
            lambda name: network_by_name(name, hops=setup.hops, topology=zone, **flow)
        ), on_hosts
    needs_topology = setup.topology is not None or "packet" in setup.models
    if not needs_topology:
        return (lambda name: network_by_name(name, hops=setup.hops, **flow)), None
    from mpiuq.simulator.placement import place_ranks
    from mpiuq.simulator.topologies import make_topology, topology_for_ranks
    from mpiuq.simulator.topologies.spec import is_zone_spec, make_zone, place_on_zone

    spec = setup.topology or "dragonfly"
    if is_zone_spec(spec):  # a SimGrid-shaped zone: the flow model's only
        zone = make_zone(spec, n_ranks)
        on_zone = place_on_zone(n_ranks, zone, setup.placement)
        return (lambda name: network_by_name(name, hops=setup.hops, topology=zone, **flow)), on_zone
    topo = make_topology(spec) if ":" in spec else topology_for_ranks(spec, n_ranks)
    nodes = place_ranks(n_ranks, topo, setup.placement)

    def factory(name: str) -> NetworkModel:
        return network_by_name(name, hops=setup.hops, topology=topo, **flow)

    return factory, nodes
