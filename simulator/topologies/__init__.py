"""Network topologies: specs, builders (one module each), and the compiled routing.

* :mod:`.spec` -- ``make_topology("dragonfly:groups=86,...")``, ``topology_for_ranks``;
* :mod:`.base` -- the :class:`Topology` arrays and their Python-facing routing methods;
* :mod:`.dragonfly`, :mod:`.fattree`, :mod:`.crossbar` -- the builders;
* :mod:`.routing` -- minimal, d-mod-k and Valiant routing, compiled once and run by
  both the engine's packet network and :meth:`Topology.route`.
"""

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
from mpiuq.simulator.topologies.spec import (
    TOPOLOGIES,
    make_topology,
    parse_topology_spec,
    topology_for_ranks,
    valiant_intermediate,
)

__all__ = [
    "LINK_EJECTION",
    "LINK_INJECTION",
    "LINK_NETWORK",
    "ROUTINGS",
    "TOPOLOGIES",
    "Topology",
    "build_crossbar",
    "build_dragonfly",
    "build_fattree",
    "dragonfly_global_link_count",
    "make_topology",
    "parse_topology_spec",
    "topology_for_ranks",
    "valiant_intermediate",
]
