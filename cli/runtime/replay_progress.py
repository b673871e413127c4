"""Progress lines of reading and replaying a trace (``mpiuq replay``, ``mpiuq trace info``).

Wraps :func:`~mpiuq.simulator.trace.read_trace` and
:func:`~mpiuq.simulator.replay.run.replay` with :class:`~mpiuq.runtime.progress.Progress`: a line per
stage with its figures (operations, events and events/s per model), a running
percentage while a model runs, and a line per loop compiled (one missing from numba's cache).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.runtime.progress import Progress
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.ir import Trace
from mpiuq.simulator.trace.read import TraceLocation, locate_trace, read_located, store_trace

if TYPE_CHECKING:  # the replay engine (numba) is imported when a replay runs
    from mpiuq.simulator.lowering.lower import Lowered, LoweringOptions
    from mpiuq.simulator.replay.run import ReplayProgress, ReplayResult, ReplaySetup, TraceOrigin


def read_with_progress(
    progress: Progress,
    path: Path,
    where: TraceLocation | None = None,
    *,
    store: bool = True,
    **options: Any,
) -> Trace:
    """``read_trace(path, **options)`` (or ``read_located(where, store=store)``, when
    already located) with a line saying what was read and how long it took.

    Imports numba only when the trace needs a compiled parser (a text trace), so a
    missing path or a cached trace is answered without it.
    """
    with progress.watching_compilation(), progress.stage(f"reading {path}") as done:
        trace = read_trace(path, **options) if where is None else read_located(where, store=store)
        done(f"{trace.format}, {trace.n_ranks} ranks, {trace.n_ops:,} operations")
    return trace


def replay_reporter(progress: Progress) -> Callable[[ReplayProgress], None]:
    """A :func:`replay` progress callback writing to ``progress``."""
    running: dict[str, Callable[[float], None]] = {}

    def report(p: ReplayProgress) -> None:
        if p.done == 0.0:
            running[p.stage] = progress.fraction(p.stage)
            progress.begin(p.stage)
        elif p.done < 1.0:
            running[p.stage](p.done)
        elif p.stage == "lowering":
            progress.line(f"lowering: {p.operations:,} operations ({p.elapsed_s:.2f} s)")
        else:
            rate = p.events / p.elapsed_s if p.elapsed_s > 0 else 0.0
            progress.line(
                f"{p.stage}: {p.events:,} events in {p.elapsed_s:.2f} s ({rate / 1e6:.2f} M events/s)"
            )

    return report


#: ``--stream`` choices: stream large traces (``auto``), always, or never.
STREAM_CHOICES = ("auto", "on", "off")


def replay_file_with_progress(
    progress: Progress,
    path: Path,
    params: SimParams,
    setup: ReplaySetup,
    threads: int = 1,
    *,
    stream: str = "auto",
    scratch: Path | None = None,
    window_rows: int | None = None,
    **read_options: Any,
) -> ReplayResult:
    """Read, lower and replay the trace at ``path``, with progress lines.

    ``threads``: how many models may run at once (see
    :func:`~mpiuq.simulator.replay.run.replay_lowered`).

    ``stream``: ``"on"`` lowers the trace's HDF5 file (the trace itself, or its cache
    entry) in blocks into a program file in ``scratch`` and replays it through windows of
    ``window_rows`` rows per rank (:func:`~mpiuq.simulator.replay.stream.replay_file_streamed`):
    memory bounded by ranks and requests, not operations; ``"off"`` holds the whole
    trace, then the whole program; ``"auto"`` streams traces of
    :data:`~mpiuq.simulator.replay.stream_default.STREAM_MIN_OPS` operations or more. The results
    are identical.

    In memory, the trace is let go once lowered (and, when it was parsed, stored in its
    cache entry, which happens while it is lowered), so the simulation holds only the
    lowered program and the trace's :class:`~mpiuq.simulator.replay.run.TraceOrigin`. With a
    trace cache (``read_options``: ``cache_dir``, ``use_cache``), the lowered program is
    stored beside the trace's entry while the models run, and a later in-memory replay of the
    trace with the same lowering options loads it instead of reading and lowering the
    trace (:mod:`~mpiuq.simulator.program.cache`; same results). Streamed replays neither
    read nor write that cache.

    Raises
    ------
    SettingError
        If ``stream`` is not one of :data:`STREAM_CHOICES`, or ``"on"`` and the trace has
        no HDF5 file (a text trace with a read-only cache), or the scratch folder cannot
        hold the program file.
    """
    from mpiuq.simulator.errors import SettingError
    from mpiuq.simulator.program.cache import save_cached_program
    from mpiuq.simulator.replay.run import TraceOrigin, lower_for_replay, replay_lowered

    if stream not in STREAM_CHOICES:
        raise SettingError(f"stream={stream!r} is invalid: expected one of {STREAM_CHOICES}")
    report = replay_reporter(progress)
    options = setup.lowering_options(params)
    trace: Trace | None = None
    where = locate_trace(path, **read_options)  # the cache key, computed once
    h5_file = _existing_h5_file(path, where, stream)
    if h5_file is None and stream != "on":  # in memory: the program cache
        with progress.watching_compilation():
            cached = _cached_program(progress, path, where, options, stream)
            if cached is not None:
                return replay_lowered(
                    cached.origin,
                    cached.lowered,
                    params,
                    setup,
                    on_progress=report,
                    lowering_s=cached.load_s,
                    threads=threads,
                )
    if h5_file is None:
        trace, h5_file = _read_for_replay(progress, path, where, stream)
    with progress.watching_compilation():
        if h5_file is not None or trace is None:
            del trace  # streamed from the file, in blocks
            return _streamed(
                progress, h5_file or path, params, setup, threads, scratch, window_rows
            )
        # the trace's cache entry is stored while it is lowered, and the lowered program
        # while the models run, on the other core (0.1-0.5 s of writing hidden behind the
        # lowering and the simulation; the trace is let go once stored and lowered)
        from concurrent.futures import ThreadPoolExecutor  # not for a cached program

        with ThreadPoolExecutor(1, thread_name_prefix="program-cache") as pool:
            # (a trace loaded from its entry is there already)
            trace_stored = pool.submit(store_trace, trace, where)
            low, lowering_s = lower_for_replay(trace, params, setup, report)
            origin = TraceOrigin.of(trace)
            del trace
            stored = pool.submit(save_cached_program, where.entry, options, low, origin)
            result = replay_lowered(
                origin,
                low,
                params,
                setup,
                on_progress=report,
                lowering_s=lowering_s,
                threads=threads,
            )
            trace_stored.result()
            stored.result()
        return result


def _existing_h5_file(path: Path, where: TraceLocation, stream: str) -> Path | None:
    """The HDF5 file to stream the trace from, if it has one already (no trace read):
    never with ``stream="off"``; with ``"auto"`` only a file large enough to stream."""
    if stream == "off":
        return None
    h5_file = where.h5_file_of_size(0 if stream == "on" else _stream_entry_bytes())
    if h5_file is not None and stream == "auto" and not _large(h5_file, path):
        return None
    return h5_file


def _read_for_replay(
    progress: Progress, path: Path, where: TraceLocation, stream: str
) -> tuple[Trace, Path | None]:
    """The trace read (with a progress line), and the HDF5 file to stream it from when
    this replay streams (its cache entry, written now), else ``None``.

    A parsed trace's cache entry is otherwise written later, while it is lowered.
    """
    from mpiuq.simulator.errors import SettingError

    trace = read_with_progress(progress, path, where, store=False)
    h5_file: Path | None = None
    if stream == "on" or (
        stream == "auto" and _streams(trace.n_ops, int(trace.vcounts.shape[0]))
    ):
        h5_file = store_trace(trace, where)
        if h5_file is None and stream == "on":
            raise SettingError(
                f"stream='on' needs the trace {path} in an HDF5 file, and its cache "
                "entry could not be written (read-only cache?): expected a writable "
                "MPIUQ_CACHE_DIR"
            )
    return trace, h5_file


@dataclass(frozen=True)
class _Cached:
    """A lowered program loaded from the program cache, and the seconds it took."""

    lowered: Lowered
    origin: TraceOrigin
    load_s: float


def _cached_program(
    progress: Progress, path: Path, where: TraceLocation, options: LoweringOptions, stream: str
) -> _Cached | None:
    """The trace's lowered program from the program cache, with progress lines, or ``None``
    (no cache, no usable entry, or a trace ``stream="auto"`` streams: the caller reads and
    lowers the trace then)."""
    from mpiuq.simulator.program.cache import find_cached_program

    t0 = time.perf_counter()
    found = find_cached_program(where.entry, options)
    if found is None or (stream == "auto" and _streams(found.origin.n_ops)):
        return None
    load_s = time.perf_counter() - t0
    origin, n_ops = found.origin, found.lowered.program.n_ops
    progress.line(
        f"trace {path}: {origin.format}, {origin.n_ranks} ranks, {origin.n_ops:,} operations "
        "(not read: its lowered program is cached)"
    )
    progress.line(f"lowering: {n_ops:,} operations loaded from the cache ({load_s:.2f} s)")
    return _Cached(found.lowered, origin, load_s)


def _streams(n_trace_ops: int, n_vcounts: int = 0) -> bool:
    from mpiuq.simulator.replay.stream_default import stream_by_default

    return stream_by_default(n_trace_ops, n_vcounts)


def _stream_entry_bytes() -> int:
    """Size below which a cache entry holds too few operations and count-list entries to
    stream by default (at least 8 B each, see :func:`_large`): such an entry is not
    verified for streaming."""
    from mpiuq.simulator.replay.stream_default import STREAM_MIN_OPS

    return 8 * STREAM_MIN_OPS


def _large(h5_path: Path, trace_path: Path) -> bool:
    """Whether the trace file holds enough operations to stream by default.

    A cache entry (``h5_path`` is not ``trace_path``) is stored uncompressed, at least
    72 B per operation and 8 B per count-list entry, so a smaller one is answered from
    its size, without h5py.
    """
    if h5_path != trace_path and h5_path.stat().st_size < _stream_entry_bytes():
        return False
    from mpiuq.simulator.trace.cache.h5_reader import open_trace_h5

    with open_trace_h5(h5_path) as head:
        return _streams(head.n_ops, int(head.datasets["vcounts"].shape[0]))


def _streamed(
    progress: Progress,
    h5_file: Path,
    params: SimParams,
    setup: ReplaySetup,
    threads: int,
    scratch: Path | None,
    window_rows: int | None,
) -> ReplayResult:
    from mpiuq.simulator.replay.stream import origin_of_file, replay_file_streamed
    from mpiuq.simulator.replay.windowed import DEFAULT_WINDOW_ROWS

    with progress.stage(f"streaming {h5_file}") as done:
        origin = origin_of_file(h5_file)
        done(f"{origin.format}, {origin.n_ranks} ranks, {origin.n_ops:,} operations")
    return replay_file_streamed(
        h5_file,
        params,
        setup,
        origin=origin,
        scratch_dir=scratch,
        threads=threads,
        window_rows=DEFAULT_WINDOW_ROWS if window_rows is None else window_rows,
        on_progress=replay_reporter(progress),
    )
