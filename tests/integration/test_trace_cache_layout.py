"""The parse cache's entries read without h5py (``mpiuq.simulator.trace.cache.layout``).

A cached trace read through its layout equals the same entry read with h5py, column by
column and attribute by attribute; a second read of a text trace imports no h5py; a
layout that does not fit its entry (missing, damaged, stale, pointing outside the file,
another dtype) is ignored and the entry is read with h5py as before, once the layout's
seal and the entry's checksum are verified (a layout missing, damaged or of another
size or version fails that: the cache parses again); a mapped trace that fails
validation is refused naming the entry, and the cache then parses again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from trace_checks import assert_same_trace

from mpiuq.simulator.checksums import ChecksumError, seal_text, unseal_text
from mpiuq.simulator.motifs import MotifSpec, synthesize
from mpiuq.simulator.trace import TraceFormatError, load_trace_h5, read_trace, save_trace
from mpiuq.simulator.trace.cache.layout import layout_path, load_mapped, verify_entry, write_layout
from mpiuq.simulator.trace.ir import Trace

#: A two-rank TI trace with point-to-point messages, a wait and collectives.
TI = (
    "0 init\n1 init\n0 compute 1e9\n0 isend 1 0 3 0\n1 irecv 0 0 3 0\n0 wait 0 1 0\n"
    "1 wait 0 1 0\n0 allreduce 2 0 0\n1 allreduce 2 0 0\n0 finalize\n1 finalize\n"
)


def _entry(tmp_path: Path) -> tuple[Trace, Path]:
    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=3))
    entry = tmp_path / "entry.h5"
    save_trace(trace, entry, compress=False)
    write_layout(entry, trace)
    return trace, entry


def test_a_mapped_entry_equals_the_entry_read_with_h5py(tmp_path: Path) -> None:
    trace, entry = _entry(tmp_path)
    mapped = load_mapped(entry)
    assert mapped is not None
    assert_same_trace(mapped, load_trace_h5(entry))
    assert_same_trace(mapped, trace)
    assert isinstance(mapped.seconds.base, np.memmap)
    mapped.seconds[0] = 99.0  # copy on write: the entry keeps its value
    assert load_trace_h5(entry).seconds[0] == trace.seconds[0]


def _cached_text_trace(tmp_path: Path) -> tuple[Path, Path, Trace, Path]:
    """A TI trace read once into a cache: its path, the cache, the trace, the entry."""
    src = tmp_path / "trace.txt"
    src.write_text(TI)
    cache = tmp_path / "cache"
    first = read_trace(src, cache_dir=cache)
    (entry,) = cache.glob("*.h5")
    return src, cache, first, entry


def test_a_second_read_of_a_text_trace_needs_no_h5py(tmp_path: Path) -> None:
    src, cache, first, entry = _cached_text_trace(tmp_path)
    assert layout_path(entry).is_file()
    code = (
        "import sys, json\n"
        "from mpiuq.simulator.trace import read_trace\n"
        f"t = read_trace({str(src)!r}, cache_dir={str(cache)!r})\n"
        "print(json.dumps(['h5py' in sys.modules, t.n_ops, t.kind.tolist()]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr
    h5py_loaded, n_ops, kind = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not h5py_loaded and n_ops == first.n_ops and kind == first.kind.tolist()


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    """Change a layout and seal it again (as a program editing it would)."""
    doc = json.loads(unseal_text(path.read_text(), path))
    change(doc)
    path.write_text(seal_text(json.dumps(doc)))


@pytest.mark.parametrize(
    "damage",
    [
        lambda doc: doc["columns"]["seconds"].__setitem__(0, 10**9),  # beyond the file
        lambda doc: doc["columns"]["seconds"].__setitem__(0, -8),
        lambda doc: doc["columns"]["peer"].__setitem__(1, "<i8"),  # another dtype
        lambda doc: doc["columns"]["kind"].__setitem__(2, 3),  # another length
        lambda doc: doc["columns"].pop("tag"),
        lambda doc: doc["attrs"].update(n_ranks="8"),
        lambda doc: doc["attrs"].update(n_ranks=0),
        lambda doc: doc["attrs"].update(call_names=[1, 2]),
        lambda doc: doc["attrs"].pop("notes"),
    ],
)
def test_a_layout_that_does_not_fit_its_entry_is_ignored(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    _, entry = _entry(tmp_path)
    _edit(layout_path(entry), damage)
    assert load_mapped(entry) is None  # the caller reads the entry with h5py


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda doc: doc.update(size=doc["size"] + 1), r"holds \d+ bytes, expected"),
        (lambda doc: doc.update(chunks="0" * len(doc["chunks"])), r"does not match its checksum"),
        (lambda doc: doc.update(format_version=0), r"is not a version \d+ layout"),
    ],
)
def test_a_layout_of_another_entry_fails_verification(tmp_path: Path, damage, match: str) -> None:  # type: ignore[no-untyped-def]
    _, entry = _entry(tmp_path)
    _edit(layout_path(entry), damage)
    with pytest.raises(ChecksumError, match=match):
        load_mapped(entry)


def test_a_missing_or_unreadable_layout_fails_verification_and_is_parsed_again(
    tmp_path: Path,
) -> None:
    src, cache, first, entry = _cached_text_trace(tmp_path)
    layout_path(entry).write_text("{not json")
    with pytest.raises(ChecksumError, match="has no checksum line"):
        verify_entry(entry)
    assert_same_trace(read_trace(src, cache_dir=cache), first)  # the entry went, parsed again
    layout_path(entry).unlink()
    with pytest.raises(ChecksumError, match="is missing"):
        verify_entry(entry)
    assert_same_trace(read_trace(src, cache_dir=cache), first)
    verify_entry(entry)  # stored again, sound


def test_a_compressed_file_gets_no_layout(tmp_path: Path) -> None:
    trace = synthesize(MotifSpec("halo3d", n_ranks=8, iterations=20))
    entry = tmp_path / "gz.h5"
    save_trace(trace, entry, compress=True)
    write_layout(entry, trace)
    assert not layout_path(entry).exists()


def test_a_mapped_entry_failing_validation_is_refused_then_parsed_again(tmp_path: Path) -> None:
    src, cache, first, entry = _cached_text_trace(tmp_path)
    # point the layout's rank_ptr at the seconds column: a layout that fits the file, a
    # trace that does not validate
    _edit(
        layout_path(entry),
        lambda doc: (
            doc["attrs"].update(n_ranks=2)
            or doc["columns"]["rank_ptr"].__setitem__(0, doc["columns"]["seconds"][0])
        ),
    )
    with pytest.raises(TraceFormatError, match=r"entry|rank_ptr") as info:
        load_mapped(entry)
    assert str(entry) in str(info.value)
    again = read_trace(src, cache_dir=cache)  # the damaged entry goes, the trace is parsed
    assert_same_trace(again, first)
    assert load_mapped(next(cache.glob("*.h5"))) is not None
