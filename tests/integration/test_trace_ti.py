"""SimGrid TI reader: hand-written fixtures (expected values computed by hand from the
SimGrid datatype table and the rules in FORMATS.md) and the real traces in shared/data."""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from shared_data import SHARED_TI_TRACES, TRACES, needs_traces

from mpiuq.simulator.trace import ANY_SOURCE, ANY_TAG, OpKind, TraceFormatError, read_ti

DATA = TRACES
needs_data = needs_traces


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def _ops(trace, rank):  # (kind name, peer, tag, bytes_send, bytes_recv) per op
    o = trace.ops_of(rank)
    return [
        (OpKind(int(k)).name, int(p), int(t), int(s), int(r))
        for k, p, t, s, r in zip(o.kind, o.peer, o.tag, o.bytes_send, o.bytes_recv, strict=True)
    ]


def test_current_dialect_sizes_and_computes(tmp_path: Path) -> None:
    # init without argument -> MPI_BYTE default; dt 0 = MPI_DOUBLE (8 B), 1 = MPI_INT (4 B)
    f = _write(
        tmp_path,
        "t.txt",
        "\n".join(
            [
                "0 init",
                "1 init",
                "0 compute 2e9",
                "0 compute 5e8",  # merged: 2.5 s at 1 Gflop/s
                "0 isend 1 7 10 0",
                "1 irecv 0 7 10 0",
                "0 send 1 3 5",
                "1 recv 0 3 5 1",
                "0 wait 0 1 7",
                "1 wait 0 1 7",
                "0 allreduce 4 1e6 0",
                "1 allreduce 4 1e6 0",
                "0 finalize",
                "1 finalize",
                "",
            ]
        ),
    )
    t = read_ti(f)
    assert t.n_ranks == 2
    assert _ops(t, 0) == [
        ("COMPUTE", -2, 0, 0, 0),
        ("ISEND", 1, 7, 80, 0),
        ("SEND", 1, 3, 5, 0),
        ("WAIT", -2, 0, 0, 0),
        ("ALLREDUCE", -2, 0, 32, 32),
    ]
    assert _ops(t, 1)[1] == ("RECV", 0, 3, 0, 20)
    assert t.ops_of(0).seconds[0] == pytest.approx(2.5)
    assert t.ops_of(0).seconds[4] == pytest.approx(1e-3)  # 1e6 reduction flops / 1e9
    # the WAIT completes the ISEND's request id
    o = t.ops_of(0)
    assert o.request[3] == o.request[1]


def test_init_argument_selects_double_default(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.txt", "0 init 1\n0 bcast 5e4\n0 finalize\n")
    t = read_ti(f)
    assert int(t.bytes_send[0]) == 5e4 * 8


def test_flop_rate_option(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.txt", "0 init\n0 compute 3e9\n0 finalize\n")
    assert read_ti(f, flop_rate=2e9).seconds[0] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="flop_rate"):
        read_ti(f, flop_rate=0.0)


def test_waitall_covers_only_requests_not_waited_later(tmp_path: Path) -> None:
    # SMPI's recorder: waitall over the 2 sends; the 2 receives are waited explicitly later
    f = _write(
        tmp_path,
        "t.txt",
        "\n".join(
            [
                "0 init",
                "1 init",
                "0 irecv 1 1 4 1",
                "0 irecv 1 2 4 1",
                "0 isend 1 1 4 1",
                "0 isend 1 2 4 1",
                "0 waitall 4",
                "0 wait 1 0 1",
                "0 wait 1 0 2",
                "1 irecv 0 1 4 1",
                "1 irecv 0 2 4 1",
                "1 isend 0 1 4 1",
                "1 isend 0 2 4 1",
                "1 waitall 4",
                "0 finalize",
                "1 finalize",
                "",
            ]
        ),
    )
    t = read_ti(f)
    o0 = t.ops_of(0)
    wa = int(np.flatnonzero(o0.kind == OpKind.WAITALL)[0]) + int(t.rank_ptr[0])
    sends = o0.request[o0.kind == OpKind.ISEND]
    recvs = o0.request[o0.kind == OpKind.IRECV]
    assert sorted(t.waitall_requests(wa).tolist()) == sorted(sends.tolist())
    assert sorted(o0.request[o0.kind == OpKind.WAIT].tolist()) == sorted(recvs.tolist())
    # rank 1's waitall really covers all four
    o1 = t.ops_of(1)
    wa1 = int(np.flatnonzero(o1.kind == OpKind.WAITALL)[0]) + int(t.rank_ptr[1])
    assert len(t.waitall_requests(wa1)) == 4
    assert t.summary().n_uncompleted_requests == 0


def test_failed_test_is_dropped_successful_test_completes(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        "t.txt",
        "\n".join(
            [
                "0 init",
                "1 init",
                "1 irecv 0 0 8",
                "1 test 0 1 0",
                "1 wait 0 1 0",  # failed test: dropped
                "1 irecv 0 1 8",
                "1 test 0 1 1",  # successful test: the completion
                "0 send 1 0 8",
                "0 send 1 1 8",
                "0 finalize",
                "1 finalize",
                "",
            ]
        ),
    )
    t = read_ti(f)
    kinds = [k for k, *_ in _ops(t, 1)]
    assert kinds == ["IRECV", "WAIT", "IRECV", "WAIT"]
    assert any("failed test" in n for n in t.notes)


def test_any_source_receive(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        "t.txt",
        "0 init\n1 init\n1 irecv -333 5 2 0\n0 send 1 5 2 0\n"
        "1 wait -333 1 5\n0 finalize\n1 finalize\n",
    )
    t = read_ti(f)
    o = t.ops_of(1)
    assert int(o.peer[0]) == ANY_SOURCE and int(o.bytes_recv[0]) == 16
    assert OpKind(int(o.kind[1])) is OpKind.WAIT


def test_smpi_any_tag_minus_444(tmp_path: Path) -> None:
    """SimGrid 3.32's ``-trace-ti`` writes MPI_ANY_TAG as -444 in receives and wait keys
    (these lines are smpirun's own recording of MPI_Irecv/MPI_Recv with MPI_ANY_TAG)."""
    f = _write(
        tmp_path,
        "t.txt",
        "0 init\n0 irecv -333 -444 1 1\n0 wait -333 0 -444\n0 recv 1 -444 1 1\n"
        "0 recv -333 7 1 1\n0 finalize\n"
        "1 init\n1 send 0 5 1 1\n1 send 0 6 1 1\n1 send 0 7 1 1\n1 finalize\n",
    )
    t = read_ti(f)
    o = t.ops_of(0)
    assert [OpKind(int(k)).name for k in o.kind] == ["IRECV", "WAIT", "RECV", "RECV"]
    assert [int(o.tag[k]) for k in (0, 2, 3)] == [ANY_TAG, ANY_TAG, 7]  # the wait completes 0
    assert [int(x) for x in o.peer][:1] == [ANY_SOURCE]


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("0 send 1 -444 1 1", r"tag -444 outside 0\.\."),  # only receives take MPI_ANY_TAG
        ("0 recv 1 -445 1 1", r"tag -445 outside -1\.\.2147483647 \(-1 or -444 = MPI_ANY_TAG\)"),
    ],
)
def test_other_negative_tags_are_refused(tmp_path: Path, line: str, match: str) -> None:
    f = _write(tmp_path, "t.txt", f"0 init\n1 init\n{line}\n0 finalize\n1 finalize\n")
    with pytest.raises(TraceFormatError, match=match):
        read_ti(f)


def test_msg_dialect_and_index_with_gzip(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    _write(
        tmp_path / "r",
        "a0.txt",
        "p0 init\np0 send p1 5760\np0 Irecv p1\np0 wait\np0 allReduce 40 86\np0 finalize\n",
    )
    with gzip.open(tmp_path / "r" / "a1.txt.gz", "wt") as fh:
        fh.write("p1 init\np1 recv p0\np1 send p0 12\np1 allReduce 40 86\np1 finalize\n")
    idx = _write(tmp_path, "index", "r/a0.txt\nr/a1.txt\n")  # .gz found transparently
    t = read_ti(idx)
    assert _ops(t, 1)[0] == ("RECV", 0, 0, 0, 5760)  # size from the matching send
    assert _ops(t, 0)[1] == ("IRECV", 1, 0, 0, 12)
    assert int(t.ops_of(0).kind[2]) == OpKind.WAIT
    assert t.ops_of(0).seconds[3] == pytest.approx(86e-9)


def test_collectives_vcounts(tmp_path: Path) -> None:
    # lines from SimGrid's actions_alltoallv.txt / actions_allgatherv.txt (3 and 4 ranks)
    f = _write(
        tmp_path,
        "t.txt",
        "\n".join(
            [f"{r} init" for r in range(3)]
            + [
                "0 alltoallv 100 1 40 30 1000 1 80 100",
                "1 alltoallv 1000 80 1 40 1000 40 1 30",
                "2 alltoallv 1000 100 30 1 1000 30 40 1",
            ]
            + [f"{r} finalize" for r in range(3)]
        )
        + "\n",
    )
    t = read_ti(f)
    assert t.op_vcounts(0).tolist() == [1, 40, 30, 1, 80, 100]
    assert int(t.bytes_send[0]) == 71 and int(t.bytes_recv[0]) == 181


@pytest.mark.parametrize(
    ("text", "match", "record"),
    [
        ("0 init\n0 isend 0 0\n0 finalize\n", "too few arguments", 2),
        ("0 init\nzero isend 1 0 1\n", "expected '<rank> <action>", 2),
        ("0 init\n0 send 0 0 abc\n0 finalize\n", "expected a number", 2),
        ("0 init\n0 send 7 0 1\n0 finalize\n", "peer rank 7 outside", 2),
        ("0 init\n0 wait 0 0 0\n0 finalize\n", "no isend/irecv posted", 2),
        ("0 init\n0 wait 0 1 0\n0 finalize\n", r"request key value 1 outside -333\.\.0", 2),
        ("0 init\n0 send 0 0 1 99\n0 finalize\n", "unknown SimGrid datatype", 2),
    ],
)
def test_malformed_lines_raise_typed_error(
    tmp_path: Path, text: str, match: str, record: int
) -> None:
    f = _write(tmp_path, "bad.txt", text)
    with pytest.raises(TraceFormatError, match=match) as info:
        read_ti(f)
    assert info.value.file == str(f) and info.value.record == record


def test_truncated_rank_file_names_file_and_rank(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.txt", "0 init\n1 init\n0 finalize\n1 compute 5\n")
    with pytest.raises(TraceFormatError, match="truncated: no finalize") as info:
        read_ti(f)
    assert info.value.rank == 1 and info.value.file == str(f) and info.value.record == 4


# --- real traces -------------------------------------------------------------------------
def _readme_counts(readme: Path) -> tuple[dict[str, int], int | None, float | None]:
    """Action counts 'as recorded', number of compute lines that follow a compute, flops."""
    text = readme.read_text()
    counts: dict[str, int] = {}
    section = text.split("## Action counts (as recorded)")
    if len(section) > 1:
        table = section[1].split("##")[0]
        for name, n in re.findall(r"\|\s*`(\w+)`\s*\|\s*([\d,]+)\s*\|", table):
            counts[name.lower()] = int(n.replace(",", ""))
    else:
        line = next(ln for ln in text.splitlines() if "Actions present" in ln)
        for name, n in re.findall(r"(\w+) \(([\d,]+)\)", line.split(":", 1)[1]):
            counts[name.lower()] = int(n.replace(",", ""))
    follow = re.search(r"of which ([\d,]+) directly follow", text)
    flops = re.search(r"\*\*Computation:\*\* ([\d.e+]+) flops in total", text)
    return (
        counts,
        int(follow.group(1).replace(",", "")) if follow else None,
        float(flops.group(1)) if flops else None,
    )


_ACTION_KIND = {
    "isend": OpKind.ISEND,
    "irecv": OpKind.IRECV,
    "send": OpKind.SEND,
    "recv": OpKind.RECV,
    "wait": OpKind.WAIT,
    "waitall": OpKind.WAITALL,
    "sendrecv": OpKind.SENDRECV,
    "barrier": OpKind.BARRIER,
    "bcast": OpKind.BCAST,
    "reduce": OpKind.REDUCE,
    "allreduce": OpKind.ALLREDUCE,
    "alltoall": OpKind.ALLTOALL,
    "alltoallv": OpKind.ALLTOALLV,
    "gather": OpKind.GATHER,
    "allgather": OpKind.ALLGATHER,
    "allgatherv": OpKind.ALLGATHERV,
    "reducescatter": OpKind.REDUCE_SCATTER,
}
_BIG = {
    "ti_hpcg_16r",
    "ti_lulesh_216r",
    "ti_lulesh_512r",
    "ti_lulesh_64r",
    "ti_minife_64r",
    "ti_nas_mg_A_256r",
    "ti_nekbone_64r",
    "ti_comd_256r",
}


@needs_data
def test_the_fixed_list_names_every_shared_ti_trace() -> None:
    on_disk = {
        p.name for p in DATA.glob("*ti_*") if p.is_dir() and p.name != "ti_simgrid_replay_examples"
    }
    assert on_disk == set(SHARED_TI_TRACES)


@needs_data
@pytest.mark.parametrize(  # the _BIG ones: tests/e2e/test_shared_traces_large.py
    "name", [n for n in SHARED_TI_TRACES if n not in _BIG]
)
def test_real_ti_trace_matches_readme_counts(name: str) -> None:
    d = DATA / name
    t = read_ti(d)
    counts, follow, flops = _readme_counts(d / "README.md")
    kinds = Counter(OpKind(int(k)).name for k in t.kind)
    for action, n in counts.items():
        if action in _ACTION_KIND:
            assert kinds[_ACTION_KIND[action].name] == n, action
    if "compute" in counts and follow is not None:
        assert kinds["COMPUTE"] == counts["compute"] - follow  # consecutive computes merge
    if flops is not None:  # README gives 4 significant digits
        assert float(t.seconds[t.kind == OpKind.COMPUTE].sum()) * 1e9 == pytest.approx(
            flops, rel=1e-3
        )
    assert t.summary().n_uncompleted_requests == 0


@needs_data
def test_simgrid_replay_examples_each_file_opens() -> None:
    d = DATA / "ti_simgrid_replay_examples"
    files = sorted(d.glob("actions_*.txt"))
    assert len(files) == 11
    for f in files:
        t = read_ti(f)
        first = {int(line.split()[0]) for line in f.read_text().splitlines() if line.strip()}
        assert t.n_ranks == max(first) + 1, f.name
    # the split_traces index lists paths relative to SimGrid's tree ("replay/actions0.txt")
    t = read_ti(d / "split_traces")
    assert t.n_ranks == 2
    ag = read_ti(d / "actions_allgatherv.txt")  # trailing "0 0": dt1 = dt2 = MPI_DOUBLE (8 B)
    assert ag.op_vcounts(int(ag.rank_ptr[3])).tolist() == [8 * 275427] * 3 + [8 * 204020]


@needs_data
def test_nas_lu_msg_dialect_sends_match_receives() -> None:
    t = read_ti(DATA / "ti_simgrid_nas_lu_S_4r")
    ranks = t.rank_of_op()
    send = np.isin(t.kind, [OpKind.SEND, OpKind.ISEND])
    recv = np.isin(t.kind, [OpKind.RECV, OpKind.IRECV])
    s = Counter(
        zip(ranks[send].tolist(), t.peer[send].tolist(), t.bytes_send[send].tolist(), strict=True)
    )
    r = Counter(
        zip(t.peer[recv].tolist(), ranks[recv].tolist(), t.bytes_recv[recv].tolist(), strict=True)
    )
    assert s == r and sum(s.values()) == 4408


@needs_data
@pytest.mark.parametrize("name", ["ti_minife_16r"])  # ti_lulesh_64r: tests/e2e
def test_raw_recording_equals_replayable_variant(name: str) -> None:
    """The raw SMPI recording (partial waitall, -333 sources) read correctly completes the
    same requests as the rewritten *_replayable variant SimGrid accepts."""
    d = DATA / name
    raw = read_ti(d)
    rep = read_ti(next(d.glob("*_replayable.txt")))
    assert any("_replayable" in n for n in raw.notes)

    def completed(t):  # per rank: sorted (kind, peer, tag, bytes) of completed requests
        post = np.isin(t.kind, [OpKind.ISEND, OpKind.IRECV])
        info = {
            int(q): (int(k), int(p), int(g), int(s + r))
            for q, k, p, g, s, r in zip(
                t.request[post],
                t.kind[post],
                t.peer[post],
                t.tag[post],
                t.bytes_send[post],
                t.bytes_recv[post],
                strict=True,
            )
        }
        out = []
        for rank in range(t.n_ranks):
            o = t.ops_of(rank)
            ids = list(o.request[o.kind == OpKind.WAIT])
            base = int(t.rank_ptr[rank])
            for i in np.flatnonzero(o.kind == OpKind.WAITALL):
                ids += list(t.waitall_requests(base + int(i)))
            out.append(sorted(info[int(q)][::1] for q in ids))
        return out

    a, b = completed(raw), completed(rep)
    if name == "ti_minife_16r":  # the variant replaced -333 by concrete senders
        a = [[(k, 0 if p == ANY_SOURCE else p, g, s) for k, p, g, s in x] for x in a]
        b = [[(k, 0 if p == ANY_SOURCE else p, g, s) for k, p, g, s in x] for x in b]
        n_any = int(np.count_nonzero(raw.peer[raw.kind == OpKind.IRECV] == ANY_SOURCE))
        assert n_any == 144  # README: 144 receives resolved
        a = [sorted((k, g, s) for k, _p, g, s in x) for x in a]
        b = [sorted((k, g, s) for k, _p, g, s in x) for x in b]
    assert a == b
    assert raw.summary().n_uncompleted_requests == 0 == rep.summary().n_uncompleted_requests
