"""Rooted collectives: broadcast, reduce, gather(v) and scatter(v), binomial and linear."""

from __future__ import annotations

from mpiuq.simulator.collectives.base import (
    CollSizes,
    Schedule,
    Step,
    binomial_parent_children,
    real_rank,
    subtree_size,
    vcounts,
    virtual_rank,
)


def bcast_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree broadcast of ``nbytes`` from ``root`` (MPICH short-message algorithm)."""
    vr = virtual_rank(me, root, p)
    parent, children = binomial_parent_children(vr, p)
    steps = []
    if parent >= 0:
        steps.append(Step(recvs=((real_rank(parent, root, p), sizes.nbytes),)))
    if children:
        steps.append(Step(sends=tuple((real_rank(c, root, p), sizes.nbytes) for c in children)))
    return tuple(steps)


def bcast_binomial_tree(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree broadcast with one blocking send per child, largest subtree first
    (SimGrid's ``bcast__binomial_tree``, its default; sends are not overlapped)."""
    vr = virtual_rank(me, root, p)
    parent, children = binomial_parent_children(vr, p)
    steps = []
    if parent >= 0:
        steps.append(Step(recvs=((real_rank(parent, root, p), sizes.nbytes),)))
    steps.extend(Step(sends=((real_rank(c, root, p), sizes.nbytes),)) for c in children)
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
    vr = virtual_rank(me, root, p)
    parent, children = binomial_parent_children(vr, p)
    steps = [
        Step(recvs=((real_rank(c, root, p), sizes.nbytes),), combine_bytes=sizes.nbytes)
        for c in reversed(children)
    ]
    if parent >= 0:
        steps.append(Step(sends=((real_rank(parent, root, p), sizes.nbytes),)))
    return tuple(steps)


def reduce_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Flat reduction: every rank sends its buffer to the root, which combines p - 1 times."""
    if p == 1:
        return ()
    if me == root:
        others = tuple((j, sizes.nbytes) for j in range(p) if j != root)
        return (Step(recvs=others, combine_bytes=(p - 1) * sizes.nbytes),)
    return (Step(sends=((root, sizes.nbytes),)),)


def gather_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree gather of one ``nbytes`` block per rank; subtrees are forwarded whole."""
    vr = virtual_rank(me, root, p)
    parent, children = binomial_parent_children(vr, p)
    blk = sizes.nbytes
    steps = [
        Step(recvs=((real_rank(c, root, p), blk * subtree_size(c, p)),)) for c in reversed(children)
    ]
    if parent >= 0:
        steps.append(Step(sends=((real_rank(parent, root, p), blk * subtree_size(vr, p)),)))
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
        vc = vcounts(sizes, p, "gatherv")
        return (Step(recvs=tuple((j, vc[j]) for j in range(p) if j != root)),)
    return (Step(sends=((root, sizes.nbytes),)),)


def scatter_binomial(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Binomial-tree scatter of one ``nbytes`` block per rank (reverse of the gather)."""
    vr = virtual_rank(me, root, p)
    parent, children = binomial_parent_children(vr, p)
    blk = sizes.nbytes
    steps = []
    if parent >= 0:
        steps.append(Step(recvs=((real_rank(parent, root, p), blk * subtree_size(vr, p)),)))
    if children:
        steps.append(
            Step(sends=tuple((real_rank(c, root, p), blk * subtree_size(c, p)) for c in children))
        )
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
        vc = vcounts(sizes, p, "scatterv")
        return (Step(sends=tuple((j, vc[j]) for j in range(p) if j != root)),)
    return (Step(recvs=((root, sizes.nbytes),)),)
