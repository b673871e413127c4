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
picks MPICH-like defaults from the size of the operation. The algorithms follow
Thakur, Rabenseifner and Gropp, "Optimization of collective communication
operations in MPICH" (IJHPCA 2005).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from mpiuq.simulator.errors import SettingError

Pair = tuple[int, int]  # (peer communicator rank, bytes)


@dataclass(frozen=True, slots=True)
class Step:
    """One round of a collective algorithm on one rank.

    Attributes
    ----------
    recvs, sends
        ``(peer communicator rank, bytes)`` of the messages received / sent in this round.
    combine_bytes
        Bytes of received data reduced into the local buffer after the round.
    """

    recvs: tuple[Pair, ...] = ()
    sends: tuple[Pair, ...] = ()
    combine_bytes: int = 0


@dataclass(frozen=True, slots=True)
class CollSizes:
    """Sizes of one collective call as seen by one rank (bytes).

    Attributes
    ----------
    nbytes
        Buffer size: the reduced / broadcast vector, or the per-rank block of
        gather, scatter, all-gather and all-to-all.
    vcounts
        Per communicator rank bytes of v-collectives and reduce-scatter
        (all-to-all-v: ``p`` send counts then ``p`` receive counts).
    """

    nbytes: int = 0
    vcounts: tuple[int, ...] = ()


Schedule = tuple[Step, ...]
Algorithm = Callable[[int, int, int, CollSizes], Schedule]

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


class CollectiveError(SettingError):
    """A collective, an algorithm name or a collective's arguments are invalid."""


# ----------------------------------------------------------------------------- helpers


def _vr(me: int, root: int, p: int) -> int:
    return (me - root) % p


def _real(vr: int, root: int, p: int) -> int:
    return (vr + root) % p


def _chunks(nbytes: int, p: int) -> list[int]:
    """Split ``nbytes`` into ``p`` near-equal chunks (the first ``nbytes % p`` one byte larger)."""
    q, r = divmod(nbytes, p)
    return [q + (1 if i < r else 0) for i in range(p)]


def _binomial_parent_children(vr: int, p: int) -> tuple[int, list[int]]:
    """Parent (or -1) and children (largest subtree first) of ``vr`` in a binomial tree at 0."""
    parent = -1
    mask = 1
    while mask < p:
        if vr & mask:
            parent = vr - mask
            break
        mask <<= 1
    children = []
    mask >>= 1
    while mask > 0:
        if vr + mask < p:
            children.append(vr + mask)
        mask >>= 1
    return parent, children


def _subtree(vr: int, p: int) -> int:
    """Number of ranks in the binomial subtree rooted at ``vr`` (itself included)."""
    if vr == 0:
        return p
    low = vr & -vr
    return min(low, p - vr)


# ----------------------------------------------------------------------------- barrier


def barrier_dissemination(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Dissemination barrier: ceil(log2 p) rounds of zero-byte messages at distance 2^k."""
    steps = []
    d = 1
    while d < p:
        steps.append(Step(recvs=(((me - d) % p, 0),), sends=(((me + d) % p, 0),)))
        d <<= 1
    return tuple(steps)


def barrier_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Linear barrier: everyone reports to rank 0, which then releases everyone."""
    if p == 1:
        return ()
    if me == 0:
        others = tuple((j, 0) for j in range(1, p))
        return (Step(recvs=others), Step(sends=others))
    return (Step(sends=((0, 0),)), Step(recvs=((0, 0),)))


# ----------------------------------------------------------------------------- bcast / reduce


def bcast_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree broadcast of ``nbytes`` from ``root`` (MPICH short-message algorithm)."""
    vr = _vr(me, root, p)
    parent, children = _binomial_parent_children(vr, p)
    steps = []
    if parent >= 0:
        steps.append(Step(recvs=((_real(parent, root, p), sizes.nbytes),)))
    if children:
        steps.append(Step(sends=tuple((_real(c, root, p), sizes.nbytes) for c in children)))
    return tuple(steps)


def bcast_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat broadcast: the root sends the buffer to every other rank."""
    if p == 1:
        return ()
    if me == root:
        return (Step(sends=tuple((j, sizes.nbytes) for j in range(p) if j != root)),)
    return (Step(recvs=((root, sizes.nbytes),)),)


def reduce_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree reduction to ``root`` (commutative operator): children first, then parent."""
    vr = _vr(me, root, p)
    parent, children = _binomial_parent_children(vr, p)
    steps = [
        Step(recvs=((_real(c, root, p), sizes.nbytes),), combine_bytes=sizes.nbytes)
        for c in reversed(children)
    ]
    if parent >= 0:
        steps.append(Step(sends=((_real(parent, root, p), sizes.nbytes),)))
    return tuple(steps)


def reduce_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat reduction: every rank sends its buffer to the root, which combines p - 1 times."""
    if p == 1:
        return ()
    if me == root:
        others = tuple((j, sizes.nbytes) for j in range(p) if j != root)
        return (Step(recvs=others, combine_bytes=(p - 1) * sizes.nbytes),)
    return (Step(sends=((root, sizes.nbytes),)),)


# ----------------------------------------------------------------------------- allreduce


def allreduce_recursive_doubling(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Recursive doubling; for non-powers of two the first ``2 * rem`` ranks fold pairwise first."""
    nb = sizes.nbytes
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    steps: list[Step] = []
    if me < 2 * rem:
        if me % 2 == 0:
            return (Step(sends=((me + 1, nb),)), Step(recvs=((me + 1, nb),)))
        steps.append(Step(recvs=((me - 1, nb),), combine_bytes=nb))
        newrank = me // 2
    else:
        newrank = me - rem
    mask = 1
    while mask < pof2:
        pn = newrank ^ mask
        partner = pn * 2 + 1 if pn < rem else pn + rem
        steps.append(Step(recvs=((partner, nb),), sends=((partner, nb),), combine_bytes=nb))
        mask <<= 1
    if me < 2 * rem:
        steps.append(Step(sends=((me - 1, nb),)))
    return tuple(steps)


def allreduce_ring(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Ring reduce-scatter then ring all-gather of ``p`` chunks (bandwidth-optimal)."""
    if p == 1:
        return ()
    ch = _chunks(sizes.nbytes, p)
    right, left = (me + 1) % p, (me - 1) % p
    steps = []
    for s in range(p - 1):
        out, inc = (me - s) % p, (me - s - 1) % p
        steps.append(
            Step(recvs=((left, ch[inc]),), sends=((right, ch[out]),), combine_bytes=ch[inc])
        )
    for s in range(p - 1):
        out, inc = (me - s + 1) % p, (me - s) % p
        steps.append(Step(recvs=((left, ch[inc]),), sends=((right, ch[out]),)))
    return tuple(steps)


def allreduce_reduce_bcast(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial reduction to rank 0 followed by a binomial broadcast."""
    return reduce_binomial(me, p, 0, sizes) + bcast_binomial(me, p, 0, sizes)


# ----------------------------------------------------------------------------- gather / scatter


def gather_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree gather of one ``nbytes`` block per rank; subtrees are forwarded whole."""
    vr = _vr(me, root, p)
    parent, children = _binomial_parent_children(vr, p)
    blk = sizes.nbytes
    steps = [Step(recvs=((_real(c, root, p), blk * _subtree(c, p)),)) for c in reversed(children)]
    if parent >= 0:
        steps.append(Step(sends=((_real(parent, root, p), blk * _subtree(vr, p)),)))
    return tuple(steps)


def gather_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat gather: every rank sends its block to the root."""
    if p == 1:
        return ()
    if me == root:
        return (Step(recvs=tuple((j, sizes.nbytes) for j in range(p) if j != root)),)
    return (Step(sends=((root, sizes.nbytes),)),)


def gatherv_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat gather-v: the root receives ``vcounts[j]`` bytes from rank ``j``."""
    if p == 1:
        return ()
    if me == root:
        vc = _vc(sizes, p, "gatherv")
        return (Step(recvs=tuple((j, vc[j]) for j in range(p) if j != root)),)
    return (Step(sends=((root, sizes.nbytes),)),)


def scatter_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree scatter of one ``nbytes`` block per rank (reverse of the gather)."""
    vr = _vr(me, root, p)
    parent, children = _binomial_parent_children(vr, p)
    blk = sizes.nbytes
    steps = []
    if parent >= 0:
        steps.append(Step(recvs=((_real(parent, root, p), blk * _subtree(vr, p)),)))
    if children:
        steps.append(Step(sends=tuple((_real(c, root, p), blk * _subtree(c, p)) for c in children)))
    return tuple(steps)


def scatter_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat scatter: the root sends every rank its block."""
    if p == 1:
        return ()
    if me == root:
        return (Step(sends=tuple((j, sizes.nbytes) for j in range(p) if j != root)),)
    return (Step(recvs=((root, sizes.nbytes),)),)


def scatterv_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat scatter-v: the root sends ``vcounts[j]`` bytes to rank ``j``."""
    if p == 1:
        return ()
    if me == root:
        vc = _vc(sizes, p, "scatterv")
        return (Step(sends=tuple((j, vc[j]) for j in range(p) if j != root)),)
    return (Step(recvs=((root, sizes.nbytes),)),)


# ----------------------------------------------------------------------------- allgather(v)


def _vc(sizes: CollSizes, n: int, what: str) -> tuple[int, ...]:
    if len(sizes.vcounts) != n:
        raise CollectiveError(f"{what} needs {n} per-rank byte counts, got {len(sizes.vcounts)}")
    return sizes.vcounts


def _block_sizes(sizes: CollSizes, p: int, kind: str) -> tuple[int, ...]:
    if kind.endswith("v"):
        return _vc(sizes, p, kind)
    return (sizes.nbytes,) * p


def _ring_allgather(me: int, p: int, blocks: tuple[int, ...]) -> Schedule:
    right, left = (me + 1) % p, (me - 1) % p
    return tuple(
        Step(recvs=((left, blocks[(me - s - 1) % p]),), sends=((right, blocks[(me - s) % p]),))
        for s in range(p - 1)
    )


def _bruck_allgather(me: int, p: int, blocks: tuple[int, ...]) -> Schedule:
    steps = []
    d = 1
    while d < p:
        cnt = min(d, p - d)
        out = sum(blocks[(me + i) % p] for i in range(cnt))
        inc = sum(blocks[(me + d + i) % p] for i in range(cnt))
        steps.append(Step(recvs=(((me + d) % p, inc),), sends=(((me - d) % p, out),)))
        d <<= 1
    return tuple(steps)


def allgather_ring(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Ring all-gather: p - 1 rounds, each forwarding one block to the right neighbour."""
    return _ring_allgather(me, p, _block_sizes(sizes, p, "allgather"))


def allgather_bruck(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Bruck all-gather: ceil(log2 p) rounds at distance 2^k, any p."""
    return _bruck_allgather(me, p, _block_sizes(sizes, p, "allgather"))


def allgatherv_ring(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Ring all-gather-v with the per-rank block sizes ``vcounts``."""
    return _ring_allgather(me, p, _block_sizes(sizes, p, "allgatherv"))


def allgatherv_bruck(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Bruck all-gather-v with the per-rank block sizes ``vcounts``."""
    return _bruck_allgather(me, p, _block_sizes(sizes, p, "allgatherv"))


# ----------------------------------------------------------------------------- alltoall(v)


def _a2a_counts(sizes: CollSizes, p: int, kind: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if kind == "alltoall":
        return (sizes.nbytes,) * p, (sizes.nbytes,) * p
    vc = _vc(sizes, 2 * p, "alltoallv (send then receive counts)")
    return vc[:p], vc[p:]


def _alltoall_pairwise(me: int, p: int, send: tuple[int, ...], recv: tuple[int, ...]) -> Schedule:
    pow2 = p & (p - 1) == 0
    steps = []
    for i in range(1, p):
        dst, src = (me ^ i, me ^ i) if pow2 else ((me + i) % p, (me - i) % p)
        steps.append(Step(recvs=((src, recv[src]),), sends=((dst, send[dst]),)))
    return tuple(steps)


def _alltoall_linear(
    me: int, p: int, send: tuple[int, ...], recv: tuple[int, ...], skip_zero: bool
) -> Schedule:
    order = [(me + i) % p for i in range(1, p)]
    recvs = tuple((j, recv[j]) for j in order if not (skip_zero and recv[j] == 0))
    sends = tuple((j, send[j]) for j in order if not (skip_zero and send[j] == 0))
    return (Step(recvs=recvs, sends=sends),) if recvs or sends else ()


def alltoall_pairwise(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Pairwise exchange: p - 1 rounds (partner ``me XOR i`` for powers of two, else ``me +- i``)."""
    return _alltoall_pairwise(me, p, *_a2a_counts(sizes, p, "alltoall"))


def alltoall_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """All receives and sends posted at once, one wait (MPICH medium-size "scattered")."""
    return _alltoall_linear(me, p, *_a2a_counts(sizes, p, "alltoall"), skip_zero=False)


def alltoallv_pairwise(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Pairwise exchange with per-peer sizes (zero-byte messages are still exchanged)."""
    return _alltoall_pairwise(me, p, *_a2a_counts(sizes, p, "alltoallv"))


def alltoallv_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """All non-empty receives and sends posted at once (MPICH's alltoallv)."""
    return _alltoall_linear(me, p, *_a2a_counts(sizes, p, "alltoallv"), skip_zero=True)


# ----------------------------------------------------------------------------- reduce_scatter


def reduce_scatter_pairwise(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Pairwise reduce-scatter: round i sends block ``me + i`` to its owner, combines own block."""
    vc = _vc(sizes, p, "reduce_scatter")
    return tuple(
        Step(
            recvs=(((me - i) % p, vc[me]),),
            sends=(((me + i) % p, vc[(me + i) % p]),),
            combine_bytes=vc[me],
        )
        for i in range(1, p)
    )


def reduce_scatter_reduce_scatterv(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial reduction of the whole vector to rank 0, then a linear scatter-v."""
    vc = _vc(sizes, p, "reduce_scatter")
    red = reduce_binomial(me, p, 0, CollSizes(sum(vc)))
    return red + scatterv_linear(me, p, 0, CollSizes(vc[me], vc))


# ----------------------------------------------------------------------------- scan / exscan


def scan_recursive_doubling(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Recursive-doubling (inclusive or exclusive) scan: exchange with ``me XOR 2^k``."""
    nb = sizes.nbytes
    steps = []
    mask = 1
    while mask < p:
        partner = me ^ mask
        if partner < p:
            steps.append(Step(recvs=((partner, nb),), sends=((partner, nb),), combine_bytes=nb))
        mask <<= 1
    return tuple(steps)


def scan_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Chain scan: receive the prefix from ``me - 1``, combine, pass it to ``me + 1``."""
    nb = sizes.nbytes
    steps = []
    if me > 0:
        steps.append(Step(recvs=((me - 1, nb),), combine_bytes=nb))
    if me < p - 1:
        steps.append(Step(sends=((me + 1, nb),)))
    return tuple(steps)


#: collective -> algorithm name -> schedule function.
ALGORITHMS: dict[str, dict[str, Algorithm]] = {
    "barrier": {"dissemination": barrier_dissemination, "linear": barrier_linear},
    "bcast": {"binomial": bcast_binomial, "linear": bcast_linear},
    "reduce": {"binomial": reduce_binomial, "linear": reduce_linear},
    "allreduce": {
        "recursive_doubling": allreduce_recursive_doubling,
        "ring": allreduce_ring,
        "reduce_bcast": allreduce_reduce_bcast,
    },
    "gather": {"binomial": gather_binomial, "linear": gather_linear},
    "gatherv": {"linear": gatherv_linear},
    "scatter": {"binomial": scatter_binomial, "linear": scatter_linear},
    "scatterv": {"linear": scatterv_linear},
    "allgather": {"ring": allgather_ring, "bruck": allgather_bruck},
    "allgatherv": {"ring": allgatherv_ring, "bruck": allgatherv_bruck},
    "alltoall": {"pairwise": alltoall_pairwise, "linear": alltoall_linear},
    "alltoallv": {"linear": alltoallv_linear, "pairwise": alltoallv_pairwise},
    "reduce_scatter": {
        "pairwise": reduce_scatter_pairwise,
        "reduce_scatterv": reduce_scatter_reduce_scatterv,
    },
    "scan": {"recursive_doubling": scan_recursive_doubling, "linear": scan_linear},
    "exscan": {"recursive_doubling": scan_recursive_doubling, "linear": scan_linear},
}

#: Collectives whose algorithm combines received data (charged as reduction compute).
REDUCING: frozenset[str] = frozenset({"reduce", "allreduce", "reduce_scatter", "scan", "exscan"})


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


@lru_cache(maxsize=65536)
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
