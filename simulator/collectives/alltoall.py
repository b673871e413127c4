"""All-to-all as SimGrid 3.32 runs it: basic linear, pair, Bruck, ring, and Open MPI's choice.

SimGrid's ``default`` collective selector delegates ``MPI_Alltoall`` to its port of Open
MPI's decision (``alltoall__ompi``, ``src/smpi/colls/smpi_openmpi_selector.cpp``), which
picks by communicator size and block bytes among Open MPI's algorithms 1 (linear),
2 (pairwise), 3 (modified Bruck), 4 (linear_sync) and 5 (two_proc); SimGrid maps them
to its own ``basic_linear``, ``pair``, ``bruck``, ``basic_linear`` and ``basic_linear``.
Every algorithm here follows its SimGrid source (``src/smpi/colls/alltoall/``): a
``sendrecv`` is one step of one receive and one send, and messages to oneself (local
copies in SimGrid) are left out.
"""

from __future__ import annotations

from mpiuq.simulator.collectives.base import CollectiveError, CollSizes, Schedule, Step

#: Open MPI's decision as SimGrid 3.32 ports it: for communicators smaller than the
#: first number, ``(block bytes below which, algorithm)`` in order, then the last
#: algorithm. Algorithms: 1 linear, 2 pairwise, 3 Bruck, 4 linear_sync, 5 two_proc.
OMPI_ALLTOALL_RULES: tuple[tuple[int, tuple[tuple[int, int], ...], int], ...] = (
    (3, ((2, 2), (4, 5), (16, 2), (64, 5), (256, 2), (4096, 5), (32768, 2), (262144, 4),
         (1048576, 5)), 2),
    (8, ((8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2)), 1),
    (16, ((262144, 4),), 1),
    (32, ((4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1)), 4),
    (64, ((512, 3), (524288, 1)), 4),
    (128, ((1024, 3), (2048, 1), (4096, 4), (262144, 1)), 2),
    (256, ((1024, 3), (2048, 4), (262144, 1)), 2),
    (512, ((1024, 3), (8192, 4), (32768, 1)), 2),
    (1024, ((512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1)), 2),
    (2048, ((512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1)), 4),
    (4096, ((1024, 3), (4096, 4), (8192, 1), (131072, 4)), 1),
    (1 << 62, ((2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1)), 4),
)  # fmt: skip
#: SimGrid's algorithm for each of Open MPI's numbers.
OMPI_TO_SIMGRID = {1: "basic_linear", 2: "pair", 3: "bruck", 4: "basic_linear", 5: "basic_linear"}


def ompi_alltoall_choice(p: int, block_bytes: int) -> str:
    """SimGrid's all-to-all algorithm for ``p`` ranks and blocks of ``block_bytes``
    (``alltoall__ompi``; a communicator of 2 ranks is the first rule's)."""
    for below_p, rules, last in OMPI_ALLTOALL_RULES:
        if p < below_p:
            for below_bytes, alg in rules:
                if block_bytes < below_bytes:
                    return OMPI_TO_SIMGRID[alg]
            return OMPI_TO_SIMGRID[last]
    raise AssertionError("unreachable: the last rule covers every size")  # pragma: no cover


def _exchange(me: int, peers: list[tuple[int, int, int]]) -> Schedule:
    """One sendrecv step per ``(send to, receive from, bytes)``, oneself left out."""
    return tuple(Step(recvs=((src, n),), sends=((dst, n),)) for dst, src, n in peers if dst != me)


def alltoall_basic_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """SimGrid's ``alltoall__basic_linear``: receives from ``me+1, me+2, ...`` posted
    first, then sends to ``me-1, me-2, ...``, one wait-all."""
    if p < 2:
        return ()
    n = sizes.nbytes
    recvs = tuple(((me + i) % p, n) for i in range(1, p))
    sends = tuple(((me - i) % p, n) for i in range(1, p))
    return (Step(recvs=recvs, sends=sends),)


def alltoall_pair(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """SimGrid's ``alltoall__pair``: ``p`` sendrecv rounds with partner ``me XOR i``.

    Raises
    ------
    CollectiveError
        If ``p`` is not a power of two (SimGrid throws "can't be used with non power of
        two number of processes").
    """
    if p & (p - 1):
        raise CollectiveError(
            f"alltoall 'pair' needs a power-of-two communicator, got {p} ranks "
            "(SimGrid 3.32 aborts the same way; choose alltoall=ring or basic_linear)"
        )
    return _exchange(me, [(me ^ i, me ^ i, sizes.nbytes) for i in range(p)])


def alltoall_ring(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """SimGrid's ``alltoall__ring``: ``p`` sendrecv rounds, to ``me+i`` from ``me-i``."""
    return _exchange(me, [((me + i) % p, (me - i) % p, sizes.nbytes) for i in range(p)])


def alltoall_bruck(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """SimGrid's ``alltoall__bruck``: rounds at distance ``2^k`` (to ``me+2^k``, from
    ``me-2^k``), each moving the blocks whose index has bit ``k`` set."""
    out = []
    pof2 = 1
    while pof2 < p:
        count = sum(1 for block in range(1, p) if block & pof2)
        out.append(((me + pof2) % p, (me - pof2) % p, count * sizes.nbytes))
        pof2 *= 2
    return _exchange(me, out)


def alltoall_ompi(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Open MPI's choice as SimGrid applies it (:func:`ompi_alltoall_choice`)."""
    return ALGORITHMS_BY_NAME[ompi_alltoall_choice(p, sizes.nbytes)](me, p, root, sizes)


ALGORITHMS_BY_NAME = {
    "basic_linear": alltoall_basic_linear,
    "pair": alltoall_pair,
    "bruck": alltoall_bruck,
    "ring": alltoall_ring,
}
