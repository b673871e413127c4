"""OTF2 reader on the real Score-P / dumpi2otf2 traces (counts from each README)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.simulator.trace import OpKind, TraceFormatError, read_otf2

DATA = TRACES
pytestmark = needs_traces


def kinds(t) -> Counter[str]:
    return Counter(OpKind(int(x)).name for x in t.kind)


def p2p(t):
    r = t.rank_of_op()
    s = np.isin(t.kind, [OpKind.SEND, OpKind.ISEND])
    v = np.isin(t.kind, [OpKind.RECV, OpKind.IRECV])
    return (
        Counter(
            zip(
                r[s].tolist(),
                t.peer[s].tolist(),
                t.comm[s].tolist(),
                t.tag[s].tolist(),
                t.bytes_send[s].tolist(),
                strict=True,
            )
        ),
        Counter(
            zip(
                t.peer[v].tolist(),
                r[v].tolist(),
                t.comm[v].tolist(),
                t.tag[v].tolist(),
                t.bytes_recv[v].tolist(),
                strict=True,
            )
        ),
    )


def test_coverage_trace_comm_self_and_split_comms() -> None:
    t = read_otf2(DATA / "otf2_sstmac_mpi_coverage_10r")
    k = kinds(t)
    assert (k["ISEND"], k["IRECV"], k["ALLGATHER"], k["ALLTOALL"], k["ALLREDUCE"]) == (
        1440,
        1440,
        360,
        360,
        360,
    )
    assert (k["GATHER"], k["SCATTER"], k["REDUCE"], k["BCAST"]) == (30, 30, 30, 30)
    sends, recvs = p2p(t)
    assert sends == recvs and sum(sends.values()) == 1440  # FORMATS.md: exact match
    # size-1 (COMM_SELF-typed) communicators resolve to the calling rank
    self_msgs = [(s, d) for (s, d, c, _t, _b) in sends if t.comm_ranks(c).size == 1]
    assert self_msgs and all(s == d for s, d in self_msgs)
    pairs = {tuple(t.comm_ranks(c).tolist()) for c in range(t.n_comms)}
    assert {(0, 6), (1, 7), (2, 8), (3, 9)} <= pairs
    for name in ("MPI_Iallreduce", "MPI_Ialltoall", "MPI_Iallgather"):
        assert t.unsupported[f"{name} (region only, no sizes)"] == 360
    # Score-P size_sent is a total over the communicator (N * buffer): divided back, every
    # rank sees the same sequence of per-rank buffer sizes, starting at 4 B and doubling
    seqs = [t.ops_of(r).bytes_send[t.ops_of(r).kind == OpKind.ALLREDUCE] for r in range(10)]
    assert all(np.array_equal(seqs[0], q) for q in seqs)
    assert set(seqs[0].tolist()) == {4 << i for i in range(12)}


def test_stencil_measurement_off_is_not_compute() -> None:
    t = read_otf2(DATA / "otf2_tracer_stencil4d_64r")
    k = kinds(t)
    assert (k["SEND"], k["IRECV"], k["WAITALL"], k["BARRIER"]) == (1024, 1024, 128, 192)
    sends, recvs = p2p(t)
    assert sends == recvs and {b for *_x, b in sends} == {262144}
    # README: per-location span ~1.56 s, mostly the OFF interval after MPI_Init
    per_rank = t.summary().compute_seconds_per_rank_max
    assert per_rank < 0.1
    assert t.summary().n_uncompleted_requests == 0


@pytest.mark.parametrize("name", ["otf2_pipit_pingpong_2r", "otf2_pipit_pingpong_papi_2r"])
def test_pingpong(name: str) -> None:
    t = read_otf2(DATA / name)
    k = kinds(t)
    assert (k["SEND"], k["RECV"]) == (16, 16)
    sends, recvs = p2p(t)
    assert sends == recvs
    assert min(b for *_x, b in sends) == 16384  # 16 KiB, doubling


def test_ember_bcast_skips_handle_collectives() -> None:
    t = read_otf2(DATA / "otf2_ember_bcast_4r")
    assert kinds(t)["BCAST"] == 4 and t.n_ranks == 4
    assert sum(kinds(t).values()) - kinds(t)["COMPUTE"] == 4


def test_truncated_event_file(tmp_path: Path) -> None:
    d = tmp_path / "pp"
    shutil.copytree(DATA / "otf2_pipit_pingpong_2r", d)
    evt = d / "traces" / "0.evt"
    evt.chmod(0o644)
    evt.write_bytes(evt.read_bytes()[:100])
    with pytest.raises(TraceFormatError, match="cannot read OTF2 archive") as info:
        read_otf2(d)
    assert info.value.file == str(d / "traces.otf2")
