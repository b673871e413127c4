"""Symmetric reductions: allreduce, reduce-scatter and (ex)scan."""

from __future__ import annotations

from mpiuq.simulator.collectives.base import (
    CollSizes,
    Schedule,
    Step,
    chunks,
    vcounts,
)
from mpiuq.simulator.collectives.rooted import (
    bcast_binomial,
    bcast_binomial_tree,
    reduce_binomial,
    reduce_linear,
    scatterv_linear,
)


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
    ch = chunks(sizes.nbytes, p)
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


def allreduce_flat_reduce_bcast(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat reduction to rank 0 (every rank sends its vector, rank 0 receives all, then
    combines) followed by SimGrid's binomial-tree broadcast: SimGrid's default allreduce."""
    return reduce_linear(me, p, 0, sizes) + bcast_binomial_tree(me, p, 0, sizes)


def reduce_scatter_pairwise(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Pairwise reduce-scatter: round i sends block ``me + i`` to its owner, combines own block."""
    vc = vcounts(sizes, p, "reduce_scatter")
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
    vc = vcounts(sizes, p, "reduce_scatter")
    red = reduce_binomial(me, p, 0, CollSizes(sum(vc)))
    return red + scatterv_linear(me, p, 0, CollSizes(vc[me], vc))


def reduce_scatter_flat_reduce_scatterv(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat reduction of the whole vector to rank 0, then a linear scatter-v (SimGrid's
    default for equal blocks)."""
    vc = vcounts(sizes, p, "reduce_scatter")
    red = reduce_linear(me, p, 0, CollSizes(sum(vc)))
    return red + scatterv_linear(me, p, 0, CollSizes(vc[me], vc))


def reduce_scatter_simgrid(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """SimGrid 3.32's default reduce-scatter: equal blocks reduce flat to rank 0 and
    scatter (:func:`reduce_scatter_flat_reduce_scatterv`); unequal blocks go to MPICH's
    selector, which takes the pairwise exchange (:func:`reduce_scatter_pairwise`) for a
    commutative reduction of more than 524288 elements (SimGrid's replay reduces with a
    commutative null operator). Below that MPICH takes recursive doubling, which mpiuq
    does not model: pairwise stands in there too."""
    vc = vcounts(sizes, p, "reduce_scatter")
    if all(c == vc[0] for c in vc):
        return reduce_scatter_flat_reduce_scatterv(me, p, root, sizes)
    return reduce_scatter_pairwise(me, p, root, sizes)


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
