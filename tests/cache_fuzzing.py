"""Single-byte flips and truncations of every file of a trace's cache entries.

Shared by ``tests/integration/test_cache_integrity.py`` and ``experiments/fuzz/fuzz_cache.py``. A
replay of a trace leaves two entries in the cache folder: the parse cache's
``<key>.h5`` with its ``<key>.h5.layout.json``, and the program cache's
``<key>-<program key>.mpiuqprog/`` folder (:mod:`mpiuq.simulator.program.cache`). For a
damaged copy of one file (one byte XOR 0xFF, or the file cut to a shorter length), the
reader of that entry must refuse it (``detected``: the caches then delete and rebuild the
entry) or give exactly the undamaged content (``same``); anything else is ``silent``
(a different trace or program accepted). :func:`replay_outcome` runs the whole ``mpiuq
replay`` on a damaged cache and compares its results with the undamaged replay's:
``rebuilt`` (same results, the entry written again), ``silent`` (other results) or
``deadlock`` (a false deadlock blamed on the trace).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.simulator.checksums import ChecksumError, verify_manifest
from mpiuq.simulator.lowering.lower import LoweringOptions
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.cache import load_cached_program, program_entry
from mpiuq.simulator.program.file import ProgramFileError
from mpiuq.simulator.replay.run import ReplaySetup
from mpiuq.simulator.trace.cache.layout import load_mapped, verify_entry
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.ir import AUX_COLUMNS, OP_COLUMNS, Trace
from mpiuq.simulator.trace.read import locate_trace

#: A small SimGrid TI trace (4 ranks) with what a lowered program holds: nonblocking
#: point-to-point with a wildcard receive, waits, a reduction (combine steps), a
#: broadcast, a barrier, compute.
SMALL_TI = """0 init
1 init
2 init
3 init
0 compute 1000
1 compute 2000
2 compute 1500
3 compute 500
0 isend 1 5 100 1
1 irecv -333 -444 100 1
1 wait -333 1 -444
0 wait 0 1 5
2 send 3 7 4096 1
3 recv 2 7 4096 1
0 allreduce 64 10 1
1 allreduce 64 10 1
2 allreduce 64 10 1
3 allreduce 64 10 1
0 bcast 8192 0 1
1 bcast 8192 0 1
2 bcast 8192 0 1
3 bcast 8192 0 1
0 barrier
1 barrier
2 barrier
3 barrier
0 finalize
1 finalize
2 finalize
3 finalize
"""

#: The replay options of :func:`replay_outcome` (and of the entries it fills).
REPLAY_ARGS = ("--model", "analytic", "--quiet", "--json", "--stream", "off")


@dataclass(frozen=True)
class CacheEntries:
    """The cache entries of one trace and the undamaged content they must give back."""

    trace_path: Path
    cache_dir: Path
    trace_entry: Path
    program_dir: Path
    options: LoweringOptions
    trace: Trace
    reference: dict[str, Any]
    program_arrays: dict[str, np.ndarray]

    def files(self) -> list[Path]:
        """Every file of both entries."""
        layout = self.trace_entry.with_name(self.trace_entry.name + ".layout.json")
        return [self.trace_entry, layout, *sorted(self.program_dir.iterdir())]


@contextlib.contextmanager
def cache_env(cache_dir: Path) -> Iterator[None]:
    """``MPIUQ_CACHE_DIR`` set to ``cache_dir`` for the block."""
    old = os.environ.get("MPIUQ_CACHE_DIR")
    os.environ["MPIUQ_CACHE_DIR"] = str(cache_dir)
    try:
        yield
    finally:
        if old is None:
            del os.environ["MPIUQ_CACHE_DIR"]
        else:
            os.environ["MPIUQ_CACHE_DIR"] = old


def run_replay(trace_path: Path, cache_dir: Path) -> tuple[int, dict[str, Any] | None, str]:
    """``mpiuq replay TRACE`` in this process with ``cache_dir``: exit code, the JSON's
    model results (without timings), stderr."""
    from mpiuq.main import main

    out, err = io.StringIO(), io.StringIO()
    with cache_env(cache_dir), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(trace_path), *REPLAY_ARGS])
    if code != 0:
        return code, None, err.getvalue()
    doc = json.loads(out.getvalue())
    models = {
        name: {k: v for k, v in m.items() if k not in ("wall_s", "events_per_s")}
        for name, m in doc["models"].items()
    }
    return code, {"models": models, "trace": doc["trace"]}, err.getvalue()


def make_entries(trace_path: Path, cache_dir: Path) -> CacheEntries:
    """Replay ``trace_path`` once (filling both entries in ``cache_dir``) and record what
    the entries hold."""
    code, reference, err = run_replay(trace_path, cache_dir)
    assert code == 0 and reference is not None, err
    where = locate_trace(trace_path, cache_dir=cache_dir)
    assert where.entry is not None and where.entry.is_file()
    setup = ReplaySetup(models=("analytic",))
    options = setup.lowering_options(SimParams())
    program_dir = program_entry(where.entry, options)
    assert program_dir.is_dir(), f"no program entry in {cache_dir}"
    trace = load_mapped(where.entry)
    assert trace is not None
    cached = load_cached_program(program_dir, where.entry.name.removesuffix(".h5"), options)
    return CacheEntries(
        trace_path,
        cache_dir,
        where.entry,
        program_dir,
        options,
        _copy_trace(trace),
        reference,
        _program_arrays(cached),
    )


def small_entries(folder: Path) -> CacheEntries:
    """:func:`make_entries` of :data:`SMALL_TI`, written in ``folder`` (cache in ``folder/cache``)."""
    trace = folder / "small_ti.txt"
    trace.write_text(SMALL_TI)
    return make_entries(trace, folder / "cache")


def _copy_trace(trace: Trace) -> Trace:
    """``trace`` with its columns copied out of the entry's mapping."""
    import dataclasses

    cols = {n: np.array(getattr(trace, n)) for n in (*OP_COLUMNS, *AUX_COLUMNS)}
    return dataclasses.replace(trace, **cols)


def _program_arrays(cached: Any) -> dict[str, np.ndarray]:
    low, origin = cached.lowered, cached.origin
    p = low.program
    return {
        "ops": np.array(p.ops),
        "nbytes": np.array(p.nbytes),
        "rank_ptr": np.array(p.rank_ptr),
        "wait_list": np.array(p.wait_list),
        "row_ptr": np.array(low.row_ptr),
        "reduce_rows": np.array(low.reduce_rows),
        "reduce_bytes": np.array(low.reduce_bytes),
        "trace_rank_ptr": np.array(origin.rank_ptr),
        "trace_call": np.array(origin.call),
        "meta": np.array([p.n_requests, p.n_marks, origin.n_ops, origin.n_ranks], dtype=np.int64),
        "names": np.array([*p.call_names, "|", *origin.call_names, origin.source, origin.format]),
        "facts": np.array(
            [
                json.dumps(low.collectives, sort_keys=True),
                json.dumps(low.algorithms, sort_keys=True),
            ]
        ),
    }


def _same_trace(a: Trace, b: Trace) -> bool:
    if (a.format, a.source, a.n_ranks, a.n_requests, a.call_names, a.notes) != (
        b.format,
        b.source,
        b.n_ranks,
        b.n_requests,
        b.call_names,
        b.notes,
    ) or a.unsupported != b.unsupported:
        return False
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in (*OP_COLUMNS, *AUX_COLUMNS))


def read_outcome(entries: CacheEntries, file: Path) -> str:
    """How the reader of ``file``'s entry takes its present (damaged) content:
    ``detected``, ``same`` or ``silent``."""
    if file.parent == entries.program_dir:
        try:
            got = load_cached_program(
                entries.program_dir, entries.trace_entry.name.removesuffix(".h5"), entries.options
            )
        except ProgramFileError:
            return "detected"
        arrays = _program_arrays(got)
        same = all(np.array_equal(arrays[k], v) for k, v in entries.program_arrays.items())
        return "same" if same else "silent"
    try:
        trace = load_mapped(entries.trace_entry, verify_entry(entries.trace_entry))
    except (ChecksumError, TraceFormatError):
        return "detected"
    if trace is None:  # the verified entry would be read with h5py: equally checked
        from mpiuq.simulator.trace.cache.h5_reader import load_trace_h5

        try:
            trace = load_trace_h5(entries.trace_entry)
        except TraceFormatError:
            return "detected"
    return "same" if _same_trace(trace, entries.trace) else "silent"


def verify_outcome(entries: CacheEntries, file: Path) -> str:
    """:func:`read_outcome`, asking first only the entry's verify step (what the caches
    run before anything is read): ``detected`` if it refuses the entry, otherwise what
    the whole reader gives. A damaged entry is refused there (the reader would raise the
    same error), so the sweep need not load and compare every refused case."""
    try:
        if file.parent == entries.program_dir:
            verify_manifest(entries.program_dir)
        else:
            verify_entry(entries.trace_entry)
    except ChecksumError:
        return "detected"
    return read_outcome(entries, file)


def flipped(data: bytes, pos: int) -> bytes:
    """``data`` with byte ``pos`` XOR 0xFF."""
    b = bytearray(data)
    b[pos] ^= 0xFF
    return bytes(b)


def damage_cases(size: int, limit: int | None) -> list[int]:
    """Byte positions (flips) or lengths (truncations) to try in a file of ``size`` bytes:
    all of them, or at most ``limit`` (every byte of the first and last 4 KiB, then evenly
    spaced ones)."""
    if limit is None or size <= limit:
        return list(range(size))
    edge = min(4096, limit // 4)
    picked = set(range(min(edge, size))) | set(range(max(0, size - edge), size))
    rest = max(limit - len(picked), 0)
    picked |= {int(x) for x in np.linspace(0, size - 1, rest)}
    return sorted(picked)


def sweep_file(
    entries: CacheEntries, file: Path, limit: int | None = None, verify_first: bool = False
) -> dict[str, dict[str, int]]:
    """Every flip and truncation of ``file`` (or ``limit`` of each): outcome counts
    ``{"flip": {...}, "truncation": {...}}``. The file is restored afterwards.

    ``verify_first``: classify with :func:`verify_outcome` (the verify step, then the
    whole reader only if it passes) instead of :func:`read_outcome`. Cuts are made from
    the longest to the shortest, so the file is not written back between them.
    """
    outcome = verify_outcome if verify_first else read_outcome
    original = file.read_bytes()
    counts: dict[str, dict[str, int]] = {
        "flip": {"detected": 0, "same": 0, "silent": 0},
        "truncation": {"detected": 0, "same": 0, "silent": 0},
    }
    try:  # changed in place (no rewrite of the whole file per case)
        with open(file, "r+b") as f:
            for pos in damage_cases(len(original), limit):
                f.seek(pos)
                f.write(bytes([original[pos] ^ 0xFF]))
                f.flush()
                counts["flip"][outcome(entries, file)] += 1
                f.seek(pos)
                f.write(original[pos : pos + 1])
                f.flush()
            for length in reversed(damage_cases(len(original), limit)):
                f.truncate(length)
                f.flush()
                counts["truncation"][outcome(entries, file)] += 1
    finally:
        if file.read_bytes() != original:
            file.write_bytes(original)
    return counts


def replay_outcome(entries: CacheEntries, file: Path, damage: bytes) -> str:
    """Write ``damage`` as ``file``, run the whole replay on the damaged cache (a copy of
    the entries), and classify: ``rebuilt`` (same results, entry written again),
    ``silent``, ``deadlock`` or ``failed`` (any other error)."""
    work = entries.cache_dir.parent / (entries.cache_dir.name + "-replay")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(entries.cache_dir, work)
    program_dir = work / entries.program_dir.name
    try:
        rel = file.relative_to(entries.cache_dir)
        (work / rel).write_bytes(damage)
        if file.parent != entries.program_dir:  # the trace entry is read only without a
            shutil.rmtree(program_dir)  # program entry: make the replay read it
        code, result, err = run_replay(entries.trace_path, work)
        if code != 0:
            return "deadlock" if "deadlock" in err else "failed"
        if result != entries.reference:
            return "silent"
        try:  # the damaged entry was replaced by a sound one (a later run reads that)
            verify_entry(work / entries.trace_entry.name)
            verify_manifest(program_dir)
        except ChecksumError:
            return "failed"
        return "rebuilt"
    finally:
        shutil.rmtree(work, ignore_errors=True)
