"""The lowered-program cache: a second replay of a trace neither reads nor lowers it.

Beside a trace's entry in the parse cache (``<cache>/<trace key>.h5``, see
:mod:`mpiuq.simulator.trace.cache.store`), :func:`save_cached_program` stores the trace's
lowered program as a program file (:mod:`mpiuq.simulator.program.file`, format
version 1) in ``<cache>/<trace key>-<program key>.mpiuqprog``, with three more members:

``trace_rank_ptr.npy``, ``trace_call.npy``
    int64 ``(n_ranks + 1,)`` and int16 ``(n_trace_ops,)``: the trace's rank offsets and
    MPI calls, which name a trace operation in a deadlock or an unmatched message
    (:class:`~mpiuq.simulator.replay.run.TraceOrigin`; 2 B per trace operation).
``cache.json``
    ``{"cache_version", "key", "trace_key", "compute_scale", "algorithms",
    "sources", "reduce_rate_Bps"}``: what the program key hashes, and the reduction
    rate the combine steps' seconds were written with (``null``: free reductions, an
    infinite rate, as ``--like simgrid`` sets).
``checksums.json``
    the size and content digest of every other member, sealed by its own digest
    (:mod:`mpiuq.simulator.checksums`): an entry is verified whole (smallest member first) before
    anything of it is used, so a damaged byte anywhere (a column, the wait list, a
    metadata file) makes the entry unusable instead of a wrong replay or a false deadlock.

The **program key** hashes the trace key (the trace's path, its files' sizes and
modification times, the reader options), the lowering options that shape the program
(``compute_scale`` and the collective ``algorithms``), a digest of the lowering's
sources (:data:`LOWERING_SOURCES`) and :data:`CACHE_VERSION`. The reduction rate
(by default the parameters' memory bandwidth) is not in the key: only the seconds of
the reductions' combine steps depend on it, and :func:`load_cached_program` rewrites
them as ``reduce_bytes / rate``, the lowering's own division, so a replay under other
parameters reuses the program with bit-identical results. An edited trace has another
trace key, hence another program entry; older entries are left in the cache like the
trace entries (delete the folder to reclaim the space).

A loaded program's rows are memory-mapped copy-on-write from the entry (no copy; the
reduction-rate rewrite stays in the process), and the program is validated as the
lowering's is. An entry is written under a temporary name and renamed when complete,
so a killed run leaves no half entry under the final name. :func:`find_cached_program`
treats an entry it cannot use (a member that fails its checksum, a missing member,
truncated column, malformed ``meta.json`` or ``cache.json``, another key, an inconsistent
program) as absent and deletes it: the trace is then read and lowered, and the entry written again. Only
:func:`load_cached_program`, for a caller naming an entry, raises
:class:`~mpiuq.simulator.program.file.ProgramFileError`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.simulator.checksums import ChecksumError, verify_manifest, write_manifest
from mpiuq.simulator.codes import OP_COMPUTE
from mpiuq.simulator.errors import ProgramError
from mpiuq.simulator.lowering.lower import Lowered, LoweringOptions
from mpiuq.simulator.program.file import (
    FORMAT_VERSION,
    SUFFIX,
    ProgramFile,
    ProgramFileError,
    TraceFacts,
    read_member,
    write_program_file,
)
from mpiuq.simulator.program.table import Program
from mpiuq.simulator.replay.run import TraceOrigin
from mpiuq.simulator.runtime.watch import run_pair

__all__ = [
    "CACHE_VERSION",
    "ENTRY_BYTES_PER_ROW",
    "LOWERING_SOURCES",
    "CachedProgram",
    "find_cached_program",
    "load_cached_program",
    "program_entry",
    "program_key",
    "save_cached_program",
]

#: Version of the cache entry (the program file's version is hashed in too); 2: with
#: ``checksums.json``.
CACHE_VERSION = 2

#: Source files, relative to the ``simulator`` folder, whose code shapes a lowered
#: program or the entry's format: a change in any of them makes every entry stale.
LOWERING_SOURCES: tuple[str, ...] = (
    "lowering/*.py",
    "collectives/*.py",
    "codes.py",
    "parameters.py",
    "regimes.py",
    "program/*.py",
    "trace/ir.py",
    "checksums.py",
)

#: Bytes of an entry per program row (32 B of the operation table, 8 B of sizes or
#: seconds, the wait list and row map: about 45 B measured on the shared traces).
ENTRY_BYTES_PER_ROW = 48

_HERE = Path(__file__).resolve().parents[1]
#: Temporary entries (``<entry>.part<pid>``) older than this are leftovers of killed runs.
_STALE_PART_S = 3600.0

IntArray = npt.NDArray[np.int64]


def _sources_digest() -> str:
    """SHA-256 of the files of :data:`LOWERING_SOURCES` (computed once per process)."""
    from mpiuq.simulator.runtime.sources import digest_of

    return digest_of(LOWERING_SOURCES, _HERE)


def _key_fields(trace_key: str, options: LoweringOptions) -> dict[str, Any]:
    """What the program key hashes (also stored in ``cache.json``)."""
    return {
        "cache_version": CACHE_VERSION,
        "program_file_version": FORMAT_VERSION,
        "trace_key": trace_key,
        "compute_scale": float(options.compute_scale).hex(),
        "algorithms": [list(pair) for pair in options.algorithms],
        "sources": _sources_digest(),
    }


def program_key(trace_key: str, options: LoweringOptions) -> str:
    """Hex digest naming the program of the trace of ``trace_key`` lowered with ``options``
    (the reduction rate excepted: see the module docstring)."""
    payload = json.dumps(_key_fields(trace_key, options), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def program_entry(trace_entry: Path, options: LoweringOptions) -> Path:
    """The program entry of the parse cache entry ``trace_entry`` (``<key>.h5``)."""
    trace_key = trace_entry.name.removesuffix(".h5")
    return trace_entry.with_name(f"{trace_key}-{program_key(trace_key, options)}{SUFFIX}")


@dataclass(frozen=True)
class CachedProgram:
    """A lowered program loaded from the cache, and what the replay needs of its trace."""

    lowered: Lowered
    origin: TraceOrigin


def _cache_doc(path: Path) -> dict[str, Any]:
    file = path / "cache.json"
    try:
        doc = json.loads(file.read_text())
    except FileNotFoundError:
        raise ProgramFileError(
            path, "cache.json", "is missing (not a program cache entry)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProgramFileError(file, "cache.json", f"is not readable JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ProgramFileError(file, "cache.json", f"holds {type(doc).__name__}, expected object")
    return doc


def load_cached_program(
    path: str | Path, trace_key: str, options: LoweringOptions
) -> CachedProgram:
    """Load the program entry ``path`` of the trace of ``trace_key`` for ``options``.

    The combine steps' seconds are rewritten for ``options.reduce_rate_Bps`` when the
    entry was written at another rate; the program is validated as the lowering does.

    Raises
    ------
    ProgramFileError
        If a member is missing, malformed, truncated or inconsistent, or the entry was
        written for another trace, other options or other lowering sources; the message
        names the file, the key and the bad value.
    """
    p = Path(path)
    try:
        verify_manifest(p)  # every member, before any is read
    except ChecksumError as exc:
        raise ProgramFileError(
            exc.path, "checksums", str(exc).removeprefix(f"{exc.path}: ")
        ) from None
    doc = _cache_doc(p)
    expected = {"key": program_key(trace_key, options), **_key_fields(trace_key, options)}
    for name, value in expected.items():
        if doc.get(name) != value:
            raise ProgramFileError(
                p / "cache.json", name, f"is {doc.get(name)!r}, expected {value!r} (stale entry)"
            )
    written_rate = doc.get("reduce_rate_Bps")
    if written_rate is None:  # free reductions (JSON has no infinity)
        written_rate = math.inf
    elif not isinstance(written_rate, float) or not (
        math.isfinite(written_rate) and written_rate > 0
    ):
        raise ProgramFileError(
            p / "cache.json",
            "reduce_rate_Bps",
            f"is {written_rate!r}, expected a rate > 0 or null (free reductions)",
        )
    with ProgramFile.open(p) as pf:
        low = pf.to_lowered(mapped=True)
        facts, n_ranks, call_names = pf.facts, pf.n_ranks, pf.call_names
    trace_rank_ptr = read_member(p, "trace_rank_ptr.npy", np.int64, n_ranks + 1)
    trace_call = read_member(p, "trace_call.npy", np.int16, facts.n_trace_ops)
    # the program is validated on the other core while its row map and combine steps
    # are checked (an error of the latter is raised first); the combine steps' seconds
    # are rewritten afterwards, from the checked bytes (finite, > 0) at the options' rate
    # (finite, > 0), and refused if one comes out infinite
    _, invalid = run_pair(
        lambda: _check_consistent(p, low, trace_rank_ptr, trace_call, len(call_names)),
        lambda: _problem_of(low.program),
        name="program-check",
    )
    if invalid is not None:
        raise ProgramFileError(p, "program", f"is invalid ({invalid})")
    if written_rate != options.reduce_rate_Bps and low.reduce_rows.size:
        with np.errstate(over="ignore"):  # an overflow is refused just below
            seconds = low.reduce_bytes / options.reduce_rate_Bps
        if not np.all(np.isfinite(seconds)):
            raise ProgramFileError(
                p / "reduce_bytes.npy", "reduce_bytes", "give combine steps of infinite seconds"
            )
        low.program.seconds[low.reduce_rows] = seconds
    origin = TraceOrigin(
        source=facts.source,
        format=facts.format,
        n_ranks=n_ranks,
        n_ops=facts.n_trace_ops,
        rank_ptr=trace_rank_ptr,
        call=trace_call,
        call_names=call_names,
        unsupported=dict(facts.unsupported),
        notes=tuple(facts.notes),
    )
    return CachedProgram(low, origin)


def _problem_of(program: Program) -> ProgramError | None:
    """The error :meth:`Program.validate` raises for ``program``, or ``None``."""
    try:
        program.validate()
    except ProgramError as exc:
        return exc
    return None


def _check_consistent(
    path: Path,
    low: Lowered,
    trace_rank_ptr: IntArray,
    trace_call: npt.NDArray[np.int16],
    n_calls: int,
) -> None:
    """Raise ProgramFileError unless the row map, rank offsets, calls and combine steps
    of an entry fit its program (what :meth:`Program.validate` does not see)."""
    prog, row_ptr = low.program, low.row_ptr
    n_trace_ops = trace_call.shape[0]
    if (
        row_ptr[0] != 0
        or row_ptr[-1] != prog.n_ops
        or np.any(np.diff(row_ptr) < 0)
        or trace_rank_ptr[0] != 0
        or trace_rank_ptr[-1] != n_trace_ops
        or np.any(np.diff(trace_rank_ptr) < 0)
        or not np.array_equal(row_ptr[trace_rank_ptr], prog.rank_ptr)
    ):
        raise ProgramFileError(
            path, "row_ptr", "does not map the trace's ranks onto the program's rows"
        )
    if n_trace_ops and (int(trace_call.min()) < 0 or int(trace_call.max()) >= n_calls):
        raise ProgramFileError(
            path / "trace_call.npy", "trace_call.npy", f"names calls outside 0..{n_calls - 1}"
        )
    rows, nbytes = low.reduce_rows, low.reduce_bytes
    if rows.shape != nbytes.shape or (
        rows.size
        and (
            int(rows.min()) < 0
            or int(rows.max()) >= prog.n_ops
            or np.any(prog.kind[rows] != OP_COMPUTE)
            or not np.all(np.isfinite(nbytes) & (nbytes > 0))
        )
    ):
        raise ProgramFileError(
            path, "reduce_rows.npy", "are not the program's combine steps with bytes > 0"
        )


def find_cached_program(trace_entry: Path | None, options: LoweringOptions) -> CachedProgram | None:
    """The cached program of the parse cache entry ``trace_entry`` for ``options``, or
    ``None`` (no cache, no entry, or an entry that cannot be used, which is deleted)."""
    if trace_entry is None:
        return None
    path = program_entry(trace_entry, options)
    if not path.is_dir():
        return None
    try:
        return load_cached_program(path, trace_entry.name.removesuffix(".h5"), options)
    except (ProgramFileError, OSError):
        shutil.rmtree(path, ignore_errors=True)  # written again after the lowering
        return None


def save_cached_program(
    trace_entry: Path | None, options: LoweringOptions, lowered: Lowered, origin: TraceOrigin
) -> Path | None:
    """Store ``lowered`` (the trace of ``origin`` lowered with ``options``) beside the
    parse cache entry ``trace_entry``; the entry's path, or ``None`` when there is no
    cache or it cannot be written (a read-only or full cache never stops a replay). An
    entry that would leave the cache's file system with less free space than its own size
    is not written."""
    if trace_entry is None:
        return None
    final = program_entry(trace_entry, options)
    part = final.with_name(f"{final.name}.part{os.getpid()}")
    try:
        need = ENTRY_BYTES_PER_ROW * lowered.program.n_ops + 10 * origin.n_ops
        if shutil.disk_usage(final.parent).free < 2 * need:
            return None
        _sweep_parts(final)
        shutil.rmtree(part, ignore_errors=True)
        facts = TraceFacts(
            origin.source, origin.format, origin.n_ops, dict(origin.unsupported), origin.notes
        )
        write_program_file(lowered, facts, part)
        np.save(part / "trace_rank_ptr.npy", np.asarray(origin.rank_ptr, dtype="<i8"))
        np.save(part / "trace_call.npy", np.asarray(origin.call, dtype="<i2"))
        trace_key = trace_entry.name.removesuffix(".h5")
        rate = float(options.reduce_rate_Bps)  # infinite: free reductions, stored as null
        doc = {
            "key": program_key(trace_key, options),
            **_key_fields(trace_key, options),
            "reduce_rate_Bps": rate if math.isfinite(rate) else None,
        }
        (part / "cache.json").write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        write_manifest(part, [f.name for f in part.iterdir()])
        part.rename(final)  # fails if another run just stored its own: keep that one
    except OSError:
        shutil.rmtree(part, ignore_errors=True)
        return final if final.is_dir() else None
    return final


def _sweep_parts(final: Path) -> None:
    """Delete temporary entries of ``final`` left by killed runs: of a process that is
    gone, or over an hour old (a process id reused since)."""
    now = time.time()
    for leftover in final.parent.glob(f"{final.name}.part*"):
        try:
            pid = leftover.name.rsplit(".part", 1)[-1]
            gone = pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid))
            if gone or now - leftover.stat().st_mtime > _STALE_PART_S:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True
