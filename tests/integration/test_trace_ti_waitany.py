"""SimGrid TI ``waitAny N``: SMPI writes it without saying which request completed; the
reader gives each one the rank's pending requests to choose from and the simulation
takes the first to complete (MPI_Waitany as SMPI executes it). Replays are compared with
the same trace holding explicit ``wait src dst tag`` lines in the completion order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpiuq.main import main
from mpiuq.simulator.trace import TraceFormatError, read_ti
from mpiuq.simulator.trace.ir import OpKind

REFS = Path(__file__).resolve().parents[2] / "experiments" / "simgrid_refs" / "platforms"

#: rank 1 receives 8 B from rank 0 (sent at 50 us) and 800 B from rank 2 (sent at 10 us),
#: posted in that order, and computes 1 us after each completion
HEAD = ["0 init", "1 init", "2 init", "1 irecv 0 0 8", "1 irecv 2 0 800"]
SENDERS = ["0 compute 50000", "0 send 1 0 8", "2 compute 10000", "2 send 1 0 800"]
TAIL = ["0 finalize", "1 finalize", "2 finalize"]


def _trace(folder: Path, name: str, *lines: str) -> Path:
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def replay_flat(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The JSON of ``mpiuq replay PATH --platform cluster_flat.xml --like simgrid``."""
    argv = [
        "replay", str(path), "--platform", str(REFS / "cluster_flat.xml"),
        "--hostfile", str(REFS / "hostfile"), "--like", "simgrid", "--json", "-q",
    ]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """The flow model's result of :func:`replay_flat`."""
    flow: dict[str, object] = replay_flat(path, capsys)["models"]["flow"]
    return flow


def test_waitany_lists_the_pending_requests_in_posting_order(tmp_path: Path) -> None:
    lines = [*HEAD, "1 waitAny 2", "1 compute 1000", "1 waitAny 2", *SENDERS, *TAIL]
    trace = read_ti(_trace(tmp_path, "t.txt", *lines), flop_rate=1e9)
    wa = np.flatnonzero(trace.kind == OpKind.WAITANY)
    assert trace.rank_of_op()[wa].tolist() == [1, 1]
    irecvs = trace.request[trace.kind == OpKind.IRECV].tolist()
    # both wait-anys choose among the same two requests (one group, listed once)
    assert trace.request[wa].tolist() == [0, 0] and trace.count[wa].tolist() == [2, 2]
    assert trace.wait_reqs.tolist() == irecvs
    assert trace.call_names[int(trace.call[wa[0]])] == "MPI_Waitany"
    assert any("2 request(s) completed by waitAny" in n for n in trace.notes)
    assert trace.unsupported == {}


def test_waitany_completes_the_first_message_to_arrive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two wait-anys replay exactly as waits on rank 2's message (sent at 10 us) then rank
    0's (50 us), and not as the opposite order (rank 1 then computes after the later)."""
    any_ = [*HEAD, "1 waitAny 2", "1 compute 1000", "1 waitAny 2", *SENDERS, *TAIL]
    early = [*HEAD, "1 wait 2 1 0", "1 compute 1000", "1 wait 0 1 0", *SENDERS, *TAIL]
    late = [*HEAD, "1 wait 0 1 0", "1 compute 1000", "1 wait 2 1 0", *SENDERS, *TAIL]
    got = _replay(_trace(tmp_path, "any.txt", *any_), capsys)
    right = _replay(_trace(tmp_path, "early.txt", *early), capsys)
    wrong = _replay(_trace(tmp_path, "late.txt", *late), capsys)
    assert got["simulated_time_s"] == right["simulated_time_s"]
    assert got["per_rank"] == right["per_rank"]  # type: ignore[index]
    later = float(wrong["simulated_time_s"])  # type: ignore[arg-type]
    assert later > float(got["simulated_time_s"]) + 0.9e-6  # type: ignore[arg-type]
    assert float(got["simulated_time_s"]) > 50e-6  # type: ignore[arg-type]


def test_waitall_after_waitany_waits_for_the_rest_of_the_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``waitAny``, a new receive, ``waitall``: the waitall lists the group with the new
    receive; it replays as a wait on the first arrival, then a waitall of the others."""
    extra = ["1 irecv 0 1 8", "0 send 1 1 8"]
    any_ = [*HEAD, "1 waitAny 2", "1 compute 1000", extra[0], "1 waitall", *SENDERS, extra[1]]
    ref = [*HEAD, "1 wait 2 1 0", "1 compute 1000", extra[0], "1 waitall", *SENDERS, extra[1]]
    trace = read_ti(_trace(tmp_path, "a.txt", *any_, *TAIL))
    wall = np.flatnonzero(trace.kind == OpKind.WAITALL)
    assert trace.count[wall].tolist() == [3]
    start = int(trace.request[wall[0]])
    assert sorted(trace.wait_reqs[start : start + 3].tolist()) == [0, 1, 2]
    got = _replay(_trace(tmp_path, "any.txt", *any_, *TAIL), capsys)
    want = _replay(_trace(tmp_path, "ref.txt", *ref, *TAIL), capsys)
    assert got["simulated_time_s"] == want["simulated_time_s"]
    assert got["per_rank"] == want["per_rank"]  # type: ignore[index]


def test_wait_on_a_member_of_an_open_group_is_one_more_waitany(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After one ``waitAny``, a ``wait`` naming one of the group's requests cannot tell
    which one the wait-any took: it waits for the group's other request."""
    lines = [*HEAD, "1 waitAny 2", "1 compute 1000", "1 wait 2 1 0", *SENDERS, *TAIL]
    trace = read_ti(_trace(tmp_path, "w.txt", *lines))
    assert int(np.count_nonzero(trace.kind == OpKind.WAITANY)) == 2
    assert int(np.count_nonzero(trace.kind == OpKind.WAIT)) == 0  # the wait became one
    early = [*HEAD, "1 wait 2 1 0", "1 compute 1000", "1 wait 0 1 0", *SENDERS, *TAIL]
    got = _replay(_trace(tmp_path, "any.txt", *lines), capsys)
    want = _replay(_trace(tmp_path, "early.txt", *early), capsys)
    assert got["simulated_time_s"] == want["simulated_time_s"]


def test_waitany_without_pending_requests_takes_no_time(tmp_path: Path) -> None:
    """MPI_Waitany on requests all completed returns MPI_UNDEFINED (SMPI still traces it)."""
    lines = ["0 init", "0 waitAny 3", "0 compute 1000", "0 waitAny 3", "0 finalize"]
    trace = read_ti(_trace(tmp_path, "n.txt", *lines))
    assert trace.kind.tolist() == [int(OpKind.COMPUTE)]
    assert any("2 waitAny with no pending request" in n for n in trace.notes)


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("1 waitAny 0", r"count 0 outside 1\.\.2147483647 \(waitAny N: the length of the"),
        ("1 waitAny -3", r"count -3 outside 1\.\.2147483647"),
        ("1 waitAny", r"too few arguments for 'waitany'"),
        ("1 waitAny twelve", r"expected a number, got 'twelve'"),
        ("1 waitAny 1.5", r"expected an integral count, got '1.5'"),
    ],
)
def test_bad_waitany_lines_name_file_line_and_value(tmp_path: Path, line: str, match: str) -> None:
    path = _trace(tmp_path, "bad.txt", *HEAD, line, *SENDERS, *TAIL)
    with pytest.raises(TraceFormatError, match=match) as info:
        read_ti(path)
    assert info.value.file == str(path) and info.value.record == 6 and info.value.rank == 1


def test_waitany_lists_beyond_the_lowering_limit_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group that never empties lists quadratically many requests: the lowering refuses
    more than ``MAX_WAITANY_ENTRIES`` with a typed error naming the trace (here 3 of 4)."""
    from mpiuq.simulator.lowering import rows
    from mpiuq.simulator.lowering.lower import UnreplayableTraceError, lower_trace

    path = _trace(tmp_path, "g.txt", *HEAD, "1 waitAny 2", "1 waitAny 2", *SENDERS, *TAIL)
    trace = read_ti(path)
    lower_trace(trace)  # 4 entries: within the real limit
    monkeypatch.setattr(rows, "MAX_WAITANY_ENTRIES", 3)
    with pytest.raises(UnreplayableTraceError, match=r"g\.txt: its MPI_Waitany calls list 4 "):
        lower_trace(trace)
