"""The network-model registry: one entry per model, registered by the model's own module.

An entry (:class:`NetworkModelEntry`) holds what the rest of the simulator needs to
know about a model: its name and one-line description, its frozen Python description
class and the factory that builds one from the common options (validating them), the
option names it accepts, whether it runs on a SimGrid platform file, its cost rank
(the order a replay starts several models in) and its compiled unit -- the njit
function starting a transfer, with the contract every model shares::

    start(t, a, b, nbytes, flow, state, rates, tables) -> arrival time

(``a``, ``b`` nodes; ``state`` the network state, ``rates`` the parameter vector's
network rates, ``tables`` the routing tables; a negative return starts the packet
events of flow ``flow``), or ``kernel_events=True`` for a model whose transfers the
kernel runs as its own events (the flow network).

What is derived from the entries, by :mod:`mpiuq.simulator.networks.generate`
(``python -m mpiuq.generate_networks``): the network-model block of
:mod:`mpiuq.simulator.codes` (``NETWORK_MODELS``, whose positions are the integer
codes, ``PLATFORM_MODELS``, ``NETWORK_COST_ORDER``, ``NETWORK_MODULES``), the compiled
dispatch :mod:`mpiuq.simulator.networks._dispatch` and the docs' table. Those are
checked-in files (numba freezes the codes and inlines the units into the event loop,
and the command line reads the names without importing numba); a test fails when
they differ from what the registry generates. At run time
:func:`~mpiuq.simulator.networks.network_by_name` builds models from the entries.
See ``docs/extending-simulator.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mpiuq.simulator.codes import NETWORK_MODELS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.registry import Registry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from mpiuq.simulator.networks.state import NetworkArrays
    from mpiuq.simulator.topologies.base import Topology
    from mpiuq.simulator.topologies.zone import Zone

__all__ = [
    "NETWORK_REGISTRY",
    "NetworkModel",
    "NetworkModelEntry",
    "model_code",
    "register_network",
]


class NetworkModel(Protocol):
    """What every model's frozen description has (the kernel reads these)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> int: ...

    @property
    def hops(self) -> int: ...

    @property
    def zero_overhead(self) -> bool: ...


#: ``build(hops, topology, options)``: the model's description from the common arguments
#: of :func:`~mpiuq.simulator.networks.network_by_name` and the options it accepts;
#: raises ``SettingError`` for a value or topology it cannot take.
Build = Callable[[int, "Topology | Zone | None", Mapping[str, Any]], NetworkModel]
#: ``arrays(model, nodes, n_nodes)``: the kernel's bundle of a model placed on ``nodes``
#: (``None``: the default bundle, routing tables of the model's ``topology`` if it has one).
Arrays = Callable[[Any, "npt.NDArray[np.int64]", int], "NetworkArrays"]


@dataclass(frozen=True, slots=True)
class NetworkModelEntry:
    """One network model (see the module docstring).

    Parameters
    ----------
    name
        Registry name (``--model NAME``, a campaign's or scenario's ``model``).
    description
        One line for the docs' table and help texts.
    model
        The frozen description class (its ``name`` is ``name``, its ``kind`` the code).
    build
        Factory and validation of the options (see :data:`Build`).
    options
        Names of the keyword options ``build`` accepts (the model's option schema); an
        option of another model is ignored, one no model knows is refused.
    on_platform
        Whether the model runs on a SimGrid platform file's cluster.
    cost_rank
        Order in which a replay starts several models at once (lower first: the
        costliest first, so the cheap ones fill the other threads).
    start
        The compiled unit (an njit function, ``inline="always"``) with the shared contract;
        ``None`` only with ``kernel_events``.
    kernel_events
        The kernel runs the model's transfers as its own events (flow network).
    arrays
        The kernel's bundle of a placed model (see :data:`Arrays`; ``None``: default).
    """

    name: str
    description: str
    model: type
    build: Build
    options: tuple[str, ...] = ()
    on_platform: bool = False
    cost_rank: int = 0
    start: Any = None
    kernel_events: bool = False
    arrays: Arrays | None = None

    def __post_init__(self) -> None:
        if (self.start is None) != self.kernel_events:
            raise SettingError(
                f"network model {self.name!r}: give exactly one of a compiled start unit "
                "and kernel_events=True"
            )


#: Every network model registered in this process, in registration order (the integer
#: codes are the positions in ``codes.NETWORK_MODELS``, which the generator keeps stable).
NETWORK_REGISTRY: Registry[NetworkModelEntry] = Registry("network model")


def register_network(entry: NetworkModelEntry) -> NetworkModelEntry:
    """Register ``entry`` (see :meth:`Registry.register`); returns it."""
    return NETWORK_REGISTRY.register(entry)


#: The command that regenerates what is derived from the registry.
GENERATE_COMMAND = "python -m mpiuq.generate_networks"


def model_code(name: str) -> int:
    """The integer code of model ``name`` in the compiled kernel (its position in
    ``codes.NETWORK_MODELS``).

    Raises
    ------
    SettingError
        If the model is not in the generated codes (registered after the dispatch was
        generated: run :data:`GENERATE_COMMAND`).
    """
    if name not in NETWORK_MODELS:
        raise SettingError(
            f"network model {name!r} is not compiled into the kernel (compiled: "
            f"{list(NETWORK_MODELS)}): its module must sit in simulator/networks/ and "
            f"`{GENERATE_COMMAND}` must have been run after adding it"
        )
    return NETWORK_MODELS.index(name)
