"""Compile the simulator's loops into numba's on-disk cache by running them on tiny inputs.

``python -m mpiuq.precompile`` runs the commands whose loops a user's commands call --
replays of a tiny SimGrid TI trace (parsed, then from the trace and program caches) and
of a synthetic motif on every network model of :data:`~mpiuq.simulator.codes.NETWORK_MODELS`,
in memory and streamed; every benchmark of :data:`~mpiuq.simulator.benchmarks.kinds.BENCHMARKS`
one at a time and in batches of parameter sets (the calibration's design and moves);
posterior-style batches of replays -- so every loop they reach compiles, for the
argument types those commands give it, and numba caches it
(:mod:`mpiuq.simulator.runtime.jit`); with two cores or more, in two processes at once
(:func:`precompile`). The build backend runs it at the end of ``pip install``; it is
also what a test or a developer runs to warm a cache. Prints one line at the end
(the loops compiled, in how many seconds); needs NumPy, numba, h5py and xxhash only
(:data:`PRECOMPILE_IMPORTS`: the build environment installs exactly these).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The halves of :func:`exercise` that :func:`precompile` runs in two processes at once.
PARTS = ("stream", "rest")

#: Third-party distributions the compiling commands import (the build requirements).
PRECOMPILE_IMPORTS = ("numpy", "numba", "h5py", "xxhash")

#: A tiny SimGrid TI trace: point-to-point, compute and the common collectives.
TINY_TI_TRACE = "\n".join(
    [
        *(f"{r} init" for r in range(4)),
        "0 send 1 0 5760",
        "1 recv 0 0 5760",
        "2 send 3 0 200000",
        "3 recv 2 0 200000",
        "1 send 0 1 40",
        "0 recv 1 1 40",
        *(f"{r} compute 1e6" for r in range(4)),
        *(f"{r} allreduce 40 1e4" for r in range(4)),
        *(f"{r} bcast 1000" for r in range(4)),
        *(f"{r} barrier" for r in range(4)),
        *(f"{r} finalize" for r in range(4)),
    ]
)


#: A SimGrid fat-tree zone of 4 hosts (its routing loops compile with ``--like simgrid``).
SIMGRID_ZONE = "sgfattree:down=2x2,up=1x2,parallel=1x1"


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Set environment variables inside the block (restored after)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def exercise(folder: Path, part: str | None = None) -> None:
    """Run the commands whose loops are compiled, on tiny inputs written in ``folder``
    (prints nothing; raises ``RuntimeError`` naming a command that failed).

    ``part`` runs one of :data:`PARTS` only: ``"stream"`` the streamed replay (the
    windowed event loop), ``"rest"`` everything else; ``None`` runs all.
    """
    if part not in (None, *PARTS):
        raise ValueError(f"part={part!r} is invalid: expected one of {PARTS} or None")
    from mpiuq.main import main
    from mpiuq.simulator.benchmarks.kinds import BENCHMARKS
    from mpiuq.simulator.codes import NETWORK_MODELS

    trace = folder / "tiny.txt"
    trace.write_text(TINY_TI_TRACE + "\n", encoding="utf-8")
    motif = folder / "motif.h5"
    models = ",".join(NETWORK_MODELS)
    quiet = ["--quiet"]
    runs: list[list[str]] = [
        ["trace", "synth", "halo3d", "--ranks", "8", "--iterations", "2", "--out", str(motif)],
        ["replay", str(trace), "--model", models, *quiet],  # parsed
        ["replay", str(trace), "--model", models, *quiet],  # from the program cache
        ["replay", str(trace), "--model", "analytic", *quiet],  # one model alone
        # SimGrid's semantics: flow sharing, detached sends, a SimGrid zone's routes
        ["replay", str(trace), "--like", "simgrid", "--topology", SIMGRID_ZONE, *quiet],
        ["replay", str(motif), "--model", models, *quiet],
        [
            "replay",
            str(motif),
            "--model",
            models,
            "--stream",
            "on",
            "--scratch",
            str(folder),
            "--window-rows",
            "4",
            *quiet,
        ],
    ]
    runs += [["simulate", "--benchmark", name, "--sizes", "8,65536,4194304"] for name in BENCHMARKS]
    streamed = [argv for argv in runs if "--stream" in argv]
    if part == "stream":
        runs = [runs[0], *streamed]  # the motif, then its streamed replay
    elif part == "rest":
        runs = [argv for argv in runs if argv not in streamed]
    messages = io.StringIO()
    with (
        _environment(MPIUQ_CACHE_DIR=str(folder / "traces")),
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull),
        contextlib.redirect_stderr(messages),
    ):
        for argv in runs:
            messages.seek(0)
            messages.truncate()
            code = main(argv)
            if code != 0:
                said = messages.getvalue().strip()
                raise RuntimeError(f"'mpiuq {' '.join(argv)}' failed (exit {code}): {said}")
        if part != "stream":
            _exercise_batches(motif)


def _exercise_batches(motif: Path) -> None:
    """The batch paths (posterior-style parameter sets, benchmark batches as the
    calibration's design evaluates them) and the loops only large inputs reach."""
    import numpy as np

    from mpiuq.simulator.benchmarks.kinds import BENCHMARKS
    from mpiuq.simulator.benchmarks.run import BenchmarkModel, BenchmarkSetup, evaluate_batch
    from mpiuq.simulator.engine import params_vector
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay.draws import replay_draws
    from mpiuq.simulator.replay.run import ReplaySetup
    from mpiuq.simulator.trace.read import read_trace
    from mpiuq.simulator.trace.ti.state import grow_hash

    trace = read_trace(motif)
    base = SimParams()
    draws = [base, base.with_values(link_bw_GBps=base.link_bw_GBps * 0.5)]
    replay_draws(trace, draws, ReplaySetup(models=("analytic", "packet", "compute-only")))
    matrix = np.stack([params_vector(p) for p in draws])
    sizes = [8, 65536, 4194304]
    for benchmark in BENCHMARKS:
        setup = BenchmarkSetup(benchmark=benchmark)
        evaluate_batch(setup, sizes, matrix)
        model = BenchmarkModel(benchmark, tuple(sizes), ("link_bw_GBps",), threads=2)
        model(np.array([[base.link_bw_GBps], [base.link_bw_GBps * 0.5]]))
        model.at(base)
    # the TI parser's key table grows past 512 pending keys, which a tiny trace never has
    grow_hash(np.zeros((1024, 3), np.int64))


def _compile_part(part: str, folder: Path, report: Any) -> None:
    """A forked process's half of :func:`precompile`: run ``part``, send its loop count."""
    from mpiuq.simulator.runtime.jit import on_compile

    compiled: list[str] = []
    folder.mkdir()
    with on_compile(lambda loop, took: compiled.append(loop) if took is not None else None):
        exercise(folder, part)
    report.send(len(compiled))


def _fork_context() -> Any:
    """multiprocessing's fork context, or None where there is none (then one process)."""
    import multiprocessing

    try:
        return multiprocessing.get_context("fork")
    except ValueError:
        return None


def precompile(processes: int | None = None) -> tuple[int, float]:
    """Run :func:`exercise` in a temporary folder: ``(loops compiled, seconds)``.

    With two or more usable cores (or ``processes >= 2``) the two :data:`PARTS` compile
    at once, the streamed replay in a forked process (each of the two event loops takes
    about three minutes to compile, one core each); then the whole exercise runs once
    more in this process, which loads every loop from the cache and compiles any loop
    the halves missed (two processes compiling the same small loop may each write its
    cache index: the last one wins, and this pass puts back what it lost). Ctrl-C or a
    failure in either half stops both.
    """
    from mpiuq.simulator.runtime.jit import drop_stale_caches, on_compile
    from mpiuq.simulator.runtime.watch import usable_cores

    n = usable_cores() if processes is None else processes
    context = _fork_context() if n >= 2 else None
    compiled: list[str] = []
    t0 = time.perf_counter()
    drop_stale_caches()  # once, before the processes share the cache
    with (
        tempfile.TemporaryDirectory(prefix="mpiuq-precompile-") as tmp,
        on_compile(lambda loop, took: compiled.append(loop) if took is not None else None),
    ):
        folder = Path(tmp)
        forked = 0
        if context is not None:
            receive, send = context.Pipe(duplex=False)
            child = context.Process(
                target=_compile_part, args=("stream", folder / "stream", send), daemon=True
            )
            child.start()
            try:
                (folder / "rest").mkdir()
                exercise(folder / "rest", "rest")
                child.join()
            finally:
                if child.is_alive():
                    child.terminate()
                    child.join()
            if child.exitcode != 0:
                raise RuntimeError(
                    f"compiling the streamed replay's loops failed (exit {child.exitcode})"
                )
            forked = int(receive.recv()) if receive.poll() else 0
        (folder / "all").mkdir()
        exercise(folder / "all")
    return len(compiled) + forked, time.perf_counter() - t0


def run() -> int:
    """``python -m mpiuq.precompile``: compile, then print one line on stderr."""
    n, seconds = precompile()
    print(f"mpiuq: {n} compiled loops cached ({seconds:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run())
