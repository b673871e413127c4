"""Network models the engine can run on, chosen by name.

Each model is one module: a small frozen description, its compiled unit and its
registry entry (:mod:`.registry`); every unit has one contract -- *start a transfer
of N bytes between two nodes at time t and return its arrival time* (or start a flow
whose packets follow as events), updating its own state -- and the kernel dispatches
on the model's integer ``kind`` (:func:`mpiuq.simulator.networks._dispatch.start_transfer`,
generated from the registry with the codes by ``python -m mpiuq.generate_networks``).
Bandwidths and the per-hop latency come from
:class:`~mpiuq.simulator.parameters.SimParams`, so calibrated values carry over.

* ``analytic`` (:mod:`.analytic`) -- ``alpha + beta * N`` per message (eq. 5 of the
  reference paper) with injection and ejection port serialisation;
* ``packet`` (:mod:`.packet`) -- congestion-aware packets on a topology (dragonfly,
  fat-tree, crossbar) with minimal or Valiant routing;
* ``flow`` (:mod:`.flow`) -- flows sharing link bandwidth by max-min fairness, on a
  topology, a SimGrid platform's cluster, or one switch (CM02, LV08 and SMPI rules);
* ``compute-only`` (:mod:`.compute_only`) -- zero network time and zero MPI-stack
  overhead: the limit set by load balance alone.

:func:`network_by_name` builds a model from its registry entry;
:func:`network_arrays` turns a model and a rank placement into the
:class:`~mpiuq.simulator.networks.state.NetworkArrays` bundle the kernel runs on.
"""

from __future__ import annotations

import importlib
from typing import Any

from mpiuq.simulator.codes import NETWORK_MODELS, NETWORK_MODULES, ROUTINGS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.networks.analytic import AnalyticNetwork
from mpiuq.simulator.networks.arrays import network_arrays
from mpiuq.simulator.networks.compute_only import ComputeOnly
from mpiuq.simulator.networks.flow import FlowNetwork, FlowSharing
from mpiuq.simulator.networks.packet import PacketNetwork
from mpiuq.simulator.networks.registry import NETWORK_REGISTRY, NetworkModel
from mpiuq.simulator.networks.state import NetworkArrays
from mpiuq.simulator.topologies.base import Topology
from mpiuq.simulator.topologies.zone import Zone

__all__ = [
    "NETWORK_MODELS",
    "ROUTINGS",
    "TWO_NODE_SWITCH",
    "AnalyticNetwork",
    "ComputeOnly",
    "FlowNetwork",
    "FlowSharing",
    "NetworkArrays",
    "NetworkModel",
    "PacketNetwork",
    "network_arrays",
    "network_by_name",
]

for _module in NETWORK_MODULES:  # every compiled model registers itself
    importlib.import_module(_module)

#: The benchmark network: two nodes through one switch.
TWO_NODE_SWITCH = AnalyticNetwork(hops=2)


def network_by_name(
    name: str,
    hops: int = 2,
    topology: Topology | Zone | None = None,
    **options: Any,
) -> NetworkModel:
    """Build a network model from its registry name.

    Parameters
    ----------
    name
        A registered model (:data:`NETWORK_MODELS` are the compiled ones).
    hops
        Links per message of the analytic and flow models without topology.
    topology
        Topology of the packet model (required) or of the analytic and flow models
        (optional); a :class:`~mpiuq.simulator.topologies.zone.Zone` (a SimGrid
        platform's cluster) only for the models that run on platforms.
    options
        The model's options (its entry's ``options``: ``packet_bytes``, ``routing``,
        ``seed`` of :class:`PacketNetwork`; ``sharing`` and ``zero_overhead`` of
        :class:`FlowNetwork`); options of other models are ignored.

    Raises
    ------
    SettingError
        If ``name`` is not registered, an option is no model's, or the model refuses
        its options or topology (the packet model needs a topology, only the models
        that run on platforms take a zone).
    """
    entry = NETWORK_REGISTRY.get(name)
    known = {o for e in NETWORK_REGISTRY for o in e.options}
    unknown = sorted(set(options) - known)
    if unknown:
        raise SettingError(
            f"network options {unknown} are unknown: expected options of {name!r} "
            f"{list(entry.options)} (or of another model: {sorted(known)})"
        )
    own = {k: v for k, v in options.items() if k in entry.options}
    return entry.build(hops, topology, own)
