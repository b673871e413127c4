"""Replay of a trace file holding neither the trace nor its program whole.

:func:`replay_file_streamed` lowers an mpiuq HDF5 trace file (a trace cache entry or
``mpiuq trace synth`` output) block of ranks by block into a temporary program file
(:func:`~mpiuq.simulator.lowering.blocks.lower_trace_blocks`), then runs each model on
per-rank windows of that file (:func:`~mpiuq.simulator.replay.windowed.simulate_windowed`).
The result is bit-identical to :func:`~mpiuq.simulator.replay.run.replay` of the whole
trace; the peak memory grows with the ranks, the requests (8 B each) and the live
messages, not with the operations. The in-memory path is faster on small traces
(no program file is written): :func:`stream_by_default` says which one to take.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.lowering.blocks import lower_trace_blocks
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.file import ProgramFile
from mpiuq.simulator.replay.run import (
    ReplayProgress,
    ReplayResult,
    ReplaySetup,
    TraceOrigin,
    replay_lowered,
)
from mpiuq.simulator.replay.stream_default import STREAM_MIN_OPS, stream_by_default
from mpiuq.simulator.replay.windowed import DEFAULT_WINDOW_ROWS, FileLowering
from mpiuq.simulator.trace.cache.h5_reader import open_trace_h5, read_column

__all__ = [
    "BYTES_PER_TRACE_OP",
    "STREAM_MIN_OPS",
    "lowered_file",
    "origin_of_file",
    "replay_file_streamed",
    "stream_by_default",
]

#: Program-file bytes per trace operation assumed when checking the scratch folder's
#: free space (halo3d: 2 program rows of 40 B and a 8 B row map entry per operation,
#: 99 B measured; collective-heavy traces expand further, so this is a floor).
BYTES_PER_TRACE_OP = 100


def origin_of_file(h5_path: str | Path) -> TraceOrigin:
    """The :class:`TraceOrigin` of a trace file, reading only its rank offsets and calls
    (2 B per operation)."""
    with open_trace_h5(h5_path) as head:
        return TraceOrigin(
            source=head.source,
            format=head.format,
            n_ranks=head.n_ranks,
            n_ops=head.n_ops,
            rank_ptr=read_column(head, "rank_ptr", 0, head.n_ranks + 1),
            call=read_column(head, "call", 0, head.n_ops),
            call_names=head.call_names,
            unsupported=dict(head.unsupported),
            notes=tuple(head.notes),
        )


def _scratch(scratch_dir: str | Path | None, n_trace_ops: int) -> Path:
    """A fresh folder for one program file, after checking there is room for it."""
    base = Path(scratch_dir) if scratch_dir is not None else Path(tempfile.gettempdir())
    if not base.is_dir():
        raise SettingError(f"scratch folder {base} does not exist: expected a folder")
    need = BYTES_PER_TRACE_OP * n_trace_ops
    free = shutil.disk_usage(base).free
    if free < need:
        raise SettingError(
            f"scratch folder {base} has {free / 1e6:,.1f} MB free: the program file of "
            f"{n_trace_ops:,} trace operations needs at least {need / 1e6:,.1f} MB "
            "(choose another with --scratch)"
        )
    try:
        return Path(tempfile.mkdtemp(prefix="mpiuq-program-", dir=base))
    except OSError as exc:
        raise SettingError(f"scratch folder {base} is not writable: {exc}") from exc


@contextmanager
def lowered_file(
    h5_path: str | Path,
    params: SimParams,
    setup: ReplaySetup,
    *,
    scratch_dir: str | Path | None = None,
    n_trace_ops: int = 0,
    on_progress: Callable[[ReplayProgress], None] | None = None,
    ranks_per_block: int | None = None,
) -> Iterator[tuple[FileLowering, float]]:
    """The trace file lowered in blocks into a temporary program file, open for a replay.

    Yields the :class:`FileLowering` and the lowering's wall seconds; the program file
    is deleted on leaving, also after an error.

    Raises
    ------
    SettingError
        If the scratch folder is missing, not writable, full or too small.
    """
    folder = _scratch(scratch_dir, n_trace_ops)
    try:
        t0 = time.perf_counter()

        def report(done: float) -> None:
            if on_progress is not None and done < 1.0:
                on_progress(ReplayProgress("lowering", done, time.perf_counter() - t0))

        if on_progress is not None:
            on_progress(ReplayProgress("lowering", 0.0, 0.0))
        try:
            written = lower_trace_blocks(
                h5_path,
                setup.lowering_options(params),
                folder / "program.mpiuqprog",
                ranks_per_block=ranks_per_block,
                on_progress=report,
            )
        except OSError as exc:  # a full or failing disk while the program file is written
            raise SettingError(
                f"writing the program file in scratch folder {folder.parent} failed: {exc}"
            ) from exc
        lowering_s = time.perf_counter() - t0
        if on_progress is not None:
            on_progress(ReplayProgress("lowering", 1.0, lowering_s, operations=written.n_ops))
        with ProgramFile.open(written.path) as program_file:
            yield FileLowering(program_file), lowering_s
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def replay_file_streamed(
    h5_path: str | Path,
    params: SimParams | None = None,
    setup: ReplaySetup | None = None,
    *,
    origin: TraceOrigin | None = None,
    scratch_dir: str | Path | None = None,
    threads: int = 1,
    window_rows: int = DEFAULT_WINDOW_ROWS,
    ranks_per_block: int | None = None,
    on_progress: Callable[[ReplayProgress], None] | None = None,
) -> ReplayResult:
    """:func:`~mpiuq.simulator.replay.run.replay` of the trace file ``h5_path``, streamed.

    Parameters
    ----------
    h5_path
        An mpiuq HDF5 trace file (a trace cache entry, ``mpiuq trace synth`` output).
    params, setup, threads, on_progress
        As :func:`~mpiuq.simulator.replay.run.replay`.
    origin
        The file's :func:`origin_of_file`, if already read.
    scratch_dir
        Folder of the temporary program file (default: the system's temporary folder,
        ``$TMPDIR``); it needs about :data:`BYTES_PER_TRACE_OP` bytes per trace operation.
    window_rows
        Program rows per rank each model holds (40 B each).
    ranks_per_block
        Ranks lowered at once (default: about a million trace operations per block).

    Raises
    ------
    SettingError
        If the scratch folder cannot hold the program file, or a setting is invalid.
    TraceFormatError, UnreplayableTraceError, CollectiveError, ProgramError
        As the block lowering, naming the trace file.
    ReplayDeadlockError
        If some rank waits forever.
    """
    params = SimParams() if params is None else params
    setup = ReplaySetup() if setup is None else setup
    origin = origin_of_file(h5_path) if origin is None else origin
    with lowered_file(
        h5_path,
        params,
        setup,
        scratch_dir=scratch_dir,
        n_trace_ops=origin.n_ops,
        on_progress=on_progress,
        ranks_per_block=ranks_per_block,
    ) as (low, lowering_s):
        return replay_lowered(
            origin,
            low,
            params,
            setup,
            on_progress=on_progress,
            lowering_s=lowering_s,
            threads=threads,
            window_rows=window_rows,
        )
