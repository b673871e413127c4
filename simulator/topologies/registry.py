"""The topology registry: one entry per ``--topology`` name, registered by its builder module.

An entry (:class:`TopologyEntry`) holds what the rest of the simulator needs to know
about a topology: its name, one-line description and example spec, its option schema
(the keys a spec may give, those it must give, how a value is read), its builder
(``build(params)``, which validates the values and returns a
:class:`~mpiuq.simulator.topologies.base.Topology` or, for the flow model's
SimGrid-shaped zones, a :class:`~mpiuq.simulator.topologies.zone.Zone`), how it is sized
for a rank count when a spec gives the bare name, how many endpoints and switches a spec
would allocate (checked before anything is built), and which ``topology`` of a SimGrid
``<cluster>`` element it models, with the reader of that element's ``topo_parameters``.

What is derived from the entries: the names and examples :func:`make_topology` /
:func:`make_zone` accept and list in their messages (:mod:`.spec`), the ``--topology``
help of ``mpiuq replay``, the ``topology`` values a platform file's cluster may take and
the zone built for each (:mod:`mpiuq.simulator.platform.cluster`), and the topology table
of ``docs/extending-simulator.md`` (rewritten by ``python -m mpiuq.generate_networks``).
The built-in entries are registered by the builder modules of this package, which its
``__init__`` imports. See ``docs/extending-simulator.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.registry import Registry

__all__ = [
    "TOPOLOGY_REGISTRY",
    "TopologyEntry",
    "register_topology",
    "topology_names",
    "topology_table",
    "whole_number",
]


def whole_number(name: str, key: str, text: str) -> int:
    """The value of ``key=text`` of topology ``name`` read as a whole number (the default
    reader of an entry's values).

    Raises
    ------
    SettingError
        If ``text`` is not a whole number.
    """
    try:
        return int(text)
    except ValueError:
        raise SettingError(
            f"{name} parameter {key}={text!r} is invalid: expected a whole number"
        ) from None


#: ``build(params)``: the topology or zone of a spec's parameters (values as read);
#: raises ``SettingError`` naming a bad value. (The builders' types are not named here:
#: their modules import this one.)
Build = Callable[[Mapping[str, Any]], Any]
#: ``size_for(n_ranks, params)``: the parameters of the smallest sensible instance with
#: at least ``n_ranks`` nodes, ``params`` (given values) kept.
SizeFor = Callable[[int, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class TopologyEntry:
    """One topology of ``--topology`` (see the module docstring).

    Parameters
    ----------
    name
        Registry name, the spec's head (``dragonfly`` in ``dragonfly:groups=9``).
    description
        One line for the docs' table.
    example
        A complete spec, shown in messages and the docs (``dragonfly:groups=9,switches=8``).
    build
        The builder (see :data:`Build`).
    options
        The keys a spec may give (its option schema).
    required
        The keys a spec must give (a subset of ``options``).
    value
        ``value(name, key, text)``: one key's value from its text (default: a whole number;
        raises ``SettingError``).
    size_for
        Sizing for a rank count (see :data:`SizeFor`); ``None``: the full spec is needed.
    node_count
        ``node_count(params)``: endpoints plus switches the builder would allocate (Python
        ints), checked against the size limit before building; ``None``: the builder
        checks its own size.
    zone
        Whether it builds a SimGrid-shaped zone (run by the flow model only).
    simgrid_topology
        The ``topology`` attribute of a platform file's ``<cluster>`` it models, or ``None``.
    from_platform
        ``from_platform(topo_parameters, options)``: the zone of such a cluster (raises
        ``ValueError`` naming the bad text); given with ``simgrid_topology``.
    """

    name: str
    description: str
    example: str
    build: Build
    options: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    value: Callable[[str, str, str], object] = whole_number
    size_for: SizeFor | None = None
    node_count: Callable[[Mapping[str, Any]], int] | None = None
    zone: bool = False
    simgrid_topology: str | None = None
    from_platform: Callable[[str, Any], Any] | None = None

    def __post_init__(self) -> None:
        extra = [k for k in self.required if k not in self.options]
        if extra:
            raise SettingError(
                f"topology {self.name!r}: required key(s) {extra} are not among its "
                f"options {list(self.options)}"
            )
        if (self.simgrid_topology is None) != (self.from_platform is None):
            raise SettingError(
                f"topology {self.name!r}: give both or neither of simgrid_topology and "
                "from_platform"
            )


#: Every topology registered in this process, in registration order.
TOPOLOGY_REGISTRY: Registry[TopologyEntry] = Registry("topology")


def register_topology(entry: TopologyEntry) -> TopologyEntry:
    """Register ``entry`` (see :meth:`Registry.register`); returns it."""
    return TOPOLOGY_REGISTRY.register(entry)


def topology_names(zone: bool | None = None) -> tuple[str, ...]:
    """Names of the registered topologies: all, or only the zones (``True``) or only
    mpiuq's own topologies (``False``)."""
    return tuple(e.name for e in TOPOLOGY_REGISTRY if zone is None or e.zone == zone)


def topology_table() -> str:
    """The docs' Markdown table of the registered topologies."""
    rows = [
        f"| `{e.name}` | `{e.example}` | {'flow' if e.zone else 'analytic, packet, flow'} | "
        f"{e.simgrid_topology or ''} | {e.description} |"
        for e in sorted(TOPOLOGY_REGISTRY, key=lambda e: e.zone)
    ]
    head = "| topology | example | models | SimGrid cluster | description |\n|---|---|---|---|---|"
    return "\n".join([head, *rows])
