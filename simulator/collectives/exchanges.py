"""All-to-all exchanges: all-gather(v) (ring, Bruck) and all-to-all(v) (pairwise, linear)."""

from __future__ import annotations

from mpiuq.simulator.collectives.base import (
    CollSizes,
    Schedule,
    Step,
    vcounts,
)


def _block_sizes(sizes: CollSizes, p: int, kind: str) -> tuple[int, ...]:
    if kind.endswith("v"):
        return vcounts(sizes, p, kind)
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


def _linear_allgather(me: int, p: int, blocks: tuple[int, ...]) -> Schedule:
    others = [j for j in range(p) if j != me]
    if not others:
        return ()
    return (
        Step(
            recvs=tuple((j, blocks[j]) for j in others),
            sends=tuple((j, blocks[me]) for j in others),
        ),
    )


def allgather_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Linear all-gather: every block sent to every other rank at once, one wait-all
    (SimGrid's default, its nonblocking ``iallgather`` waited for)."""
    return _linear_allgather(me, p, _block_sizes(sizes, p, "allgather"))


def allgatherv_linear(me: int, p: int, root: int, sizes: CollSizes) -> Schedule:
    """Linear all-gather-v with the per-rank block sizes ``vcounts`` (SimGrid's default)."""
    return _linear_allgather(me, p, _block_sizes(sizes, p, "allgatherv"))


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


def _a2a_counts(sizes: CollSizes, p: int, kind: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if kind == "alltoall":
        return (sizes.nbytes,) * p, (sizes.nbytes,) * p
    vc = vcounts(sizes, 2 * p, "alltoallv (send then receive counts)")
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
