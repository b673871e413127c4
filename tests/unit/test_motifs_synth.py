"""Synthetic motifs: valid traces, requested sizes, matched messages, motif geometry.

References: the halo neighbours are recomputed here with plain Python modular
arithmetic on grid coordinates; message matching is checked as equality of the
multisets (src, dst, tag, bytes) of sends and receives.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.motifs import MOTIFS, MotifSpec, dims_create, synthesize
from mpiuq.simulator.trace import OpKind, Trace, load_trace_h5, save_trace

SEND_KINDS = (OpKind.SEND, OpKind.ISEND)
RECV_KINDS = (OpKind.RECV, OpKind.IRECV)


def messages(trace: Trace, kinds: tuple[OpKind, ...], send: bool) -> Counter[tuple[int, ...]]:
    rank = trace.rank_of_op()
    sel = np.isin(trace.kind, np.array([int(k) for k in kinds], dtype=np.int8))
    me, peer, tag = rank[sel], trace.peer[sel], trace.tag[sel]
    nbytes = (trace.bytes_send if send else trace.bytes_recv)[sel]
    src, dst = (me, peer) if send else (peer, me)
    return Counter(zip(src.tolist(), dst.tolist(), tag.tolist(), nbytes.tolist(), strict=True))


@pytest.mark.parametrize("motif", MOTIFS)
@pytest.mark.parametrize("n_ranks", [2, 8, 12, 27])
def test_motifs_validate_and_match(motif: str, n_ranks: int) -> None:
    spec = MotifSpec(motif, n_ranks=n_ranks, iterations=3, message_bytes=96, compute_s=2e-6)
    trace = synthesize(spec)
    trace.validate()
    assert trace.format == "synthetic" and trace.n_ranks == n_ranks
    sends = messages(trace, SEND_KINDS, send=True)
    assert sends == messages(trace, RECV_KINDS, send=False)
    assert all(nbytes == 96 for *_, nbytes in sends)
    assert not any(src == dst for src, dst, *_ in sends)
    coll = trace.kind >= OpKind.BARRIER
    if motif in ("allreduce", "alltoall"):
        assert np.all(trace.bytes_send[coll] == 96) and np.all(trace.bytes_recv[coll] == 96)
    # one compute phase per rank and iteration, of the requested length
    compute = trace.kind == OpKind.COMPUTE
    assert np.all(np.bincount(trace.rank_of_op()[compute], minlength=n_ranks) == 3)
    np.testing.assert_array_equal(trace.seconds[compute], 2e-6)
    # every posted request completed exactly once
    assert np.array_equal(np.sort(trace.completed_requests()), np.arange(trace.n_requests))


def halo_reference(n: int, neighbours: int) -> dict[int, set[tuple[int, int]]]:
    """(peer, tag) of every send of each rank, from grid coordinates."""
    dims = dims_create(n, 3)
    dirs = [d for d in itertools.product((-1, 0, 1), repeat=3) if any(d)]
    out: dict[int, set[tuple[int, int]]] = {}
    for r in range(n):
        x, y, z = r // (dims[1] * dims[2]), (r // dims[2]) % dims[1], r % dims[2]
        sends = set()
        for tag, (dx, dy, dz) in enumerate(dirs):
            if neighbours == 6 and abs(dx) + abs(dy) + abs(dz) != 1:
                continue
            if any(d != 0 and e == 1 for d, e in zip((dx, dy, dz), dims, strict=True)):
                continue
            nx, ny, nz = (x + dx) % dims[0], (y + dy) % dims[1], (z + dz) % dims[2]
            sends.add(((nx * dims[1] + ny) * dims[2] + nz, tag))
        out[r] = sends
    return out


@pytest.mark.parametrize(
    ("n", "neighbours"), [(27, 26), (27, 6), (8, 26), (12, 6), (30, 26), (7, 26)]
)
def test_halo3d_neighbours_match_the_grid(n: int, neighbours: int) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=n, iterations=1, neighbours=neighbours))
    ref = halo_reference(n, neighbours)
    rank = trace.rank_of_op()
    isend = trace.kind == OpKind.ISEND
    for r in range(n):
        mine = isend & (rank == r)
        got = set(zip(trace.peer[mine].tolist(), trace.tag[mine].tolist(), strict=True))
        assert got == ref[r]
        assert int(mine.sum()) == len(ref[r])
    if n == 27:
        assert len(ref[0]) == neighbours and len({p for p, _ in ref[0]}) == neighbours


@pytest.mark.parametrize(("iterations", "every", "expected"), [(10, 1, 10), (10, 3, 3), (2, 5, 0)])
def test_halo3d_allreduce_period(iterations: int, every: int, expected: int) -> None:
    spec = MotifSpec("halo3d", n_ranks=8, iterations=iterations, allreduce_every=every)
    trace = synthesize(spec)
    trace.validate()
    red = trace.kind == OpKind.ALLREDUCE
    assert np.all(np.bincount(trace.rank_of_op()[red], minlength=8) == expected)
    assert np.all(trace.bytes_send[red] == 8)
    waitalls = np.bincount(trace.rank_of_op()[trace.kind == OpKind.WAITALL], minlength=8)
    assert np.all(waitalls == iterations)
    # the allreduce follows the waitall of the iteration it closes
    ops = trace.ops_of(0)
    positions = np.flatnonzero(ops.kind == OpKind.ALLREDUCE)
    assert np.all(ops.kind[positions - 1] == OpKind.WAITALL)


def test_sweep_is_a_wavefront() -> None:
    trace = synthesize(MotifSpec("sweep", n_ranks=12, iterations=2))
    trace.validate()
    rank = trace.rank_of_op()
    send, recv = trace.kind == OpKind.SEND, trace.kind == OpKind.RECV
    px = 4  # dims_create(12, 2) == (4, 3): rank = y * 4 + x
    assert np.all(trace.peer[send] > rank[send]) and np.all(trace.peer[recv] < rank[recv])
    assert set((trace.peer[send] - rank[send]).tolist()) == {1, px}
    assert len(trace.ops_of(0)) == 2 * 2  # corner: two sends per iteration
    assert len(trace.ops_of(11)) == 2 * 2  # opposite corner: two receives
    assert len(trace.ops_of(5)) == 2 * 4  # interior
    # per iteration: receives first, then sends
    assert trace.ops_of(5).kind.tolist()[:4] == [OpKind.RECV] * 2 + [OpKind.SEND] * 2


def test_random_is_seeded_and_a_derangement_per_iteration() -> None:
    a = synthesize(MotifSpec("random", n_ranks=16, iterations=5, seed=7))
    b = synthesize(MotifSpec("random", n_ranks=16, iterations=5, seed=7))
    c = synthesize(MotifSpec("random", n_ranks=16, iterations=5, seed=8))
    np.testing.assert_array_equal(a.peer, b.peer)
    assert not np.array_equal(a.peer, c.peer)
    rank = a.rank_of_op()
    for it in range(5):
        sel = (a.kind == OpKind.ISEND) & (a.tag == it)
        assert sorted(a.peer[sel].tolist()) == list(range(16))
        assert np.all(a.peer[sel] != rank[sel])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"motif": "stencil"}, r"motif='stencil' is invalid: expected one of \('halo3d'"),
        ({"n_ranks": 0}, r"n_ranks=0 is invalid: expected a whole number >= 1"),
        ({"motif": "random", "n_ranks": 1}, r"n_ranks=1 is invalid: expected a whole number >= 2"),
        ({"iterations": 0}, r"iterations=0 is invalid"),
        ({"message_bytes": -1}, r"message_bytes=-1 is invalid: expected a whole number of bytes"),
        ({"compute_s": float("nan")}, r"compute_s=nan is invalid"),
        ({"compute_s": -1.0}, r"compute_s=-1.0 is invalid"),
        ({"neighbours": 8}, r"neighbours=8 is invalid: expected 6 or 26"),
        ({"allreduce_every": 0}, r"allreduce_every=0 is invalid"),
    ],
)
def test_bad_motif_specs(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"motif": "halo3d", "n_ranks": 8, "iterations": 2}
    with pytest.raises(SettingError, match=message):
        MotifSpec(**{**base, **kwargs})  # type: ignore[arg-type]


def test_dims_create() -> None:
    for n in (1, 2, 7, 12, 64, 1000, 1024, 16384):
        for nd in (2, 3):
            dims = dims_create(n, nd)
            assert int(np.prod(dims)) == n and list(dims) == sorted(dims, reverse=True)
    assert dims_create(16384, 3) == (32, 32, 16)
    assert dims_create(1024, 3) == (16, 8, 8)
    assert dims_create(27, 3) == (3, 3, 3)
    assert dims_create(16384, 2) == (128, 128)


def test_hdf5_round_trip(tmp_path: Path) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2, compute_s=1e-5))
    save_trace(trace, tmp_path / "halo.h5")
    back = load_trace_h5(tmp_path / "halo.h5")
    assert back.n_ops == trace.n_ops and back.format == "synthetic"
    for name in ("kind", "peer", "tag", "bytes_send", "request", "seconds"):
        np.testing.assert_array_equal(getattr(back, name), getattr(trace, name))


def test_halo3d_at_16384_ranks_is_compact() -> None:
    # speed is shown by experiments/perf/perf_scale.py, not asserted here
    trace = synthesize(MotifSpec("halo3d", n_ranks=16384, iterations=12, allreduce_every=4))
    assert trace.n_ops >= 10**7
    # per-iteration pattern: 26 irecv + 26 isend + waitall, plus 3 allreduces per rank
    assert trace.n_ops == 16384 * (12 * 53 + 3)
    column_bytes = sum(
        getattr(trace, name).nbytes
        for name in (
            "kind",
            "call",
            "peer",
            "peer2",
            "tag",
            "tag2",
            "comm",
            "bytes_send",
            "bytes_recv",
            "request",
            "count",
            "vcounts_offset",
            "seconds",
            "nonblocking",
        )
    )
    assert column_bytes < 1.0e9
    assert np.array_equal(np.diff(trace.rank_ptr), np.full(16384, 12 * 53 + 3))
