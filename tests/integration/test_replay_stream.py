"""The streamed replay (``mpiuq replay --stream``): block lowering into a temporary
program file, models run through per-rank windows.

Checked against the in-memory replay of the same trace (bit-identical results), on a
motif trace file, a text trace read through the trace cache and a trace that
deadlocks; the program file must be gone afterwards, also after an error; bad
settings and a scratch folder without room give one-line errors.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from shared_data import TRACES, needs_traces

from mpiuq.main import main
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay import stream as replay_stream
from mpiuq.simulator.replay import stream_default
from mpiuq.simulator.replay.run import ReplayDeadlockError, ReplaySetup, replay
from mpiuq.simulator.replay.stream import origin_of_file, replay_file_streamed
from mpiuq.simulator.trace import save_trace
from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.ir import OpKind

MODELS = ("packet", "analytic", "compute-only")


def comparable(data: dict[str, object]) -> dict[str, object]:
    """A replay's JSON without wall-clock seconds."""
    data.pop("lowering_s")
    for m in data["models"].values():  # type: ignore[attr-defined]
        m.pop("wall_s")
    return data


@pytest.fixture(scope="module")
def halo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = MotifSpec("halo3d", n_ranks=64, iterations=3, compute_s=2e-5, allreduce_every=1)
    path = tmp_path_factory.mktemp("stream") / "halo.h5"
    save_trace(synthesize(spec), path)
    return path


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["replay", *args, "--json", "-q"]) == 0
    return comparable(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("window_rows", ["1", "7", "256"])
def test_cli_stream_gives_the_in_memory_replay(
    halo_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], window_rows: str
) -> None:
    models = ["--model", ",".join(MODELS), "--threads", "2"]
    whole = cli_json(capsys, str(halo_file), *models, "--stream", "off")
    streamed = cli_json(
        capsys,
        str(halo_file),
        *models,
        "--stream",
        "on",
        "--scratch",
        str(tmp_path),
        "--window-rows",
        window_rows,
    )
    assert streamed == whole
    assert list(tmp_path.iterdir()) == []  # the program file is deleted


def test_auto_streams_large_traces_only(
    halo_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = replay_stream.replay_file_streamed

    def spy(path: Path, *args: object, **kwargs: object) -> object:
        calls.append(Path(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_stream, "replay_file_streamed", spy)
    assert main(["replay", str(halo_file), "-q", "--scratch", str(tmp_path)]) == 0
    assert calls == []  # 10,368 operations: in memory
    monkeypatch.setattr(stream_default, "STREAM_MIN_OPS", 10_000)
    assert main(["replay", str(halo_file), "-q", "--scratch", str(tmp_path)]) == 0
    assert calls == [halo_file]
    assert stream_default.stream_by_default(10_000)
    assert not stream_default.stream_by_default(9_999)
    assert stream_default.stream_by_default(9_000, n_vcounts=1_000)  # count lists count


@needs_traces
def test_text_trace_streams_from_its_cache_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(tmp_path / "cache"))
    trace = str(TRACES / "ti_hpcg_16r")
    models = ["--model", "packet,analytic"]
    whole = cli_json(capsys, trace, *models, "--stream", "off")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    streamed = cli_json(capsys, trace, *models, "--stream", "on", "--scratch", str(scratch))
    assert streamed == whole
    assert list(scratch.iterdir()) == []


def test_stream_on_needs_a_trace_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text trace whose cache entry cannot be written cannot stream: one-line error."""
    ti = tmp_path / "pp.txt"
    ti.write_text("0 init\n1 init\n0 send 1 0 8\n1 recv 0 0 8\n0 finalize\n1 finalize\n")
    cache = tmp_path / "cache"
    cache.write_text("not a folder")  # the cache entry cannot be written
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(cache))
    assert main(["replay", str(ti), "-q", "--stream", "on"]) != 0
    err = capsys.readouterr().err
    assert "needs the trace" in err and "MPIUQ_CACHE_DIR" in err and "Traceback" not in err
    assert main(["replay", str(ti), "-q", "--stream", "auto"]) == 0  # small: in memory


def test_bad_stream_settings(
    halo_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, message in (
        (["--stream", "yes"], "invalid choice: 'yes'"),
        (["--window-rows", "0"], "--window-rows: 0 is out of range"),
        (["--window-rows", "nan"], "--window-rows: 'nan' is not a whole number"),
    ):
        with pytest.raises(SystemExit):
            main(["replay", str(halo_file), "-q", *args])
        assert message in capsys.readouterr().err
    missing = tmp_path / "nowhere"
    assert main(["replay", str(halo_file), "-q", "--stream", "on", "--scratch", str(missing)])
    err = capsys.readouterr().err
    assert f"scratch folder {missing} does not exist" in err and "Traceback" not in err


def test_scratch_without_room_is_refused_before_lowering(
    halo_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        replay_stream.shutil, "disk_usage", lambda _p: usage._replace(free=1_000_000)
    )
    with pytest.raises(
        SettingError, match=r"1\.0 MB free: .* 10,560 trace operations needs at least 1\.1 MB"
    ):
        replay_file_streamed(halo_file, scratch_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_deadlock_is_reported_as_in_memory_and_the_file_deleted(tmp_path: Path) -> None:
    b = TraceBuilder("test", "<hand>", 2)
    recv = b.call_id("MPI_Recv")
    b.add(0, OpKind.RECV, recv, peer=1, bytes_recv=8)
    b.add(1, OpKind.RECV, recv, peer=0, bytes_recv=8)
    path = tmp_path / "dead.h5"
    trace = b.build()
    save_trace(trace, path)
    setup = ReplaySetup(models=("analytic",))
    with pytest.raises(ReplayDeadlockError) as whole:
        replay(trace, SimParams(), setup)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(ReplayDeadlockError) as streamed:
        replay_file_streamed(path, SimParams(), setup, scratch_dir=scratch)
    assert str(streamed.value) == str(whole.value)
    assert list(scratch.iterdir()) == []


def test_origin_of_file_is_the_traces(halo_file: Path) -> None:
    from mpiuq.simulator.replay.run import TraceOrigin
    from mpiuq.simulator.trace import load_trace_h5

    a, b = origin_of_file(halo_file), TraceOrigin.of(load_trace_h5(halo_file))
    assert (a.source, a.format, a.n_ranks, a.n_ops, a.call_names) == (
        b.source,
        b.format,
        b.n_ranks,
        b.n_ops,
        b.call_names,
    )
    assert (a.rank_ptr == b.rank_ptr).all() and (a.call == b.call).all()


def test_auto_on_a_small_cached_trace_imports_no_h5py(tmp_path: Path) -> None:
    """The auto-stream check answers a small cache entry from its size: the in-memory
    replay of a cached text trace stays without h5py (10 MiB, 40 ms)."""
    import os
    import subprocess
    import sys

    ti = tmp_path / "pp.txt"
    ti.write_text("0 init\n1 init\n0 send 1 0 8\n1 recv 0 0 8\n0 finalize\n1 finalize\n")
    env = os.environ | {"MPIUQ_CACHE_DIR": str(tmp_path / "cache")}
    code = (
        "import sys; from mpiuq.main import main; "
        f"rc = main(['replay', {str(ti)!r}, '-q']); "
        "print(rc, 'h5py' in sys.modules)"
    )
    outs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()[-2:]
        for _ in range(2)
    ]
    assert outs[1] == ["0", "False"]  # the second run reads the cache entry


def test_stream_flags_with_posterior_draws_are_refused(
    halo_file: Path, capsys: pytest.CaptureFixture[str], committed_results: Path
) -> None:
    """Draws replay one program in memory: a stream flag there is refused, not ignored."""
    results = committed_results / "stampede-ib"
    for flags, named in (
        (["--stream", "on"], "--stream on"),
        (["--scratch", "/tmp", "--window-rows", "8"], "--scratch, --window-rows"),
    ):
        assert main(["replay", str(halo_file), "-q", "--params", str(results), *flags]) != 0
        err = capsys.readouterr().err
        assert f"{named} applies to a point replay" in err and "Traceback" not in err
