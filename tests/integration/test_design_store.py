"""Design stores: created and consolidated atomically, results journalled, damage detected,
write failures stop the run at once, mismatches say what differs, --restart starts over."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from mpiuq.main import main
from mpiuq.surrogate import (
    DesignMismatchError,
    ParameterBox,
    design_status,
    load_design_outputs,
    random_design,
    run_design,
)
from mpiuq.surrogate.design import design_store as store_module
from mpiuq.surrogate.design.design_store import (
    CONSOLIDATE_PHASES,
    CREATE_PHASES,
    design_fingerprint,
)
from mpiuq.surrogate.errors import StoreError, StoreWriteError
from mpiuq.surrogate.store.hdf5_checksum import HDF5_SIGNATURE, MAGIC, USERBLOCK_BYTES, sign
from mpiuq.surrogate.store.store_journal import journal_path, read_journal

BOX = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (-2.0, 2.0)})
DESIGN = random_design(BOX, 60, 7)


def model(x: np.ndarray) -> np.ndarray:
    """A pointwise model with two outputs whose bits depend on every input bit."""
    return np.stack([np.sin(x[:, 0] * 3.1) + x[:, 1] ** 3, np.exp(x[:, 0] - x[:, 1])], axis=1)


REFERENCE = model(DESIGN)


def finish(store: Path, chunk_size: int = 8) -> np.ndarray:
    for _ in run_design(model, DESIGN, store, chunk_size=chunk_size, model_id="m"):
        pass
    return load_design_outputs(store)[1]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))


def interrupt(store: Path, n_done: int, chunk_size: int = 8) -> None:
    gen = run_design(model, DESIGN, store, chunk_size=chunk_size, model_id="m")
    for report in gen:
        if report.n_done >= n_done:
            break
    gen.close()


def test_finished_store_is_signed_consolidated_and_has_no_journal(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    assert same_bits(finish(store), REFERENCE)
    assert not journal_path(store).exists()
    head = store.read_bytes()[: USERBLOCK_BYTES + 8]
    assert head.startswith(MAGIC) and head[USERBLOCK_BYTES:] == HDF5_SIGNATURE
    with h5py.File(store, "r") as f:
        assert set(f) == {"design", "done", "outputs", "output_names"}
        assert "outputs_sha256" in f.attrs
    assert list(tmp_path.iterdir()) == [store]  # no temporary files left


def test_interrupted_run_keeps_results_in_the_journal(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    interrupt(store, 24)
    assert design_status(store) == (24, 60)
    with h5py.File(store, "r") as f:  # the HDF5 file itself was never rewritten
        assert "outputs" not in f and not f["done"][()].any()
    content = read_journal(journal_path(store))
    assert sorted(content.indices.tolist()) == list(range(24))
    assert same_bits(content.outputs, REFERENCE[content.indices])
    assert same_bits(finish(store), REFERENCE)


@pytest.mark.parametrize("cut", [1, 5, 12, 13, 100, -1])
def test_a_record_cut_at_any_byte_is_dropped_and_recomputed(tmp_path: Path, cut: int) -> None:
    store = tmp_path / "s.h5"
    interrupt(store, 32)
    journal = journal_path(store)
    data = journal.read_bytes()
    record = 12 + 8 * 8 * 3 + 4  # magic and count, 8 indices, 8 x 2 outputs, CRC
    journal.write_bytes(data[: len(data) - record + (cut % record)])
    assert design_status(store) == (24, 60)
    assert same_bits(finish(store), REFERENCE)


def test_garbage_after_the_journal_and_bad_checksums_are_ignored(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    interrupt(store, 16)
    journal = journal_path(store)
    data = bytearray(journal.read_bytes())
    data[-3] ^= 0x40  # the last record's CRC no longer matches
    journal.write_bytes(bytes(data) + b"REC1garbage")
    assert design_status(store) == (8, 60)
    assert same_bits(finish(store), REFERENCE)


@pytest.mark.parametrize("phase", [*CREATE_PHASES, *CONSOLIDATE_PHASES])
def test_a_crash_in_any_phase_of_writing_the_store_resumes_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phase: str
) -> None:
    store = tmp_path / "s.h5"

    def crash(reached: str) -> None:
        if reached == phase:
            raise KeyboardInterrupt(phase)

    monkeypatch.setattr(store_module, "phase_hook", crash)
    with pytest.raises(KeyboardInterrupt):
        finish(store)
    monkeypatch.setattr(store_module, "phase_hook", None)
    if store.exists():
        design_status(store)  # readable whatever the moment
    assert same_bits(finish(store), REFERENCE)
    assert not journal_path(store).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]


def test_unreadable_store_names_the_file_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.h5"
    store.write_bytes(b"\x00" * 100)
    with pytest.raises(StoreError, match=r"s.h5 is not a readable design store .* --restart"):
        finish(store)
    design = tmp_path / "d.csv"
    design.write_text("a,b\n0.5,1.0\n")
    argv = ["surrogate", "run", "--model", f"{Path(__file__)}:model", "--design", str(design)]
    argv += ["--store", str(store), "--outputs", str(tmp_path / "o.csv"), "--quiet"]
    assert main(argv) == 2
    assert "is not a readable design store" in capsys.readouterr().err
    assert main([*argv, "--restart"]) == 0
    assert (tmp_path / "o.csv").exists()


def test_damaged_outputs_are_detected_even_when_the_file_checksum_is_redone(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    finish(store)
    with h5py.File(store, "r+") as f:
        f["outputs"][3, 1] = 0.0
    sign(store)
    with pytest.raises(StoreError, match="outputs do not match their checksum"):
        load_design_outputs(store)
    with h5py.File(store, "r+") as f:
        f.attrs["model_id"] = "other"
    sign(store)
    with pytest.raises(StoreError, match="does not match its fingerprint"):
        load_design_outputs(store)


def test_mismatch_message_says_what_differs(tmp_path: Path) -> None:
    store = tmp_path / "s.h5"
    finish(store)
    shifted = DESIGN.copy()
    shifted[:, 1] *= 0.5
    with pytest.raises(DesignMismatchError) as info:
        list(run_design(model, shifted, store, model_id="m"))
    text = str(info.value)
    assert "60 of the 60 points of the design of shape (60, 2) differ, first point 0" in text
    assert "column 1 spans" in text and "column 0" not in text and "--restart" in text
    with pytest.raises(DesignMismatchError, match=r"stored model 'm', requested model 'm2'"):
        list(run_design(model, DESIGN, store, model_id="m2"))
    with pytest.raises(DesignMismatchError, match=r"stored output names \('y0', 'y1'\)"):
        list(run_design(model, DESIGN, store, model_id="m", output_names=("p", "q")))


def test_restart_discards_a_mismatched_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    design = tmp_path / "d.csv"
    assert (
        main(
            [
                "surrogate",
                "design",
                "--param",
                "a=0:1",
                "--param",
                "b=-2:2",
                "--random",
                "30",
                "--csv",
                str(design),
            ]
        )
        == 0
    )
    other = tmp_path / "other.csv"
    assert (
        main(
            [
                "surrogate",
                "design",
                "--param",
                "a=0:1",
                "--param",
                "b=-2:2",
                "--random",
                "30",
                "--seed",
                "1",
                "--csv",
                str(other),
            ]
        )
        == 0
    )
    argv = [
        "surrogate",
        "run",
        "--model",
        f"{Path(__file__)}:model",
        "--store",
        str(tmp_path / "s.h5"),
    ]
    argv += ["--outputs", str(tmp_path / "o.csv"), "--quiet"]
    assert main([*argv, "--design", str(design)]) == 0
    capsys.readouterr()
    assert main([*argv, "--design", str(other)]) == 2
    err = capsys.readouterr().err
    assert "holds a run of another design or model" in err and "first point 0: stored [" in err
    assert main([*argv, "--design", str(other), "--restart"]) == 0
    assert "30 computed now" in capsys.readouterr().out


def test_stores_without_a_checksum_are_refused_naming_the_file(tmp_path: Path) -> None:
    """A store of the earlier layout (no user block, outputs in place) cannot be verified:
    it is refused with the fix, never resumed unchecked."""
    store = tmp_path / "old.h5"
    with h5py.File(store, "w") as f:  # the earlier layout: no user block, outputs in place
        f.attrs["format"] = "mpiuq.surrogate.design-run"
        f.attrs["fingerprint"] = design_fingerprint(DESIGN, "m")
        f.attrs["model_id"] = "m"
        f.create_dataset("design", data=DESIGN)
        done = np.zeros(60, dtype=bool)
        done[:20] = True
        f.create_dataset("done", data=done)
        out = np.full((60, 2), np.nan)
        out[:20] = REFERENCE[:20]
        f.create_dataset("outputs", data=out, chunks=(60, 2))
        f.create_dataset("output_names", data=np.array(["y0", "y1"], dtype=h5py.string_dtype()))
    with pytest.raises(
        StoreError, match=r"old\.h5 is not a readable design store \(it has no checksum"
    ):
        design_status(store)


WIDE_DESIGN = random_design(BOX, 200, 8)


def wide(x: np.ndarray) -> np.ndarray:
    """Ten outputs per point: the journal grows faster than the store."""
    return np.cos(np.outer(x[:, 0] + x[:, 1], np.arange(1.0, 11.0)))


def test_a_failed_write_stops_the_run_at_once_naming_the_file(tmp_path: Path) -> None:
    """A file-size limit makes the journal's next write fail (EFBIG), as a full disk would."""
    probe = tmp_path / "probe.h5"
    gen = run_design(wide, WIDE_DESIGN, probe, chunk_size=8, model_id=f"{Path(__file__)}:counting")
    next(gen)
    gen.close()
    limit = probe.stat().st_size + 3000  # the store fits, the journal stops after a few records
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_design_store as t
        from mpiuq.main import main
        calls = []
        def counting(x):
            calls.append(x.shape[0])
            return t.wide(x)
        t.counting = counting
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        code = main(sys.argv[1:])
        print("points evaluated", sum(calls))
        sys.exit(code)
        """
    )
    design = tmp_path / "d.csv"
    design.write_text("a,b\n" + "".join(f"{a!r},{b!r}\n" for a, b in WIDE_DESIGN.tolist()))
    store = tmp_path / "s.h5"
    argv = ["surrogate", "run", "--model", f"{Path(__file__)}:counting", "--design", str(design)]
    argv += ["--store", str(store), "--outputs", str(tmp_path / "o.csv"), "--chunk-size", "8"]
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv, "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Exception ignored" not in proc.stderr
    assert f"{journal_path(store)}: writing the results of 8 design points failed" in proc.stderr
    assert (
        "(File too large)" in proc.stderr and "run the same command again to resume" in proc.stderr
    )
    done, total = design_status(store)
    assert total == 200 and 0 < done < 200
    assert f"points evaluated {done + 8}" in proc.stdout  # stopped at the first failed write
    for _ in run_design(
        wide, WIDE_DESIGN, store, chunk_size=8, model_id=f"{Path(__file__)}:counting"
    ):
        pass
    assert same_bits(load_design_outputs(store)[1], wide(WIDE_DESIGN))  # resumes once space is back


def counting(x: np.ndarray) -> np.ndarray:  # replaced in the child process of the test above
    return wide(x)


def test_a_failed_consolidation_keeps_the_journal_and_names_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.h5"
    interrupt(store, 8)
    real_file = h5py.File

    def full_disk(name: object, mode: str = "r", **kwargs: object) -> h5py.File:
        if mode == "w":
            raise OSError(28, "No space left on device")
        return real_file(name, mode, **kwargs)

    monkeypatch.setattr(store_module.h5py, "File", full_disk)
    with pytest.raises(
        StoreWriteError, match=r"s.h5: cannot write the finished design store .*No space"
    ):
        finish(store)
    monkeypatch.setattr(store_module.h5py, "File", real_file)
    assert design_status(store) == (60, 60)  # every result is in the journal
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5", "s.h5.journal"]
    assert same_bits(finish(store), REFERENCE)
