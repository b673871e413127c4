"""Network topologies: a registry of specs, builders (one module each), and the compiled routing.

* :mod:`.registry` -- :class:`TopologyEntry` and :func:`register_topology`: one entry per
  ``--topology`` name (option schema, builder, sizing, SimGrid cluster mapping);
* :mod:`.spec` -- ``make_topology("dragonfly:groups=86,...")``, ``topology_for_ranks``,
  ``make_zone`` (the flow model's SimGrid-shaped zones), read from the registry;
* :mod:`.base` -- the :class:`Topology` arrays and their Python-facing routing methods;
* :mod:`.dragonfly`, :mod:`.fattree`, :mod:`.crossbar` -- mpiuq's topologies, and
  :mod:`.cluster_zone`, :mod:`.torus_zone`, :mod:`.fattree_zone`, :mod:`.dragonfly_zone`
  -- SimGrid's zones: each builds its topology and registers its entry (imported here,
  so every built-in entry is registered once this package is);
* :mod:`.routing` -- minimal, d-mod-k and Valiant routing, compiled once and run by
  both the engine's packet network and :meth:`Topology.route`.
"""

from mpiuq.simulator.topologies import cluster_zone, dragonfly_zone, fattree_zone, torus_zone
from mpiuq.simulator.topologies.base import (
    LINK_EJECTION,
    LINK_INJECTION,
    LINK_NETWORK,
    ROUTINGS,
    Topology,
)
from mpiuq.simulator.topologies.crossbar import build_crossbar
from mpiuq.simulator.topologies.dragonfly import build_dragonfly, dragonfly_global_link_count
from mpiuq.simulator.topologies.fattree import build_fattree
from mpiuq.simulator.topologies.registry import (
    TOPOLOGY_REGISTRY,
    TopologyEntry,
    register_topology,
    topology_names,
)
from mpiuq.simulator.topologies.spec import (
    make_topology,
    parse_topology_spec,
    topology_for_ranks,
    valiant_intermediate,
)

#: The registered modules of SimGrid's zones (imported for their registration).
ZONE_MODULES = (cluster_zone, torus_zone, fattree_zone, dragonfly_zone)

__all__ = [
    "LINK_EJECTION",
    "LINK_INJECTION",
    "LINK_NETWORK",
    "ROUTINGS",
    "TOPOLOGY_REGISTRY",
    "Topology",
    "TopologyEntry",
    "build_crossbar",
    "build_dragonfly",
    "build_fattree",
    "dragonfly_global_link_count",
    "make_topology",
    "parse_topology_spec",
    "register_topology",
    "topology_for_ranks",
    "topology_names",
    "valiant_intermediate",
]
