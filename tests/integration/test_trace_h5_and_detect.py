"""Format detection by content and the checks of mpiuq's own HDF5 trace files (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from shared_data import TRACES

from mpiuq.main import main
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.trace import (
    TraceFormatError,
    UnsupportedTraceError,
    detect_format,
    load_trace_h5,
    read_trace,
    save_trace,
)

DATA = TRACES


def _saved(tmp: Path, name: str = "t.h5") -> Path:
    path = tmp / name
    save_trace(synthesize(MotifSpec("halo3d", n_ranks=8, iterations=1)), path)
    return path


def test_synth_output_without_suffix_is_read_back(tmp_path: Path) -> None:
    out = tmp_path / "halo"
    assert (
        main(["trace", "synth", "halo3d", "--ranks", "8", "--iterations", "1", "--out", str(out)])
        == 0
    )
    assert detect_format(out) == "hdf5"
    assert read_trace(out, cache_dir=tmp_path / "cache").n_ranks == 8
    assert main(["trace", "info", str(out), "--no-cache"]) == 0


def test_readme_is_an_unrecognised_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# MPI traces for replay\n\nThe format notes, reader pitfalls ...\n")
    with pytest.raises(UnsupportedTraceError, match="unrecognised format") as info:
        detect_format(readme)
    msg = str(info.value)
    assert "expected an mpiuq HDF5 trace" in msg and "SimGrid TI trace" in msg
    assert "it starts with 'The format notes" in msg
    assert main(["trace", "info", str(readme)]) == 2
    err = capsys.readouterr().err
    assert "unrecognised format" in err and "Traceback" not in err


def test_suffix_is_only_a_hint(tmp_path: Path) -> None:
    fake = tmp_path / "trace.h5"
    fake.write_text("0 init\n0 compute 5\n0 finalize\n")  # TI text with an .h5 name
    assert detect_format(fake) == "ti"
    assert read_trace(fake, use_cache=False).n_ops == 1
    junk = tmp_path / "x.otf2"
    junk.write_bytes(b"\x00\x01\x02 not an anchor")
    with pytest.raises(UnsupportedTraceError, match=r"suffix \.otf2 suggests an OTF2 anchor"):
        detect_format(junk)


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/traces is absent")
@pytest.mark.parametrize(
    ("rel", "fmt"),
    [
        ("otf2_pipit_pingpong_2r", "otf2"),
        ("otf2_pipit_pingpong_2r/traces.otf2", "otf2"),
        ("dumpi_sstmac_testbgp_7r", "dumpi"),
        ("dumpi_sstmac_testbgp_7r/testbgp.meta", "dumpi"),
        ("dumpi_designforward_single_rank/AMG.bin", "dumpi"),
        ("gen_ti_lulesh_8r", "ti"),
        ("ti_lulesh_64r/lulesh_64r.txt", "ti"),
    ],
)
def test_shared_traces_are_recognised(rel: str, fmt: str) -> None:
    assert detect_format(DATA / rel) == fmt


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/traces is absent")
def test_folder_of_single_rank_dumpi_files_says_what_to_open() -> None:
    with pytest.raises(UnsupportedTraceError, match=r"open one \.bin as a partial trace"):
        detect_format(DATA / "dumpi_designforward_single_rank")


def _mutate(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    with h5py.File(path, "r+") as f:
        edit(f)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda f: f.attrs.__delitem__("n_ranks"), "attribute 'n_ranks' is missing"),
        (
            lambda f: f.attrs.__setitem__("n_ranks", np.arange(3)),
            "'n_ranks' is .*expected an integer",
        ),
        (
            lambda f: f.attrs.__setitem__("n_ranks", 2**40),
            r"n_ranks=1099511627776 outside 1\.\.4194304",
        ),
        (lambda f: f.attrs.__setitem__("format_version", "1"), "expected an integer"),
        (lambda f: f.attrs.__setitem__("call_names", "{not json"), "'call_names' is not JSON"),
        (
            lambda f: f.attrs.__setitem__("notes", json.dumps({"a": 1})),
            "'notes' holds dict, expected list",
        ),
        (
            lambda f: f.attrs.__setitem__("unsupported", '{"x": "y"}'),
            "'unsupported' must map names",
        ),
        (lambda f: (f.__delitem__("peer"), f.create_group("peer")), "'peer' is not a dataset"),
        (lambda f: f.__delitem__("tag"), "dataset 'tag' is missing"),
        (
            lambda f: (f.__delitem__("tag2"), f.create_dataset("tag2", data=np.zeros((2, 2)))),
            r"'tag2' has shape \(2, 2\), expected 1-D",
        ),
        (
            lambda f: (
                f.__delitem__("seconds"),
                f.create_dataset("seconds", data=np.array([b"x"] * 3)),
            ),
            "'seconds' has dtype",
        ),
        (
            lambda f: (f.__delitem__("comm"), f.create_dataset("comm", data=np.zeros(3, np.int32))),
            r"'comm' has 3 entries, expected \d+",
        ),
        (
            lambda f: (
                f.__delitem__("vcounts"),
                f.create_dataset("vcounts", shape=(10**8,), dtype=np.int64, chunks=(4096,)),
            ),
            "declares 800000000 bytes but the file stores 0",
        ),
        (
            lambda f: f["peer"].__setitem__(0, 999),
            r"peer=999 outside -3\.\.7",
        ),
        (
            lambda f: f["seconds"].__setitem__(0, 1e300),
            r"seconds=1e\+300 outside 0\.\.1e\+09",
        ),
    ],
)
def test_malformed_h5_trace_names_file_and_problem(tmp_path: Path, edit, match: str) -> None:  # type: ignore[no-untyped-def]
    path = _saved(tmp_path)
    _mutate(path, edit)
    with pytest.raises(TraceFormatError, match=match) as info:
        load_trace_h5(path)
    assert info.value.file == str(path)


def test_not_hdf5_and_truncated_h5(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    data = path.read_bytes()
    cut = tmp_path / "cut.h5"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError) as info:
        load_trace_h5(cut)
    assert info.value.file == str(cut)


def test_save_leaves_no_temporary_file_on_failure(tmp_path: Path) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=1))
    target = tmp_path / "dir_in_the_way"
    target.mkdir()
    (target / "x").write_text("keep")
    with pytest.raises(OSError):
        save_trace(trace, target)  # renaming onto a non-empty directory fails
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir_in_the_way"]
