"""Building the ahead-of-time module of the compiled loops (``mpiuq kernels build``).

The build runs a small set of commands (:func:`exercise`: replays of a tiny trace
on every network model, in memory and streamed, from a text trace and from its
cache, posterior-style parameter batches, benchmarks) with numba's dispatchers,
records every loop called from Python and the argument types of each call, then
compiles those loops for exactly those types into one extension module with numba's
ahead-of-time compiler (:mod:`numba.pycc`), next to a table of the argument
fingerprints each export takes (see :mod:`mpiuq.simulator._aot`).

Each export is a thin function that calls the loop's dispatcher, so the loop itself
is compiled with its own options (no reference counting, NumPy's error model) as in
a numba run; exports release the GIL like the dispatchers (``nogil``), so models
replayed in threads still run at once. The module is compiled for this CPU.

numba's ``pycc`` is deprecated but present in numba 0.68 (pinned); if it is missing,
the build fails with :class:`AotBuildError` and commands keep running on numba's cache.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.simulator import _aot
from mpiuq.simulator._aot import AotBuildError
from mpiuq.simulator._deferred import Deferred, materialize, record_calls

__all__ = ["AotBuild", "AotBuildError", "build_aot", "exercise"]


#: A tiny SimGrid TI trace: point-to-point, compute and the common collectives.
_TI_TRACE = "\n".join(
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


@dataclass(frozen=True)
class AotBuild:
    """What a build made: the module, its loops and exports, and the seconds it took."""

    module: Path
    loops: tuple[str, ...]
    exports: int
    exercise_s: float
    compile_s: float


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


def exercise(folder: Path) -> None:
    """Run the commands whose loops the module holds, on tiny inputs written in ``folder``.

    Replays a TI text trace (parsed, then from its cache) and a synthetic HDF5 motif on
    the analytic, packet and compute-only models, in memory and streamed; replays a
    batch of parameter sets on the batch path; runs the ping-pong and streaming
    benchmarks. Prints nothing.
    """
    from mpiuq.main import main

    trace = folder / "tiny.txt"
    trace.write_text(_TI_TRACE + "\n", encoding="utf-8")
    motif = folder / "motif.h5"
    models = "analytic,packet,compute-only"
    quiet = ["--quiet"]
    runs: list[list[str]] = [
        ["trace", "synth", "halo3d", "--ranks", "8", "--iterations", "2", "--out", str(motif)],
        ["replay", str(trace), "--model", models, *quiet],  # parsed
        ["replay", str(trace), "--model", models, *quiet],  # from the trace cache
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
        ["simulate", "--benchmark", "pingpong", "--sizes", "8,65536,4194304"],
        ["simulate", "--benchmark", "stream", "--sizes", "8,4194304"],
    ]
    with (
        _environment(MPIUQ_CACHE_DIR=str(folder / "traces")),
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull),
        contextlib.redirect_stderr(devnull),
    ):
        for argv in runs:
            code = main(argv)
            if code != 0:
                raise AotBuildError(
                    f"the build's run 'mpiuq {' '.join(argv)}' failed (exit {code})"
                )
        _exercise_batches(motif)


def _exercise_batches(motif: Path) -> None:
    """The batch paths (posterior-style parameter sets, benchmark batches) and the loops
    only large inputs reach."""
    import numpy as np

    from mpiuq.simulator.benchmarks import BenchmarkSetup, evaluate_batch
    from mpiuq.simulator.engine import params_vector
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay import ReplaySetup
    from mpiuq.simulator.replay_draws import replay_draws
    from mpiuq.simulator.trace.read import read_trace
    from mpiuq.simulator.trace.ti_state import grow_hash

    trace = read_trace(motif)
    base = SimParams()
    draws = [base, base.with_values(link_bw_GBps=base.link_bw_GBps * 0.5)]
    replay_draws(trace, draws, ReplaySetup(models=("analytic", "packet", "compute-only")))
    matrix = np.stack([params_vector(p) for p in draws])
    for benchmark in ("pingpong", "stream"):
        evaluate_batch(BenchmarkSetup(benchmark=benchmark), [8, 65536, 4194304], matrix)
    # the TI parser's key table grows past 512 pending keys, which a tiny trace never has
    grow_hash(np.zeros((1024, 3), np.int64))


def _positional(loop: Deferred, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``args`` and ``kwargs`` of a call of ``loop`` as positional arguments."""
    if not kwargs:
        return args
    bound = inspect.signature(loop.py_func).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


def _record(
    calls: dict[str, dict[str, Any]],
) -> Callable[[Deferred, tuple[Any, ...], dict[str, Any]], None]:
    """A recorder of calls: ``calls[loop][argument types] = (loop, types, fingerprints)``."""

    def recorder(loop: Deferred, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        positional = _positional(loop, args, kwargs)
        key = _aot.fingerprint_key(positional)
        if key is None:
            return
        dispatcher = loop.real
        types = tuple(dispatcher.typeof_pyval(a) for a in positional)
        entry = calls.setdefault(loop.key, {}).setdefault(repr(types), [loop, types, set()])
        entry[2].add(key)

    return recorder


def _thin(target: Any, n_args: int) -> Callable[..., Any]:
    """A function of ``n_args`` arguments returning ``target(*args)`` (the export's body)."""
    names = ", ".join(f"a{i}" for i in range(n_args))
    namespace: dict[str, Any] = {"target": target}
    exec(f"def thin({names}):\n    return target({names})\n", namespace)
    return namespace["thin"]  # type: ignore[no-any-return]


@contextlib.contextmanager
def _exports_release_gil() -> Iterator[None]:
    """numba's ``pycc`` compiles its exports' wrappers with these flags: release the GIL."""
    from numba.pycc import compiler

    base = compiler.Flags

    class ReleasingFlags(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    compiler.Flags = ReleasingFlags  # type: ignore[misc]
    try:
        yield
    finally:
        compiler.Flags = base  # type: ignore[misc]


def build_aot(on_phase: Callable[[str], None] | None = None) -> AotBuild:
    """Build the ahead-of-time module for this machine (see the module docstring).

    ``on_phase(text)`` is told each phase (the command line prints it). Written
    atomically into :func:`mpiuq.simulator._aot.aot_folder`; replaces a module of the
    same key.

    Raises
    ------
    AotBuildError
        If numba's ``pycc`` or a C compiler is missing, or a run of the exercise fails.
    """
    say = on_phase or (lambda _text: None)
    _aot.disable()  # the build records numba's dispatchers
    materialize()
    try:
        from numba.pycc import CC
    except ImportError as exc:  # pragma: no cover - numba without pycc
        raise AotBuildError(
            f"numba's ahead-of-time compiler (numba.pycc) is missing: {exc}"
        ) from exc
    name = _aot.module_name()
    folder = _aot.aot_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AotBuildError(
            f"the module's folder {folder} cannot be made ({exc.strerror}): set "
            f"{_aot.AOT_DIR_ENV} to a writable folder"
        ) from exc
    calls: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    say("running the loops on tiny inputs to learn their argument types")
    record_calls(_record(calls))
    try:
        with tempfile.TemporaryDirectory(prefix="mpiuq-aot-exercise-") as tmp:
            exercise(Path(tmp))
    finally:
        record_calls(None)
    exercise_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    say(f"compiling {sum(len(v) for v in calls.values())} exports of {len(calls)} loops")
    with tempfile.TemporaryDirectory(prefix="mpiuq-aot-", dir=folder) as tmp:
        try:
            cc = CC(name)  # finds the C compiler it links with
        except Exception as exc:
            raise AotBuildError(f"numba's ahead-of-time compiler cannot start: {exc}") from exc
        cc.output_dir = tmp
        cc.target_cpu = "host"
        cc.verbose = False
        table: dict[str, list[list[str]]] = {}
        n = 0
        for loop_key in sorted(calls):
            for loop, types, fingerprints in calls[loop_key].values():
                dispatcher = loop.real
                if types not in dispatcher.overloads:  # the call ran a converting overload
                    dispatcher.compile(types)
                overload = dispatcher.overloads[types]
                export = f"x{n}_{loop.__name__}"
                n += 1
                sig = overload.signature.return_type(*types)
                cc.export(export, sig)(_thin(dispatcher, len(types)))
                table.setdefault(loop_key, []).extend([fp, export] for fp in sorted(fingerprints))
        try:
            with _exports_release_gil():
                cc.compile()
        except Exception as exc:
            raise AotBuildError(f"numba's ahead-of-time compiler failed: {exc}") from exc
        built = [p for p in Path(tmp).iterdir() if p.name.startswith(name)]
        if len(built) != 1:
            raise AotBuildError(f"numba's ahead-of-time compiler left {built} in {tmp}")
        table_tmp = Path(tmp) / "table.json"
        table_tmp.write_text(json.dumps({"format": _aot.AOT_FORMAT, "loops": table}, indent=1))
        so = _aot.module_path(name)
        os.replace(table_tmp, _aot.table_path(name))
        os.replace(built[0], so)  # last: the module's presence means the table is there
    shutil.rmtree(folder / "__pycache__", ignore_errors=True)
    _aot.forget()
    return AotBuild(
        module=so,
        loops=tuple(sorted(calls)),
        exports=n,
        exercise_s=exercise_s,
        compile_s=time.perf_counter() - t1,
    )
