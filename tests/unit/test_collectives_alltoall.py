"""All-to-all as SimGrid 3.32 runs it: message volumes in closed form, SimGrid's posting
order, and Open MPI's decision as SimGrid ports it (values read off
``src/smpi/colls/smpi_openmpi_selector.cpp``)."""

from __future__ import annotations

import pytest

from mpiuq.simulator.collectives import CollectiveError, CollSizes, schedule
from mpiuq.simulator.collectives.alltoall import ompi_alltoall_choice
from mpiuq.simulator.collectives.registry import ALGORITHM_SETS

B = 1000


def messages(alg: str, p: int) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """Bytes sent and received per (sender, receiver) over all ranks' schedules."""
    sent: dict[tuple[int, int], int] = {}
    recv: dict[tuple[int, int], int] = {}
    for me in range(p):
        for step in schedule("alltoall", alg, me, p, 0, CollSizes(B)):
            for peer, n in step.sends:
                sent[me, peer] = sent.get((me, peer), 0) + n
            for peer, n in step.recvs:
                recv[peer, me] = recv.get((peer, me), 0) + n
    return sent, recv


@pytest.mark.parametrize("alg", ["basic_linear", "ring", "pair"])
@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_direct_algorithms_send_one_block_to_every_other_rank(alg: str, p: int) -> None:
    sent, recv = messages(alg, p)
    every = {(i, j): B for i in range(p) for j in range(p) if i != j}
    assert sent == every and recv == every


@pytest.mark.parametrize("p", [2, 3, 5, 8, 13])
def test_bruck_volume(p: int) -> None:
    # round k moves the blocks whose index has bit k set: count_k * B to me + 2^k
    sent, recv = messages("bruck", p)
    assert sent == recv
    rounds = (p - 1).bit_length()
    per_rank = B * sum(sum(1 for b in range(1, p) if b >> k & 1) for k in range(rounds))
    for me in range(p):
        assert sum(n for (i, _j), n in sent.items() if i == me) == per_rank
    assert all((j - i) % p & ((j - i) % p - 1) == 0 for i, j in sent)  # distances 2^k


def test_basic_linear_posts_in_simgrid_order() -> None:
    (step,) = schedule("alltoall", "basic_linear", 2, 5, 0, CollSizes(B))
    assert [peer for peer, _ in step.recvs] == [3, 4, 0, 1]
    assert [peer for peer, _ in step.sends] == [1, 0, 4, 3]


def test_ring_and_pair_partners() -> None:
    ring = schedule("alltoall", "ring", 1, 4, 0, CollSizes(B))
    assert [(s.sends[0][0], s.recvs[0][0]) for s in ring] == [(2, 0), (3, 3), (0, 2)]
    pair = schedule("alltoall", "pair", 1, 4, 0, CollSizes(B))
    assert [(s.sends[0][0], s.recvs[0][0]) for s in pair] == [(0, 0), (3, 3), (2, 2)]


def test_pair_needs_a_power_of_two() -> None:
    with pytest.raises(CollectiveError, match="power-of-two communicator, got 6 ranks"):
        schedule("alltoall", "pair", 0, 6, 0, CollSizes(B))


@pytest.mark.parametrize(
    ("p", "block", "alg"),
    [
        (2, 1, "pair"),
        (2, 3, "basic_linear"),  # two_proc
        (2, 300_000, "basic_linear"),  # linear_sync
        (2, 2_000_000, "pair"),
        (4, 524_288, "pair"),
        (4, 100, "basic_linear"),
        (12, 262_144, "basic_linear"),
        (32, 256, "bruck"),
        (31, 3, "basic_linear"),
        (31, 300, "bruck"),
        (63, 511, "bruck"),
        (64, 16_384, "basic_linear"),
        (127, 262_144, "pair"),
        (128, 65_536, "basic_linear"),
        (128, 1023, "bruck"),
        (256, 1023, "bruck"),
        (500, 40_000, "pair"),
        (1000, 200_000, "basic_linear"),
        (1500, 300_000, "basic_linear"),
        (3000, 200_000, "basic_linear"),
        (9000, 2047, "bruck"),
        (9000, 1 << 20, "basic_linear"),
    ],
)
def test_ompi_decision(p: int, block: int, alg: str) -> None:
    assert ompi_alltoall_choice(p, block) == alg


def test_simgrid_set_uses_the_ompi_decision() -> None:
    assert ALGORITHM_SETS["simgrid"]["alltoall"] == "ompi"
    via = schedule("alltoall", "ompi", 3, 32, 0, CollSizes(256))
    assert via == schedule("alltoall", "bruck", 3, 32, 0, CollSizes(256))
