"""Builders of the network topologies (one module each); use :mod:`mpiuq.simulator.topology`."""

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

__all__ = [
    "LINK_EJECTION",
    "LINK_INJECTION",
    "LINK_NETWORK",
    "ROUTINGS",
    "Topology",
    "build_crossbar",
    "build_dragonfly",
    "build_fattree",
    "dragonfly_global_link_count",
]
