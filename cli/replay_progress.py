"""Progress lines of reading and replaying a trace (``mpiuq replay``, ``mpiuq trace info``).

Wraps :func:`~mpiuq.simulator.trace.read_trace` and
:func:`~mpiuq.simulator.replay.replay` with :class:`~mpiuq.progress.Progress`: a line per
stage with its figures (operations, events and events/s per model), a running
percentage while a model runs, and the one-off "compiling kernels" line on a new machine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.progress import Progress
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.trace import read_trace
from mpiuq.simulator.trace.ir import Trace

if TYPE_CHECKING:  # the replay engine (numba) is imported when a replay runs
    from mpiuq.simulator.replay import ReplayProgress, ReplayResult, ReplaySetup


def read_with_progress(progress: Progress, path: Path, **options: Any) -> Trace:
    """``read_trace(path, **options)`` with a line saying what was read and how long it took.

    Imports numba only when the trace needs a compiled parser (a text trace), so a
    missing path or a cached trace is answered without it.
    """
    with progress.watching_compilation(), progress.stage(f"reading {path}") as done:
        trace = read_trace(path, **options)
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


def replay_file_with_progress(
    progress: Progress,
    path: Path,
    params: SimParams,
    setup: ReplaySetup,
    threads: int = 1,
    **read_options: Any,
) -> ReplayResult:
    """Read, lower and replay the trace at ``path``, with progress lines.

    ``threads``: how many models may run at once (see
    :func:`~mpiuq.simulator.replay.replay_lowered`).

    The trace is let go once lowered, so the simulation holds only the lowered
    program and the trace's :class:`~mpiuq.simulator.replay.TraceOrigin` (on large
    traces the trace itself is the largest part of the peak memory).
    """
    from mpiuq.simulator._numba_startup import skip_blas_probe
    from mpiuq.simulator.replay import TraceOrigin, lower_for_replay, replay_lowered

    skip_blas_probe()
    report = replay_reporter(progress)
    trace = read_with_progress(progress, path, **read_options)
    with progress.watching_compilation():
        low, lowering_s = lower_for_replay(trace, params, setup, report)
        origin = TraceOrigin.of(trace)
        del trace
        return replay_lowered(
            origin,
            low,
            params,
            setup,
            on_progress=report,
            lowering_s=lowering_s,
            threads=threads,
        )
