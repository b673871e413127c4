"""DUMPI reader on the real traces in shared/data (counts from each README; the rank-0
field values from sst-dumpi's own dumpi2ascii output) and on damaged copies."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.simulator.trace import UNKNOWN_PEER, OpKind, TraceFormatError, read_dumpi

DATA = TRACES
pytestmark = needs_traces


def kinds(t, rank=None) -> Counter[str]:
    k = t.kind if rank is None else t.ops_of(rank).kind
    return Counter(OpKind(int(x)).name for x in k)


def p2p_multisets(t):
    """(src, dst, comm, tag, bytes) of every send and every receive, world ranks."""
    r = t.rank_of_op()
    s = np.isin(t.kind, [OpKind.SEND, OpKind.ISEND])
    v = np.isin(t.kind, [OpKind.RECV, OpKind.IRECV])
    sends = Counter(
        zip(
            r[s].tolist(),
            t.peer[s].tolist(),
            t.comm[s].tolist(),
            t.tag[s].tolist(),
            t.bytes_send[s].tolist(),
            strict=True,
        )
    )
    recvs = Counter(
        zip(
            t.peer[v].tolist(),
            r[v].tolist(),
            t.comm[v].tolist(),
            t.tag[v].tolist(),
            t.bytes_recv[v].tolist(),
            strict=True,
        )
    )
    return sends, recvs


def test_testtrace_rank0_matches_dumpi2ascii() -> None:
    # testtrace-0000.txt: Isend count=1 MPI_INT dest=1 tag=1337; Recv source=3; Allreduce
    t = read_dumpi(DATA / "dumpi_sstdumpi_testtrace_4r" / "testtrace.meta")
    o = t.ops_of(0)
    mpi = [i for i, k in enumerate(o.kind) if k != OpKind.COMPUTE]
    assert [OpKind(int(o.kind[i])).name for i in mpi] == [
        "BARRIER",
        "ISEND",
        "RECV",
        "WAIT",
        "ALLREDUCE",
    ]
    i_send, i_recv, i_wait = mpi[1], mpi[2], mpi[3]
    assert (int(o.peer[i_send]), int(o.tag[i_send]), int(o.bytes_send[i_send])) == (1, 1337, 4)
    assert int(o.peer[i_recv]) == 3
    assert o.request[i_wait] == o.request[i_send]
    sends, recvs = p2p_multisets(t)
    assert sends == recvs and sum(sends.values()) == 4
    assert (o.seconds[o.kind == OpKind.COMPUTE] > 0).all()


def test_testbgp_comm_create_and_matching() -> None:
    t = read_dumpi(DATA / "dumpi_sstmac_testbgp_7r")
    k = kinds(t)
    assert (k["ISEND"], k["IRECV"], k["WAITALL"], k["ALLTOALL"], k["BARRIER"]) == (
        588,
        588,
        98,
        49,
        21,
    )
    sends, recvs = p2p_multisets(t)
    assert sends == recvs
    comms = {c for c, *_ in ((x[2],) for x in sends)}
    assert len(comms) == 1 and comms != {0}  # traffic on the MPI_Comm_create result
    (c,) = comms
    assert t.comm_ranks(c).tolist() == list(range(7))
    assert set(t.bytes_send[t.kind == OpKind.ISEND].tolist()) == {712}  # 89 doubles
    assert t.summary().n_uncompleted_requests == 0


@pytest.mark.parametrize("run", ["run_0", "run_1"])
def test_anacinx_runs(run: str) -> None:
    t = read_dumpi(DATA / "dumpi_anacinx_naive_alltoall_4r" / run)
    k = kinds(t)
    assert (k["ISEND"], k["IRECV"], k["WAITALL"], k["BARRIER"]) == (48, 48, 32, 16)
    sends, recvs = p2p_multisets(t)
    assert sends == recvs
    assert t.unsupported["MPI_Get_processor_name"] == 4


# counts from dumpi_designforward_single_rank/README.md (waitsome/testall completions become
# WAIT or WAITALL; send-like = send + rsend)
_DF = {
    "AMG.bin": {"IRECV": 386, "ISEND": 386, "WAITALL": 56},
    "MultiGrid.bin": {
        "IRECV": 1144,
        "SEND": 1144,
        "ALLREDUCE": 12,
        "REDUCE": 5,
        "BARRIER": 1,
        "ALLGATHER": 1,
    },
    "CrystalRouter.bin": {"IRECV": 16000, "ISEND": 16000, "WAITALL": 16000},
    "MiniDFT_small.bin": {
        "RECV": 2240,
        "SEND": 220 + 360,
        "BCAST": 1323,
        "BARRIER": 845,
        "ALLTOALLV": 761,
        "ALLREDUCE": 219,
        "REDUCE": 34,
        "SENDRECV": 36,
        "ISEND": 25,
    },
    "MiniDFT_large.bin": {
        "RECV": 7995,
        "SEND": 611 + 1236,
        "BCAST": 3028,
        "BARRIER": 1078,
        "ALLTOALLV": 1811,
        "ALLREDUCE": 473,
        "REDUCE": 97,
        "SENDRECV": 90,
        "ISEND": 349,
        "ALLGATHERV": 4,
    },
    "BigFFT.bin": {"ALLTOALLV": 4, "BARRIER": 5},
}


@pytest.mark.parametrize("name", sorted(_DF))
def test_designforward_single_rank_files(name: str) -> None:
    t = read_dumpi(DATA / "dumpi_designforward_single_rank" / name)
    k = kinds(t)
    for kind, n in _DF[name].items():
        assert k[kind] == n, kind
    assert any("partial trace" in n for n in t.notes)
    if name == "MultiGrid.bin":  # 129 waitsome calls, each completing >= 1 request
        assert k["WAIT"] + k["WAITALL"] == 129
        assert t.unsupported["MPI_Wtime"] == 6
    if name == "MiniDFT_small.bin":  # comm_split members only partly known
        assert (t.comm_members == UNKNOWN_PEER).any()
        assert t.unsupported["MPI_Type_vector"] == 1969


@pytest.mark.parametrize("n", [8])  # 27 ranks: tests/e2e/test_shared_traces_large.py
def test_generated_lulesh_counts_and_fifo_completion(n: int) -> None:
    d = next(DATA.glob(f"gen_dumpi_lulesh_{n}r"))
    t = read_dumpi(d)
    text = (d / "README.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("- **MPI calls present"))
    import re

    stated = {a: int(c) for a, c in re.findall(r"(\w+) \((\d+)\)", line)}
    k = kinds(t)
    for action in ("irecv", "isend", "wait", "waitall", "allreduce", "barrier", "reduce"):
        assert k[action.upper()] == stated[action], action
    # per-id FIFO: every Isend/Irecv completed exactly once (README)
    assert t.summary().n_uncompleted_requests == 0
    sends, recvs = p2p_multisets(t)
    assert sends == recvs
    if n == 8:
        assert any("CPU clock" in x for x in t.notes)  # oversubscribed run


def test_clock_option() -> None:
    d = DATA / "gen_dumpi_lulesh_8r"
    wall = read_dumpi(d, clock="wall").summary().compute_seconds
    cpu = read_dumpi(d, clock="cpu").summary().compute_seconds
    # README: per rank 2.80 s wall gaps vs 0.40 s CPU gaps
    assert wall > 4 * cpu
    assert cpu / 8 == pytest.approx(0.40, rel=0.15)
    with pytest.raises(ValueError, match="clock='sun' is invalid"):
        read_dumpi(d, clock="sun")


def _copy(tmp: Path) -> Path:
    dst = tmp / "tt"
    shutil.copytree(DATA / "dumpi_sstdumpi_testtrace_4r", dst)
    for f in dst.iterdir():
        f.chmod(0o644)
    return dst


@pytest.mark.parametrize("cut", [100, 1500, 2900])
def test_truncated_rank_file_raises_instead_of_crashing(tmp_path: Path, cut: int) -> None:
    d = _copy(tmp_path)
    f = d / "testtrace-0002.bin"
    f.write_bytes(f.read_bytes()[:cut])
    with pytest.raises(TraceFormatError, match="truncated or corrupt DUMPI file") as info:
        read_dumpi(d / "testtrace.meta")
    assert info.value.file == str(f)


def test_malformed_files(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    f = d / "testtrace-0001.bin"
    data = bytearray(f.read_bytes())
    data[0:8] = b"NOTDUMPI"
    f.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="not a DUMPI file") as info:
        read_dumpi(d)
    assert info.value.file == str(f) and info.value.record == 0
    f.unlink()
    with pytest.raises(TraceFormatError, match=r"testtrace-0001\.bin listed by numprocs=4"):
        read_dumpi(d)
    (d / "testtrace.meta").write_text("numprocs=four\nfileprefix=testtrace\n")
    with pytest.raises(TraceFormatError, match="integer numprocs"):
        read_dumpi(d)
