"""MPI collectives as point-to-point algorithms ("a sequence of point-to-point sends").

Every algorithm is one small function with the same contract::

    schedule(me, p, root, sizes) -> tuple[Step, ...]

It returns the part of the algorithm executed by communicator rank ``me`` of a
communicator of ``p`` ranks: a sequence of :class:`Step`\\ s. In one step the rank
posts its receives, then its sends, waits for all of them, and then combines
``combine_bytes`` of received data with its own (reductions). Peers are
*communicator* ranks; the lowering maps them to world ranks.

``sizes`` is a :class:`CollSizes` holding what the trace records for this rank:
``nbytes`` (the rank's buffer, or per-rank block for gather/scatter/all-to-all)
and ``vcounts`` (bytes per communicator rank of v-collectives and
reduce-scatter; all-to-all-v: send then receive bytes). Every algorithm decides
its communication pattern only from quantities all members agree on (``p``,
``root``, the reduction size, ``vcounts`` of all-gather-v / reduce-scatter), so
independently lowered ranks always match each other's messages.

Algorithms are chosen by name (:data:`ALGORITHMS`); :func:`default_algorithm`
picks MPICH-like defaults from the size of the operation, and :data:`ALGORITHM_SETS`
name whole selections (``simgrid``: SimGrid 3.32's default selector). The algorithms follow
Thakur, Rabenseifner and Gropp, "Optimization of collective communication
operations in MPICH" (IJHPCA 2005).

Modules: :mod:`.base` (the contract), :mod:`.barrier`, :mod:`.rooted` (broadcast,
reduce, gather, scatter), :mod:`.reductions` (allreduce, reduce-scatter, scan),
:mod:`.exchanges` (all-gather, all-to-all) and :mod:`.registry` (the algorithm registry:
:class:`CollectiveAlgorithm` entries, defaults, named sets, :func:`schedule`).
"""

from mpiuq.simulator.collectives.barrier import (
    barrier_dissemination,
    barrier_linear,
)
from mpiuq.simulator.collectives.base import (
    Algorithm,
    CollectiveError,
    CollSizes,
    Pair,
    Schedule,
    Step,
)
from mpiuq.simulator.collectives.exchanges import (
    allgather_bruck,
    allgather_ring,
    allgatherv_bruck,
    allgatherv_ring,
    alltoall_linear,
    alltoall_pairwise,
    alltoallv_linear,
    alltoallv_pairwise,
)
from mpiuq.simulator.collectives.reductions import (
    allreduce_recursive_doubling,
    allreduce_reduce_bcast,
    allreduce_ring,
    reduce_scatter_pairwise,
    reduce_scatter_reduce_scatterv,
    scan_linear,
    scan_recursive_doubling,
)
from mpiuq.simulator.collectives.registry import (
    ALGORITHM_REGISTRY,
    ALGORITHM_SETS,
    ALGORITHMS,
    ALLGATHER_SHORT_BYTES,
    ALLREDUCE_SHORT_BYTES,
    ALLTOALL_MEDIUM_BYTES,
    COLLECTIVES,
    REDUCING,
    CollectiveAlgorithm,
    algorithm_set,
    default_algorithm,
    register_algorithm,
    schedule,
    validate_algorithms,
)
from mpiuq.simulator.collectives.rooted import (
    bcast_binomial,
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

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_REGISTRY",
    "ALGORITHM_SETS",
    "ALLGATHER_SHORT_BYTES",
    "ALLREDUCE_SHORT_BYTES",
    "ALLTOALL_MEDIUM_BYTES",
    "COLLECTIVES",
    "REDUCING",
    "Algorithm",
    "CollSizes",
    "CollectiveAlgorithm",
    "CollectiveError",
    "Pair",
    "Schedule",
    "Step",
    "algorithm_set",
    "allgather_bruck",
    "allgather_ring",
    "allgatherv_bruck",
    "allgatherv_ring",
    "allreduce_recursive_doubling",
    "allreduce_reduce_bcast",
    "allreduce_ring",
    "alltoall_linear",
    "alltoall_pairwise",
    "alltoallv_linear",
    "alltoallv_pairwise",
    "barrier_dissemination",
    "barrier_linear",
    "bcast_binomial",
    "bcast_linear",
    "default_algorithm",
    "gather_binomial",
    "gather_linear",
    "gatherv_linear",
    "reduce_binomial",
    "reduce_linear",
    "reduce_scatter_pairwise",
    "reduce_scatter_reduce_scatterv",
    "register_algorithm",
    "scan_linear",
    "scan_recursive_doubling",
    "scatter_binomial",
    "scatter_linear",
    "scatterv_linear",
    "schedule",
    "validate_algorithms",
]
