"""Barrier algorithms: dissemination and linear."""

from __future__ import annotations

from mpiuq.simulator.collectives.base import (
    CollSizes,
    Schedule,
    Step,
)


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
