"""Block lowering into a program file: byte-identical to ``lower_trace``, and its bad input.

The reference is :func:`lower_trace` of the whole trace as ``load_trace_h5`` reads it;
:func:`lower_trace_blocks` of the same file, in blocks of 1, 3 or all ranks (and the
default), must give the same program rows, value column, rank offsets, wait list,
request count, row map, combine rows and collective counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from shared_data import TRACES, needs_traces

from mpiuq.simulator.collectives import CollectiveError
from mpiuq.simulator.errors import ProgramError, SettingError
from mpiuq.simulator.lowering.blocks import lower_trace_blocks
from mpiuq.simulator.lowering.lower import (
    Lowered,
    LoweringOptions,
    UnreplayableTraceError,
    lower_trace,
)
from mpiuq.simulator.motifs import MOTIFS, MotifSpec, synthesize
from mpiuq.simulator.program.file import (
    ProgramFile,
    ProgramFileError,
    TraceFacts,
    write_program_file,
)
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.cache.store import load_trace_h5, save_trace
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import UNKNOWN_PEER, OpKind, Trace


def assert_identical(ref: Lowered, got: Lowered) -> None:
    a, b = ref.program, got.program
    assert a.n_ranks == b.n_ranks and a.n_requests == b.n_requests and a.n_marks == b.n_marks
    assert a.call_names == b.call_names
    assert a.ops.tobytes() == b.ops.tobytes()
    assert a.nbytes.tobytes() == b.nbytes.tobytes()  # the shared 8-byte value column
    assert np.array_equal(a.seconds, b.seconds, equal_nan=True)
    assert a.rank_ptr.tobytes() == b.rank_ptr.tobytes()
    assert np.array_equal(a.wait_list, b.wait_list)
    assert ref.row_ptr.tobytes() == got.row_ptr.tobytes()
    assert ref.reduce_rows.tobytes() == got.reduce_rows.tobytes()
    assert ref.reduce_bytes.tobytes() == got.reduce_bytes.tobytes()
    assert ref.collectives == got.collectives
    assert ref.algorithms == got.algorithms
    assert ref.nonblocking_collectives == got.nonblocking_collectives


def check_blocks(h5: Path, out: Path, options: LoweringOptions | None = None) -> None:
    trace = load_trace_h5(h5)
    ref = lower_trace(trace, options)
    for per in (1, 3, trace.n_ranks, None):
        res = lower_trace_blocks(h5, options, out / "p.mpiuqprog", ranks_per_block=per)
        assert res.n_ops == ref.program.n_ops
        with ProgramFile.open(res.path) as pf:
            assert pf.facts == TraceFacts.of(trace)
            assert_identical(ref, pf.to_lowered())


@pytest.mark.parametrize("motif", MOTIFS)
def test_motif_block_lowering_is_byte_identical(motif: str, tmp_path: Path) -> None:
    spec = MotifSpec(motif, n_ranks=10, iterations=3, compute_s=2e-6, allreduce_every=2)
    save_trace(synthesize(spec), tmp_path / "t.h5")
    check_blocks(tmp_path / "t.h5", tmp_path)


def _mixed_trace() -> Trace:
    """Nonblocking collectives, partial wait-alls, sendrecv, a v-collective, a sub-communicator."""
    b = TraceBuilder("test", "<hand>", 5)
    c = {n: b.call_id(n) for n in ("MPI_Iallreduce", "MPI_Isend", "MPI_Irecv", "MPI_Waitall")}
    c |= {n: b.call_id(n) for n in ("MPI_Sendrecv", "MPI_Allgatherv", "MPI_Bcast", "MPI_Wait")}
    sub = b.add_comm([1, 3, 4])
    for r in range(5):
        b.add_compute(r, 1e-6 * (r + 1))
        rq, rs, rr = b.new_request(), b.new_request(), b.new_request()
        b.add(r, OpKind.ALLREDUCE, c["MPI_Iallreduce"], bytes_send=8, request=rq, nonblocking=True)
        b.add(r, OpKind.ISEND, c["MPI_Isend"], peer=(r + 1) % 5, bytes_send=64, request=rs)
        b.add(r, OpKind.IRECV, c["MPI_Irecv"], peer=(r - 1) % 5, bytes_recv=64, request=rr)
        b.add_waitall(r, c["MPI_Waitall"], [rq, rs])
        b.add(r, OpKind.WAIT, c["MPI_Wait"], request=rr)
        b.add(
            r,
            OpKind.SENDRECV,
            c["MPI_Sendrecv"],
            peer=(r + 2) % 5,
            peer2=(r - 2) % 5,
            bytes_send=16,
            bytes_recv=16,
        )
        b.add_vcollective(
            r, OpKind.ALLGATHERV, c["MPI_Allgatherv"], [8, 16, 24, 32, 40], bytes_send=8 * (r + 1)
        )
        if r in (1, 3, 4):
            b.add(r, OpKind.BCAST, c["MPI_Bcast"], comm=sub, peer=3, bytes_send=128)
    trace = b.build()
    trace.validate()
    return trace


def test_mixed_trace_block_lowering_is_byte_identical(tmp_path: Path) -> None:
    save_trace(_mixed_trace(), tmp_path / "t.h5")
    opts = LoweringOptions(reduce_rate_Bps=3e9, compute_scale=0.5)
    check_blocks(tmp_path / "t.h5", tmp_path, opts)
    assert lower_trace(load_trace_h5(tmp_path / "t.h5")).nonblocking_collectives == 5


def test_waitany_trace_block_lowering_is_byte_identical(tmp_path: Path) -> None:
    """TI wait-any groups (overlapping wait lists, a waitall listing a group) in blocks."""
    lines = []
    for r in range(4):
        peer = r ^ 1
        lines += [f"{r} init", f"{r} irecv {peer} 0 8", f"{r} irecv {peer} 1 80000"]
        lines += [f"{r} isend {peer} 0 8", f"{r} isend {peer} 1 80000"]
        lines += [f"{r} waitAny 4", f"{r} compute 1000", f"{r} waitAny 4", f"{r} irecv {peer} 2 8"]
        lines += [f"{r} isend {peer} 2 8", f"{r} waitall", f"{r} finalize"]
    (tmp_path / "w.txt").write_text("\n".join(lines) + "\n")
    trace = read_trace(tmp_path / "w.txt", use_cache=False)
    assert int(np.count_nonzero(trace.kind == OpKind.WAITANY)) == 8
    save_trace(trace, tmp_path / "t.h5")
    check_blocks(tmp_path / "t.h5", tmp_path)


def _dense_alltoallv(p: int) -> Trace:
    """Every rank calls one all-to-all-v with distinct non-zero counts to every partner."""
    b = TraceBuilder("test", "<hand>", p)
    call = b.call_id("MPI_Alltoallv")

    def count(src: int, dst: int) -> int:
        return 0 if src == dst else 8 * (1 + (src * 31 + dst * 17) % 97)

    for r in range(p):
        send = [count(r, j) for j in range(p)]
        recv = [count(j, r) for j in range(p)]
        b.add_compute(r, 1e-6)
        b.add_vcollective(
            r, OpKind.ALLTOALLV, call, send + recv, bytes_send=sum(send), bytes_recv=sum(recv)
        )
    return b.build()


def test_wide_collectives_cut_the_blocks_by_their_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One all-to-all-v operation per rank lowers to ~2 p rows: the default blocks are cut
    by those rows, not by the trace's 2 operations per rank, and lower to the same program."""
    from mpiuq.simulator.lowering import block_cuts

    save_trace(_dense_alltoallv(12), tmp_path / "t.h5")
    ref = lower_trace(load_trace_h5(tmp_path / "t.h5"))
    whole = lower_trace_blocks(tmp_path / "t.h5", None, tmp_path / "a.mpiuqprog")
    assert whole.n_blocks == 1
    monkeypatch.setattr(block_cuts, "WIDE_BLOCK_ROWS", 50)  # 2 ranks of 24 counts
    cut = lower_trace_blocks(tmp_path / "t.h5", None, tmp_path / "b.mpiuqprog")
    assert (cut.n_blocks, cut.ranks_per_block) == (6, 2)
    with ProgramFile.open(cut.path) as pf:
        assert_identical(ref, pf.to_lowered())


def test_templates_let_go_between_blocks_lower_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Templates kept from block to block (sub-communicators) are dropped past the budget."""
    from mpiuq.simulator.lowering import blocks as lowering_blocks

    monkeypatch.setattr(lowering_blocks, "TEMPLATE_CACHE_BYTES", 0)
    save_trace(_mixed_trace(), tmp_path / "t.h5")
    check_blocks(tmp_path / "t.h5", tmp_path)


def test_ranks_without_operations_make_empty_blocks(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 4)
    send, recv = b.call_id("MPI_Send"), b.call_id("MPI_Recv")
    b.add(0, OpKind.SEND, send, peer=1, bytes_send=8)
    b.add(1, OpKind.RECV, recv, peer=0, bytes_recv=8)
    b.add_compute(3, 1e-6)  # rank 2 has no operation at all
    save_trace(b.build(), tmp_path / "t.h5")
    check_blocks(tmp_path / "t.h5", tmp_path)


SHARED = [
    "ti_minife_16r/minife_16r.txt",  # any-source receives, partial wait-alls
    "otf2_sstmac_mpi_coverage_10r",  # collective kinds, sub-communicators, I-collectives
    "dumpi_sstmac_testbgp_7r",  # comm_create, alltoall
    "ti_simgrid_nas_lu_S_4r",
    "gen_ti_lulesh_8r",
]


@needs_traces
@pytest.mark.parametrize("name", SHARED)
def test_shared_trace_block_lowering_is_byte_identical(name: str, tmp_path: Path) -> None:
    trace = read_trace(TRACES / name, cache_dir=tmp_path / "cache")
    save_trace(trace, tmp_path / "t.h5")
    check_blocks(tmp_path / "t.h5", tmp_path)


# ---- bad input ------------------------------------------------------------------------


@pytest.fixture
def halo_h5(tmp_path: Path) -> Path:
    path = tmp_path / "halo.h5"
    save_trace(synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2)), path)
    return path


@pytest.mark.parametrize("per", [0, -1, float("nan"), 2.5, True, "4"])
def test_bad_ranks_per_block_is_refused(per: object, halo_h5: Path, tmp_path: Path) -> None:
    with pytest.raises(SettingError, match=r"ranks_per_block=.* expected a whole number >= 1"):
        lower_trace_blocks(halo_h5, None, tmp_path / "p.mpiuqprog", ranks_per_block=per)  # type: ignore[arg-type]
    assert not list(tmp_path.glob("p.mpiuqprog*"))


def test_truncated_trace_file_is_refused_naming_it(halo_h5: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.h5"
    cut.write_bytes(halo_h5.read_bytes()[: halo_h5.stat().st_size // 2])
    with pytest.raises(TraceFormatError, match=r"cut\.h5") as info:
        lower_trace_blocks(cut, None, tmp_path / "p.mpiuqprog", ranks_per_block=3)
    assert info.value.file == str(cut)
    assert not list(tmp_path.glob("p.mpiuqprog*"))  # nothing left behind


def test_request_posted_twice_is_refused_across_and_within_blocks(
    halo_h5: Path, tmp_path: Path
) -> None:
    with h5py.File(halo_h5, "r+") as f:
        kind, req, rp = f["kind"][...], f["request"][...], f["rank_ptr"][...]
        isend = np.flatnonzero(kind == OpKind.ISEND)
        first, later = isend[0], isend[isend >= rp[5]][0]  # rank 0's and rank 5's
        req[later] = req[first]
        f["request"][...] = req
    with pytest.raises(TraceFormatError, match="posted twice"):
        load_trace_h5(halo_h5)  # the in-memory reader refuses it too
    for per in (2, 8):  # in two blocks, in one
        with pytest.raises(TraceFormatError, match=r"halo\.h5.*posted twice"):
            lower_trace_blocks(halo_h5, None, tmp_path / "p.mpiuqprog", ranks_per_block=per)
        assert not list(tmp_path.glob("p.mpiuqprog*"))  # the partial file was deleted


def test_foreign_wait_fails_the_block_check_naming_the_file(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 2)
    isend, wait = b.call_id("MPI_Isend"), b.call_id("MPI_Wait")
    irecv = b.call_id("MPI_Irecv")
    q, p = b.new_request(), b.new_request()
    b.add(0, OpKind.ISEND, isend, peer=1, bytes_send=8, request=q)
    b.add(1, OpKind.IRECV, irecv, peer=0, bytes_recv=8, request=p)
    b.add(1, OpKind.WAIT, wait, request=q)  # rank 1 waits on rank 0's send
    b.add(0, OpKind.WAIT, wait, request=p)
    save_trace(b.build(), tmp_path / "t.h5")
    with pytest.raises(ProgramError, match="never created"):
        lower_trace(load_trace_h5(tmp_path / "t.h5"))
    for per in (1, 2):
        with pytest.raises(ProgramError, match=r"t\.h5.*never created") as info:
            lower_trace_blocks(tmp_path / "t.h5", None, tmp_path / "p.mpiuqprog", per)
        assert info.value.rank is not None


def test_unknown_peer_is_unreplayable_naming_the_file(halo_h5: Path, tmp_path: Path) -> None:
    with h5py.File(halo_h5, "r+") as f:
        kind, peer = f["kind"][...], f["peer"][...]
        i = int(np.flatnonzero(kind == OpKind.IRECV)[-1])
        peer[i] = UNKNOWN_PEER
        f["peer"][...] = peer
    with pytest.raises(UnreplayableTraceError, match=rf"halo\.h5.*at operation {i} "):
        lower_trace_blocks(halo_h5, None, tmp_path / "p.mpiuqprog", ranks_per_block=3)


def test_collective_outside_its_communicator_names_the_block(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 4)
    bcast = b.call_id("MPI_Bcast")
    sub = b.add_comm([0, 1])
    for r in range(4):
        b.add_compute(r, 1e-6)
        b.add(r, OpKind.BCAST, bcast, comm=sub, peer=0, bytes_send=8)
    save_trace(b.build(), tmp_path / "t.h5")  # ranks 2 and 3 are not members
    with pytest.raises(CollectiveError, match=r"rank 2 calls bcast \(operation 5\)"):
        lower_trace(load_trace_h5(tmp_path / "t.h5"))
    with pytest.raises(
        CollectiveError,
        match=r"rank 2 calls bcast \(operation 1\).*t\.h5, block of ranks 2\.\.3: its "
        r"operation indices count from trace operation 4",
    ):
        lower_trace_blocks(tmp_path / "t.h5", None, tmp_path / "p.mpiuqprog", ranks_per_block=2)


def test_lowering_beyond_int32_ids_is_refused_before_writing_rows(
    halo_h5: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mpiuq.simulator.lowering.rows as rows

    real_plan_rows = rows.plan_rows

    def plan_rows_of_a_huge_trace(*args: object) -> tuple[int, int, int]:
        total, _n_requests, n_wl = real_plan_rows(*args)
        return total, 2**31, n_wl

    def emit_must_not_run(*args: object) -> None:
        raise AssertionError("rows written before the limit was checked")

    monkeypatch.setattr(rows, "plan_rows", plan_rows_of_a_huge_trace)
    monkeypatch.setattr(rows, "emit_program", emit_must_not_run)
    with pytest.raises(ProgramError, match=r"halo\.h5 lowers to at least 2147483648 requests"):
        lower_trace_blocks(halo_h5, None, tmp_path / "p.mpiuqprog", ranks_per_block=3)
    assert not list(tmp_path.glob("p.mpiuqprog*"))


# ---- program file format --------------------------------------------------------------


@pytest.fixture
def prog_file(halo_h5: Path, tmp_path: Path) -> tuple[Path, Lowered]:
    trace = load_trace_h5(halo_h5)
    low = lower_trace(trace)
    return write_program_file(low, TraceFacts.of(trace), tmp_path / "h.mpiuqprog"), low


def test_written_program_file_reads_back_row_slices(prog_file: tuple[Path, Lowered]) -> None:
    path, low = prog_file
    with ProgramFile.open(path) as pf:
        assert_identical(low, pf.to_lowered())
        ops = np.zeros((10, 8), np.int32)
        val = np.zeros(10, np.int64)
        pf.read_rows(7, 12, ops, val)
        assert np.array_equal(ops[:5], low.program.ops[7:12]) and not ops[5:].any()
        assert np.array_equal(val[:5], low.program.nbytes[7:12])
        assert pf.wait_list.dtype == np.int32
        with pytest.raises(ProgramFileError, match=r"rows: \[5, 4\) outside"):
            pf.read_rows(5, 4, ops, val)
        with pytest.raises(ValueError, match="ops_out must be"):
            pf.read_rows(0, 11, ops, val)


def _edit_meta(path: Path, **changes: object) -> None:
    meta = json.loads((path / "meta.json").read_text())
    meta.update(changes)
    (path / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"version": 2}, r"meta\.json: version: is 2, expected 1"),
        ({"n_ranks": "8"}, r"n_ranks: is '8', expected an integer >= 0"),
        ({"n_ops": 10**6}, r"rank_ptr\.npy: runs 0\.\.\d+ .* expected non-decreasing 0\.\.1000000"),
        ({"n_wait": 3}, r"wait_list\.npy: has \d+ entries, expected 3"),
        ({"n_requests": 2**31}, r"n_requests: is 2147483648, beyond the engine's limit"),
        ({"call_names": [1]}, r"call_names: is \[1\], expected a list of strings"),
        ({"algorithms": {"allreduce": "ring"}}, r"algorithms: .* expected \{name: \[names\]\}"),
    ],
)
def test_bad_meta_is_refused_naming_file_key_value(
    prog_file: tuple[Path, Lowered], change: dict[str, object], match: str
) -> None:
    path, _ = prog_file
    _edit_meta(path, **change)
    with pytest.raises(ProgramFileError, match=match) as info:
        ProgramFile.open(path)
    assert "h.mpiuqprog" in info.value.path


def test_truncated_and_missing_members_are_refused(prog_file: tuple[Path, Lowered]) -> None:
    path, _ = prog_file
    ops = path / "ops.bin"
    size = ops.stat().st_size
    ops.write_bytes(ops.read_bytes()[: size - 32])
    with pytest.raises(
        ProgramFileError, match=rf"ops\.bin: holds {size - 32} bytes, expected {size} \(truncated\)"
    ):
        ProgramFile.open(path)
    good = (path / "rank_ptr.npy").read_bytes()
    np.save(path / "rank_ptr.npy", np.zeros((2, 2), np.int64))
    with pytest.raises(ProgramFileError, match=r"rank_ptr\.npy: is int64 of shape \(2, 2\)"):
        ProgramFile.open(path)
    (path / "rank_ptr.npy").write_bytes(good)
    (path / "wait_list.npy").unlink()
    with pytest.raises(ProgramFileError, match=r"wait_list\.npy: is missing"):
        ProgramFile.open(path)
    (path / "meta.json").write_text("{not json")
    with pytest.raises(ProgramFileError, match=r"meta\.json: is not readable JSON"):
        ProgramFile.open(path)
    with pytest.raises(ProgramFileError, match="is not a program file directory"):
        ProgramFile.open(path / "nothing")
