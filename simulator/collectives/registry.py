"""The algorithm registry: names, MPICH-like defaults, named sets and :func:`schedule`.

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


#: collective -> algorithm name -> schedule function.
ALGORITHMS: dict[str, dict[str, Algorithm]] = {
    "barrier": {"dissemination": barrier_dissemination, "linear": barrier_linear},
    "bcast": {
        "binomial": bcast_binomial,
        "binomial_tree": bcast_binomial_tree,
        "linear": bcast_linear,
    },
    "reduce": {"binomial": reduce_binomial, "linear": reduce_linear},
    "allreduce": {
        "recursive_doubling": allreduce_recursive_doubling,
        "ring": allreduce_ring,
        "reduce_bcast": allreduce_reduce_bcast,
        "flat_reduce_bcast": allreduce_flat_reduce_bcast,
    },
    "gather": {"binomial": gather_binomial, "linear": gather_linear},
    "gatherv": {"linear": gatherv_linear},
    "scatter": {"binomial": scatter_binomial, "linear": scatter_linear},
    "scatterv": {"linear": scatterv_linear},
    "allgather": {"ring": allgather_ring, "bruck": allgather_bruck, "linear": allgather_linear},
    "allgatherv": {
        "ring": allgatherv_ring,
        "bruck": allgatherv_bruck,
        "linear": allgatherv_linear,
    },
    "alltoall": {
        "pairwise": alltoall_pairwise,
        "linear": alltoall_linear,
        "basic_linear": alltoall_basic_linear,
        "pair": alltoall_pair,
        "bruck": alltoall_bruck,
        "ring": alltoall_ring,
        "ompi": alltoall_ompi,
    },
    "alltoallv": {"linear": alltoallv_linear, "pairwise": alltoallv_pairwise},
    "reduce_scatter": {
        "pairwise": reduce_scatter_pairwise,
        "reduce_scatterv": reduce_scatter_reduce_scatterv,
        "flat_reduce_scatterv": reduce_scatter_flat_reduce_scatterv,
        "simgrid": reduce_scatter_simgrid,
    },
    "scan": {"recursive_doubling": scan_recursive_doubling, "linear": scan_linear},
    "exscan": {"recursive_doubling": scan_recursive_doubling, "linear": scan_linear},
}

#: Collectives whose algorithm combines received data (charged as reduction compute).
REDUCING: frozenset[str] = frozenset({"reduce", "allreduce", "reduce_scatter", "scan", "exscan"})


#: Named selections of algorithms (see the module docstring): collective -> algorithm.
ALGORITHM_SETS: dict[str, dict[str, str]] = {
    "mpich": {},
    "simgrid": {
        "allreduce": "flat_reduce_bcast",
        "barrier": "linear",
        "bcast": "binomial_tree",
        "reduce": "linear",
        "gather": "linear",
        "gatherv": "linear",
        "scatter": "linear",
        "scatterv": "linear",
        "allgather": "linear",
        "allgatherv": "linear",
        "alltoall": "ompi",
        "alltoallv": "linear",
        "reduce_scatter": "simgrid",
    },
}


def algorithm_set(name: str) -> dict[str, str]:
    """The ``{collective: algorithm}`` choices of set ``name`` of :data:`ALGORITHM_SETS`.

    Raises
    ------
    CollectiveError
        For an unknown set name (the known ones are listed).
    """
    if name not in ALGORITHM_SETS:
        raise CollectiveError(
            f"collective set {name!r} is unknown: expected one of {sorted(ALGORITHM_SETS)}"
        )
    return dict(ALGORITHM_SETS[name])


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
