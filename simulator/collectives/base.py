"""The contract shared by every collective algorithm: steps, sizes, helpers.

An algorithm is ``schedule(me, p, root, sizes) -> tuple[Step, ...]``: the part of
the algorithm executed by communicator rank ``me`` of ``p`` (see the package
docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


class CollectiveError(SettingError):
    """A collective, an algorithm name or a collective's arguments are invalid."""


def virtual_rank(me: int, root: int, p: int) -> int:
    """Rank relative to ``root`` (the root is 0)."""
    return (me - root) % p


def real_rank(vr: int, root: int, p: int) -> int:
    """Communicator rank of relative rank ``vr``."""
    return (vr + root) % p


def chunks(nbytes: int, p: int) -> list[int]:
    """Split ``nbytes`` into ``p`` near-equal chunks (the first ``nbytes % p`` one byte larger)."""
    q, r = divmod(nbytes, p)
    return [q + (1 if i < r else 0) for i in range(p)]


def binomial_parent_children(vr: int, p: int) -> tuple[int, list[int]]:
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


def subtree_size(vr: int, p: int) -> int:
    """Number of ranks in the binomial subtree rooted at ``vr`` (itself included)."""
    if vr == 0:
        return p
    low = vr & -vr
    return min(low, p - vr)


def vcounts(sizes: CollSizes, n: int, what: str) -> tuple[int, ...]:
    """The ``n`` per-rank byte counts of ``sizes``, or a :class:`CollectiveError` naming ``what``."""
    if len(sizes.vcounts) != n:
        raise CollectiveError(f"{what} needs {n} per-rank byte counts, got {len(sizes.vcounts)}")
    return sizes.vcounts
