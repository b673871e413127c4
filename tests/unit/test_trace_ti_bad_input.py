"""TI reader on hostile input: every out-of-range value, damaged file or bad byte is a
TraceFormatError naming the file, rank and line, the bad value and the allowed range
(issue 14), and nothing is allocated per rank before the ranks are checked."""

from __future__ import annotations

import gzip
import resource
from pathlib import Path

import pytest

from mpiuq.simulator.trace import TraceFormatError, read_ti
from mpiuq.simulator.trace.limits import MAX_ACTION_SECONDS, MAX_RANKS


def _trace(tmp: Path, *lines: str, name: str = "t.txt") -> Path:
    p = tmp / name
    p.write_text("\n".join(lines) + "\n")
    return p


def _bad(path: Path, match: str, line: int, rank: int | None = 0) -> TraceFormatError:
    with pytest.raises(TraceFormatError, match=match) as info:
        read_ti(path)
    err = info.value
    assert err.file == str(path) and err.record == line and err.rank == rank
    return err


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("0 irecv 0 0 -1e300", r"count -1e300 outside 0\.\.2147483647"),
        ("0 irecv 0 0 1e19", r"count 1e19 outside 0\.\.2147483647"),
        ("0 send 0 0 9223372036854775808", r"count 9223372036854775808 outside"),
        ("0 send 0 2147483648 1", r"tag 2147483648 outside 0\.\.2147483647"),
        ("0 send 0 -1 1", r"tag -1 outside 0\.\.2147483647"),
        ("0 irecv 0 -2 1", r"tag -2 outside -1\.\.2147483647 \(-1 or -444 = MPI_ANY_TAG\)"),
        ("0 compute 1e300", r"1e300 flops at 1e\+09 flop/s is 1e\+291 s, more than the 1e\+06 s"),
        ("0 compute -5", r"expected a finite amount >= 0, got '-5'"),
        ("0 compute nan", r"expected a number, got 'nan'"),
        ("0 sleep 2e6", r"2e6 s is 2e\+06 s, more than"),
        ("0 isend -333 0 1", r"destination -333 is MPI_ANY_SOURCE \(-333\), which only a receive"),
        ("0 sendrecv 1 -333 1 0", r"destination -333 is MPI_ANY_SOURCE"),
        ("0 bcast 1 -333", r"root rank -333 outside 0\.\.1"),
        ("0 reduce 1 0 5", r"root rank 5 outside 0\.\.1"),
        ("0 isend 2 0 1", r"peer rank 2 outside 0\.\.1"),
        ("0 send 0 0 1.5", r"expected an integral count, got '1.5'"),
        ("0 send 0 0 1 99", r"unknown SimGrid datatype id 99 \(known: 0\.\.54\)"),
        ("0 wait 5 0 0", r"request key value 5 outside -333\.\.1"),
        ("0 alltoallv 1 1", r"expected 2 per-rank counts for alltoallv, got 1"),
    ],
)
def test_out_of_range_values_name_line_value_and_range(
    tmp_path: Path, line: str, match: str
) -> None:
    f = _trace(tmp_path, "0 init", "1 init", line, "0 finalize", "1 finalize")
    _bad(f, match, 3)


def test_vector_byte_total_is_bounded(tmp_path: Path) -> None:
    f = _trace(tmp_path, "0 init", "0 allgatherv 1 2147483647 27 27", "0 finalize")
    assert int(read_ti(f).bytes_recv[0]) == (2**31 - 1) * 32  # datatype 27: 32 B
    big = " ".join(["2147483647"] * 40)
    g = _trace(tmp_path, *[f"{r} init" for r in range(40)], f"0 allgatherv 1 {big} 27 27",
               name="g.txt")  # fmt: skip
    _bad(g, r"more than the 1099511627776 bytes \(1 TiB\) allowed", 41)


def test_huge_rank_is_refused_before_anything_per_rank(tmp_path: Path) -> None:
    f = _trace(tmp_path, "0 init", "4294967296 Irecv p0", "0 finalize")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = _bad(f, rf"rank 4294967296 outside 0\.\.{MAX_RANKS - 1}", 2, rank=None)
    assert "the limit on ranks per trace" in str(err)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_limits_are_not_rejecting_the_largest_allowed_values(tmp_path: Path) -> None:
    f = _trace(
        tmp_path,
        "0 init",
        "1 init",
        f"0 compute {MAX_ACTION_SECONDS * 1e9:.0f}",
        "0 isend 1 2147483647 2147483647 27",
        "1 irecv -333 -1 2147483647 27",
        "0 wait 0 1 2147483647",
        "1 wait -333 1 -1",
        "0 finalize",
        "1 finalize",
    )
    t = read_ti(f)
    assert float(t.seconds[0]) == MAX_ACTION_SECONDS
    assert int(t.bytes_send[1]) == (2**31 - 1) * 32


def test_rank_file_starting_with_a_comment_is_read(tmp_path: Path) -> None:
    d = tmp_path / "trace"
    d.mkdir()
    (d / "rank0.txt").write_text("0 init\n0 send 1 0 8\n0 finalize\n")
    (d / "rank1.txt").write_text("# recorded by hand\n\n1 init\n1 recv 0 0 8\n1 finalize\n")
    t = read_ti(d)
    assert t.n_ranks == 2 and len(t.ops_of(1)) == 1


def test_damaged_gzip_names_the_file(tmp_path: Path) -> None:
    good = gzip.compress(b"0 init\n0 compute 5\n0 finalize\n" * 50)
    f = tmp_path / "t.txt.gz"
    f.write_bytes(good[:40] + bytes(b ^ 0x5A for b in good[40:60]) + good[60:])
    with pytest.raises(TraceFormatError, match="damaged gzip data") as info:
        read_ti(f)
    assert info.value.file == str(f)
    f.write_bytes(good[: len(good) // 2])
    with pytest.raises(TraceFormatError, match="truncated gzip data") as info:
        read_ti(f)
    assert info.value.file == str(f)


def test_gzip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mpiuq.simulator.trace.ti import files as ti_files

    f = tmp_path / "t.txt.gz"
    f.write_bytes(gzip.compress(b"0 init\n" + b"0 compute 5\n" * 100_000 + b"0 finalize\n"))
    monkeypatch.setattr(ti_files, "MAX_TEXT_BYTES", 100_000)
    with pytest.raises(TraceFormatError, match="decompresses to more than 100000 bytes"):
        ti_files.read_text_bytes(f, ti_files.MAX_TEXT_BYTES)


def test_non_text_bytes_name_file_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_bytes(b"0 init\n0 compute 5\n0 comp\xffute 5\n0 finalize\n")
    _bad(f, r"byte 0xff at column 7: a TI line must be printable ASCII", 3, rank=None)
    f.write_bytes(b"# caf\xe9 (latin-1 comment is fine)\n0 init\n0 finalize\n")
    assert read_ti(f).n_ranks == 1


def test_first_error_wins_and_truncation_names_rank(tmp_path: Path) -> None:
    f = _trace(tmp_path, "0 init", "1 init", "0 finalize", "1 compute 5")
    _bad(f, "truncated: no finalize", 4, rank=1)
