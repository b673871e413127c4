"""Trace representation: validation, HDF5 round trip, cache, summary and ``trace info``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from trace_checks import assert_same_trace

from mpiuq.main import main
from mpiuq.simulator.trace import (
    OpKind,
    Trace,
    TraceFormatError,
    UnsupportedTraceError,
    load_trace_h5,
    read_trace,
    save_trace,
)
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.cache.store import cache_key
from mpiuq.simulator.trace.formats import TRACE_FORMATS

TI = (
    "0 init\n1 init\n0 compute 1e9\n0 isend 1 0 3 0\n1 irecv 0 0 3 0\n0 wait 0 1 0\n"
    "1 wait 0 1 0\n0 allreduce 2 0 0\n1 allreduce 2 0 0\n0 finalize\n1 finalize\n"
)


def small_trace() -> Trace:
    b = TraceBuilder("ti", "memory", 2)
    c = b.call_id("MPI_Isend")
    b.add_compute(0, 0.5)
    b.add_compute(0, 0.25)  # merged with the previous COMPUTE
    rid = b.new_request()
    b.add(0, OpKind.ISEND, c, peer=1, tag=3, bytes_send=24, request=rid)
    b.add_waitall(0, b.call_id("MPI_Waitall"), [rid])
    b.add_vcollective(
        1, OpKind.ALLTOALLV, b.call_id("MPI_Alltoallv"), [1, 2, 3, 4], bytes_send=3, bytes_recv=7
    )
    b.unsupported["MPI_Wtime"] += 2
    b.note("hand-made")
    return b.build()


def test_builder_packs_columns() -> None:
    t = small_trace()
    assert t.rank_ptr.tolist() == [0, 3, 4]
    assert t.kind.tolist() == [OpKind.COMPUTE, OpKind.ISEND, OpKind.WAITALL, OpKind.ALLTOALLV]
    assert t.seconds[0] == 0.75
    assert t.waitall_requests(2).tolist() == [0]
    assert t.op_vcounts(3).tolist() == [1, 2, 3, 4]
    assert t.call_names[int(t.call[1])] == "MPI_Isend"
    s = t.summary()
    assert s.p2p_bytes_sent == 24 and s.compute_seconds == 0.75 and s.n_uncompleted_requests == 0
    assert json.loads(json.dumps(s.as_dict()))["unsupported"] == {"MPI_Wtime": 2}


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"peer": np.array([-2, 5, -2, -2], dtype=np.int32)}, "peer=5 outside"),
        ({"kind": np.array([0, 1, 6, 21], dtype=np.int16)}, "dtype int16, expected int8"),
        ({"seconds": np.array([-1.0, 0, 0, 0])}, r"seconds=-1.0 outside 0\.\.1e\+09"),
        ({"seconds": np.array([np.nan, 0, 0, 0])}, r"seconds=nan outside"),
        ({"bytes_send": np.array([0, 2**41, 0, 0])}, r"bytes_send=2199023255552 exceeds"),
        ({"comm": np.array([0, 3, 0, 0], dtype=np.int32)}, "comm=3 outside"),
        ({"wait_reqs": np.array([0, 0], dtype=np.int64)}, "WAITALL range|completed more"),
        ({"rank_ptr": np.array([0, 4, 3], dtype=np.int64)}, "rank_ptr must be non-decreasing"),
    ],
)
def test_validate_names_the_bad_column(change: dict, match: str) -> None:
    bad = dataclasses.replace(small_trace(), **change)
    with pytest.raises(TraceFormatError, match=match):
        bad.validate()


def test_hdf5_round_trip_is_exact(tmp_path: Path) -> None:
    t = read_trace(_ti(tmp_path), use_cache=False)
    save_trace(t, tmp_path / "t.h5")
    u = load_trace_h5(tmp_path / "t.h5")
    assert_same_trace(t, u)
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(TraceFormatError, match="not a readable mpiuq trace HDF5 file"):
        load_trace_h5(tmp_path / "junk.h5")


def _ti(tmp: Path) -> Path:
    p = tmp / "trace.txt"
    p.write_text(TI)
    return p


def test_cache_is_used_and_invalidated(tmp_path: Path) -> None:
    src = _ti(tmp_path)
    cache = tmp_path / "cache"
    t1 = read_trace(src, cache_dir=cache)
    entries = list(cache.glob("*.h5"))
    assert len(entries) == 1
    t2 = read_trace(src, cache_dir=cache)  # served from the cache
    assert np.array_equal(t1.kind, t2.kind) and t2.notes == t1.notes
    revision = TRACE_FORMATS.get("ti").revision  # the reader's revision is in the key
    key = cache_key(src, {"format": "ti", "flop_rate": 1e9, "revision": revision}, [src])
    assert entries[0].stem == key
    options = {"format": "ti", "flop_rate": 2e9, "revision": revision}
    assert cache_key(src, options, [src]) != key  # options count
    src.write_text(TI.replace("compute 1e9", "compute 2e9"))  # new size -> new key
    t3 = read_trace(src, cache_dir=cache)
    assert t3.summary().compute_seconds == pytest.approx(2.0)
    assert len(list(cache.glob("*.h5"))) == 2


def test_read_trace_errors(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedTraceError, match="does not exist"):
        read_trace(tmp_path / "nothing")
    with pytest.raises(ValueError, match="flop_rate=-1"):
        read_trace(_ti(tmp_path), flop_rate=-1)


def test_trace_info_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _ti(tmp_path)
    assert main(["trace", "info", str(src), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "format       ti" in out and "ISEND" in out and "p2p sent     1 messages, 24" in out
    assert main(["trace", "info", str(src), "--json", "--cache-dir", str(tmp_path / "c")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ops_per_kind"]["ALLREDUCE"] == 2 and data["n_ranks"] == 2
    assert main(["trace", "info", str(tmp_path / "missing")]) == 2


@pytest.mark.parametrize("compress", [False, True])
def test_h5_round_trip_mapped_or_compressed(tmp_path: Path, compress: bool) -> None:
    """Uncompressed files (the parse cache) are memory-mapped copy-on-write; gzipped ones read."""
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.trace import load_trace_h5, save_trace
    from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS

    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=20))
    assert trace.n_ops > 4096  # large enough to be gzipped when asked
    path = tmp_path / "t.h5"
    save_trace(trace, path, compress=compress)
    back = load_trace_h5(path)
    for name, dtype in (*OP_COLUMNS.items(), *AUX_COLUMNS.items()):
        got = getattr(back, name)
        assert got.dtype == dtype, name
        np.testing.assert_array_equal(got, getattr(trace, name), err_msg=name)
    assert isinstance(back.seconds.base, np.memmap) != compress
    back.seconds[0] = 99.0  # private to this process: the file keeps its value
    assert load_trace_h5(path).seconds[0] == trace.seconds[0]
