"""The collective-algorithm registry: entries, MPICH-like defaults, named sets, :func:`schedule`.

Every algorithm lowering a collective to point-to-point steps is one
:class:`CollectiveAlgorithm` entry of :data:`ALGORITHM_REGISTRY`: its collective, its
name, its schedule function (the contract of :mod:`.base`) and the named sets that
select it. :data:`ALGORITHMS` (collective -> name -> function), :data:`ALGORITHM_SETS`
(the ``--collectives`` choices and ``--like simgrid``'s selection), the checks of
``--algorithm`` and of scenario files, and the docs' table are read from the entries. A
new algorithm is a function plus one :func:`register_algorithm` call (a built-in one: a
row of the table below); see ``docs/extending-simulator.md``.

Defaults (:func:`default_algorithm`) follow MPICH's selection (Thakur, Rabenseifner and
Gropp 2005): the algorithm depends on the message size. :data:`ALGORITHM_SETS` name
whole selections that other MPI libraries or simulators make, chosen with
``--collectives NAME`` (explicit ``--algorithm`` choices still win):

``mpich``
    the defaults themselves.
``simgrid``
    SimGrid 3.32 SMPI's ``default`` collective selector (``smpi/coll-selector:default``,
    src/smpi/colls/smpi_default_selector.cpp), size-independent: allreduce = flat
    reduce to rank 0 then binomial-tree broadcast, barrier = linear (Open MPI's
    ``basic_linear``: everyone reports to rank 0, which releases everyone), bcast =
    binomial tree with one blocking send per child, reduce / gather / scatter /
    all-gather(v) / all-to-all-v = linear (SimGrid's nonblocking versions waited for),
    reduce-scatter = flat reduce to rank 0 then linear scatter-v, all-to-all = Open MPI's
    size-based decision as SimGrid ports it (``ompi``: basic linear, pair or Bruck, see
    :mod:`.alltoall`). Scans keep the MPICH defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.simulator.collectives.alltoall import (
    alltoall_basic_linear,
    alltoall_bruck,
    alltoall_ompi,
    alltoall_pair,
    alltoall_ring,
)
from mpiuq.simulator.collectives.barrier import (
    barrier_dissemination,
    barrier_linear,
)
from mpiuq.simulator.collectives.base import Algorithm, CollectiveError, CollSizes, Schedule
from mpiuq.simulator.collectives.exchanges import (
    allgather_bruck,
    allgather_linear,
    allgather_ring,
    allgatherv_bruck,
    allgatherv_linear,
    allgatherv_ring,
    alltoall_linear,
    alltoall_pairwise,
    alltoallv_linear,
    alltoallv_pairwise,
)
from mpiuq.simulator.collectives.reductions import (
    allreduce_flat_reduce_bcast,
    allreduce_recursive_doubling,
    allreduce_reduce_bcast,
    allreduce_ring,
    reduce_scatter_flat_reduce_scatterv,
    reduce_scatter_pairwise,
    reduce_scatter_reduce_scatterv,
    reduce_scatter_simgrid,
    scan_linear,
    scan_recursive_doubling,
)
from mpiuq.simulator.collectives.rooted import (
    bcast_binomial,
    bcast_binomial_tree,
    bcast_linear,
    gather_binomial,
    gather_linear,
    gatherv_linear,
    reduce_binomial,
    reduce_linear,
    scatter_binomial,
    scatter_linear,
    scatterv_linear,
)
from mpiuq.simulator.registry import Registry

#: Collective names understood by :func:`schedule` (lower-case MPI names without ``MPI_``).
COLLECTIVES: tuple[str, ...] = (
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "gatherv",
    "scatter",
    "scatterv",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
    "scan",
    "exscan",
)

#: Below this many bytes allreduce uses recursive doubling, above it the ring (MPICH: 2 KiB).
ALLREDUCE_SHORT_BYTES = 2048
#: Below this many total bytes all-gather(v) uses Bruck's algorithm, above it the ring (MPICH).
ALLGATHER_SHORT_BYTES = 81920
#: Up to this many bytes per block all-to-all posts all messages at once, above it pairwise.
ALLTOALL_MEDIUM_BYTES = 32768


@dataclass(frozen=True, slots=True)
class CollectiveAlgorithm:
    """One algorithm lowering a collective to point-to-point steps (a registry entry).

    Parameters
    ----------
    collective
        The collective it implements (one of :data:`COLLECTIVES`).
    algorithm
        Its name among that collective's algorithms (``--algorithm COLL=NAME``, a
        scenario's ``<collective> = NAME``).
    schedule
        The lowering function, ``schedule(me, p, root, sizes) -> tuple[Step, ...]`` (the
        contract of :mod:`.base`).
    selected_by
        Names of the algorithm sets (:func:`algorithm_set`, ``--collectives NAME``,
        ``--like simgrid``) that choose it for its collective.
    description
        One line for the docs' table (default: the first line of the function's docstring).
    """

    collective: str
    algorithm: str
    schedule: Algorithm
    selected_by: tuple[str, ...] = ()
    description: str = ""

    @property
    def name(self) -> str:
        """Registry key: ``<collective>-<algorithm>``."""
        return f"{self.collective}-{self.algorithm}"

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise CollectiveError(
                f"collective {self.collective!r} is unknown: expected one of {list(COLLECTIVES)}"
            )
        if not self.description:
            doc = (self.schedule.__doc__ or self.algorithm).strip().splitlines()[0]
            object.__setattr__(self, "description", doc)


#: Every collective algorithm registered in this process (built-in ones first).
ALGORITHM_REGISTRY: Registry[CollectiveAlgorithm] = Registry("collective algorithm")


def register_algorithm(entry: CollectiveAlgorithm) -> CollectiveAlgorithm:
    """Register ``entry`` (see :meth:`Registry.register`); returns it. Its collective's
    algorithm names, :func:`schedule`, the ``--algorithm`` and scenario checks and the
    sets it is ``selected_by`` then know it."""
    return ALGORITHM_REGISTRY.register(entry)


def _builtin(collective: str, algorithm: str, fn: Algorithm, *sets: str) -> None:
    register_algorithm(CollectiveAlgorithm(collective, algorithm, fn, sets))


for _row in (
    ("barrier", "dissemination", barrier_dissemination),
    ("barrier", "linear", barrier_linear, "simgrid"),
    ("bcast", "binomial", bcast_binomial),
    ("bcast", "binomial_tree", bcast_binomial_tree, "simgrid"),
    ("bcast", "linear", bcast_linear),
    ("reduce", "binomial", reduce_binomial),
    ("reduce", "linear", reduce_linear, "simgrid"),
    ("allreduce", "recursive_doubling", allreduce_recursive_doubling),
    ("allreduce", "ring", allreduce_ring),
    ("allreduce", "reduce_bcast", allreduce_reduce_bcast),
    ("allreduce", "flat_reduce_bcast", allreduce_flat_reduce_bcast, "simgrid"),
    ("gather", "binomial", gather_binomial),
    ("gather", "linear", gather_linear, "simgrid"),
    ("gatherv", "linear", gatherv_linear, "simgrid"),
    ("scatter", "binomial", scatter_binomial),
    ("scatter", "linear", scatter_linear, "simgrid"),
    ("scatterv", "linear", scatterv_linear, "simgrid"),
    ("allgather", "ring", allgather_ring),
    ("allgather", "bruck", allgather_bruck),
    ("allgather", "linear", allgather_linear, "simgrid"),
    ("allgatherv", "ring", allgatherv_ring),
    ("allgatherv", "bruck", allgatherv_bruck),
    ("allgatherv", "linear", allgatherv_linear, "simgrid"),
    ("alltoall", "pairwise", alltoall_pairwise),
    ("alltoall", "linear", alltoall_linear),
    ("alltoall", "basic_linear", alltoall_basic_linear),
    ("alltoall", "pair", alltoall_pair),
    ("alltoall", "bruck", alltoall_bruck),
    ("alltoall", "ring", alltoall_ring),
    ("alltoall", "ompi", alltoall_ompi, "simgrid"),
    ("alltoallv", "linear", alltoallv_linear, "simgrid"),
    ("alltoallv", "pairwise", alltoallv_pairwise),
    ("reduce_scatter", "pairwise", reduce_scatter_pairwise),
    ("reduce_scatter", "reduce_scatterv", reduce_scatter_reduce_scatterv),
    ("reduce_scatter", "flat_reduce_scatterv", reduce_scatter_flat_reduce_scatterv),
    ("reduce_scatter", "simgrid", reduce_scatter_simgrid, "simgrid"),
    ("scan", "recursive_doubling", scan_recursive_doubling),
    ("scan", "linear", scan_linear),
    ("exscan", "recursive_doubling", scan_recursive_doubling),
    ("exscan", "linear", scan_linear),
):
    _builtin(*_row)  # type: ignore[arg-type]


class _LiveTable(Mapping[str, dict[str, Any]]):
    """A read-only mapping computed from the registry on every access."""

    def __init__(self, build: Callable[[], dict[str, dict[str, Any]]]) -> None:
        self._build = build

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


_TABLE_CACHE: dict[tuple[str, ...], dict[str, dict[str, Algorithm]]] = {}


def _algorithms() -> dict[str, dict[str, Algorithm]]:
    """collective -> algorithm -> schedule, rebuilt only when the registered names change
    (the lowering looks algorithms up once per rank and call)."""
    key = ALGORITHM_REGISTRY.names()
    table = _TABLE_CACHE.get(key)
    if table is None:
        table = {c: {} for c in COLLECTIVES}
        for e in ALGORITHM_REGISTRY:
            table[e.collective][e.algorithm] = e.schedule
        _TABLE_CACHE.clear()
        _TABLE_CACHE[key] = table
    return table


def _sets() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {"mpich": {}}  # the size-based defaults themselves
    for e in ALGORITHM_REGISTRY:
        for name in e.selected_by:
            chosen = out.setdefault(name, {})
            if e.collective in chosen:
                raise CollectiveError(
                    f"collective set {name!r} selects two {e.collective} algorithms: "
                    f"{chosen[e.collective]!r} and {e.algorithm!r}"
                )
            chosen[e.collective] = e.algorithm
    return out


#: collective -> algorithm name -> schedule function (live: read from the registry).
ALGORITHMS: Mapping[str, dict[str, Algorithm]] = _LiveTable(_algorithms)

#: Collectives whose algorithm combines received data (charged as reduction compute).
REDUCING: frozenset[str] = frozenset({"reduce", "allreduce", "reduce_scatter", "scan", "exscan"})


#: Named selections of algorithms (see the module docstring): set name -> collective ->
#: algorithm (live: the registry's ``selected_by``; ``mpich`` is the defaults themselves).
ALGORITHM_SETS: Mapping[str, dict[str, str]] = _LiveTable(_sets)


def algorithm_table() -> str:
    """The docs' Markdown table of the registered algorithms."""
    rows = [
        f"| `{e.collective}` | `{e.algorithm}` | {', '.join(e.selected_by)} | {e.description} |"
        for e in ALGORITHM_REGISTRY
    ]
    return "\n".join(
        ["| collective | algorithm | sets | description |", "|---|---|---|---|", *rows]
    )


def algorithm_set(name: str) -> dict[str, str]:
    """The ``{collective: algorithm}`` choices of set ``name`` of :data:`ALGORITHM_SETS`.

    Raises
    ------
    CollectiveError
        For an unknown set name (the known ones are listed).
    """
    sets = _sets()
    if name not in sets:
        raise CollectiveError(f"collective set {name!r} is unknown: expected one of {sorted(sets)}")
    return dict(sets[name])


def default_algorithm(collective: str, p: int, sizes: CollSizes) -> str:
    """MPICH-like default algorithm of ``collective`` on ``p`` ranks.

    Decisions use only sizes every member agrees on: the reduction vector for
    allreduce, the total gathered bytes for all-gather-v. All-to-all uses the
    per-block size (identical on all ranks for MPI_Alltoall).
    """
    if collective == "allreduce":
        return "recursive_doubling" if sizes.nbytes <= ALLREDUCE_SHORT_BYTES else "ring"
    if collective == "allgather":
        return "bruck" if sizes.nbytes * p <= ALLGATHER_SHORT_BYTES else "ring"
    if collective == "allgatherv":
        return "bruck" if sum(sizes.vcounts) <= ALLGATHER_SHORT_BYTES else "ring"
    if collective == "alltoall":
        return "linear" if sizes.nbytes <= ALLTOALL_MEDIUM_BYTES else "pairwise"
    return {
        "barrier": "dissemination",
        "bcast": "binomial",
        "reduce": "binomial",
        "gather": "binomial",
        "gatherv": "linear",
        "scatter": "binomial",
        "scatterv": "linear",
        "alltoallv": "linear",
        "reduce_scatter": "pairwise",
        "scan": "recursive_doubling",
        "exscan": "recursive_doubling",
    }[_check_collective(collective)]


def _check_collective(collective: str) -> str:
    if collective not in ALGORITHMS:
        raise CollectiveError(
            f"collective {collective!r} is unknown: expected one of {list(COLLECTIVES)}"
        )
    return collective


def validate_algorithms(choice: dict[str, str]) -> dict[str, str]:
    """Check a ``{collective: algorithm}`` mapping; returns it as a plain dict.

    Raises
    ------
    CollectiveError
        Naming the unknown collective or algorithm and the allowed names.
    """
    out = {}
    for coll, alg in choice.items():
        table = ALGORITHMS[_check_collective(coll)]
        if alg not in table:
            raise CollectiveError(
                f"algorithm {alg!r} for {coll} is unknown: expected one of {sorted(table)}"
            )
        out[coll] = alg
    return out


def schedule(
    collective: str, algorithm: str, me: int, p: int, root: int, sizes: CollSizes
) -> Schedule:
    """Steps of ``algorithm`` for ``collective`` executed by communicator rank ``me``.

    Parameters
    ----------
    collective, algorithm
        Names from :data:`ALGORITHMS`.
    me, p, root
        Communicator rank, communicator size and root communicator rank (ignored by
        collectives without a root).
    sizes
        Byte counts recorded for this rank (see :class:`CollSizes`).

    Raises
    ------
    CollectiveError
        For unknown names, ``me``/``root`` outside ``0..p-1`` or negative sizes.

    Examples
    --------
    >>> [s.sends for s in schedule("bcast", "binomial", 0, 4, 0, CollSizes(8))]
    [((2, 8), (1, 8))]
    """
    table = ALGORITHMS[_check_collective(collective)]
    if algorithm not in table:
        raise CollectiveError(
            f"algorithm {algorithm!r} for {collective} is unknown: expected one of {sorted(table)}"
        )
    if p < 1 or not 0 <= me < p:
        raise CollectiveError(f"rank {me} is not in a communicator of {p} ranks (0..{p - 1})")
    if not 0 <= root < p:
        raise CollectiveError(f"root {root} of {collective} is not a rank in 0..{p - 1}")
    if sizes.nbytes < 0 or any(v < 0 for v in sizes.vcounts):
        raise CollectiveError(f"{collective} has a negative byte count: {sizes}")
    return table[algorithm](me, p, root, sizes)
