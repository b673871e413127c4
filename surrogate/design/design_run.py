"""Evaluate a batched model over a design, checkpointed on disk and restartable.

The checkpoint (:mod:`~mpiuq.surrogate.design.design_store`) is an HDF5 store holding the design,
a fingerprint of the design and the model identity, and, once finished, the outputs;
results of finished chunks go to an append-only journal next to it before progress is
reported.  Both are written so that a kill at any moment loses at most the chunks in
flight: a run started again with the same design and model computes only the missing
points and gives bit-identical results.  Starting it against a different design or
model raises :class:`~mpiuq.surrogate.errors.DesignMismatchError` saying what differs,
instead of mixing results; a failed write stops the run at once with
:class:`~mpiuq.surrogate.errors.StoreWriteError` naming the file.

Results do not depend on the executor or the chunk size as long as the model is
evaluated point by point (row ``i`` of its output depends on row ``i`` of its input only).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from mpiuq.surrogate.design.design_store import (
    JOURNAL_PHASES,
    StoreState,
    consolidate,
    create_store,
    design_fingerprint,
    drop_journal,
    mismatch_error,
    reached,
    read_store,
)
from mpiuq.surrogate.errors import (
    DesignRunError,
    IncompleteDesignError,
    SimulatorRunError,
    StoreError,
    StoreWriteError,
    SurrogateInputError,
)
from mpiuq.surrogate.executors import Executor, InProcessExecutor
from mpiuq.surrogate.store.atomic_write import remove_stale_partials
from mpiuq.surrogate.store.store_journal import JournalHeader, JournalWriter, journal_path

#: A batched model: ``(n_points, n_params)`` parameters -> ``(n_points, n_outputs)`` outputs.
Model = Callable[[np.ndarray], ArrayLike]


@dataclass(frozen=True, slots=True)
class DesignProgress:
    """Progress of a design run, yielded after each finished chunk.

    Attributes
    ----------
    n_done : int
        Points done in total (including earlier, interrupted runs).
    n_total : int
        Points in the design.
    n_computed : int
        Points evaluated by this run so far.
    elapsed_s : float
        Seconds since this run started.
    rate_per_s : float
        Points evaluated per second by this run (0 before the first chunk).
    eta_s : float
        Estimated seconds left (``inf`` while the rate is unknown, 0 when done).
    """

    n_done: int
    n_total: int
    n_computed: int
    elapsed_s: float
    rate_per_s: float
    eta_s: float

    @property
    def finished(self) -> bool:
        """True once every point is done."""
        return self.n_done >= self.n_total


def model_identity(model: Model, model_id: str = "") -> str:
    """The identity recorded in the fingerprint: ``model_id`` or ``module.qualname``."""
    if model_id:
        return model_id
    target = model if hasattr(model, "__qualname__") else type(model)
    module = getattr(target, "__module__", "?")
    return f"{module}.{getattr(target, '__qualname__', repr(target))}"


def model_description(model: Model) -> str:
    """A readable description of the model for mismatch messages (dataclass fields, if any)."""
    if dataclasses.is_dataclass(model) and not isinstance(model, type):
        return repr(model)[:4000]
    return ""


def _validate_design(design: ArrayLike) -> np.ndarray:
    arr = np.asarray(design, dtype=float)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise SurrogateInputError(f"design must have shape (n_points, n_params), got {arr.shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        raise SurrogateInputError(
            f"design point {bad[0][0]} has a non-finite value {arr[tuple(bad[0])]}"
        )
    return np.ascontiguousarray(arr)


def _open_or_create(
    path: Path,
    design: np.ndarray,
    identity: str,
    description: str,
    output_names: Sequence[str] | None,
) -> StoreState:
    fingerprint = design_fingerprint(design, identity)
    remove_stale_partials(path)
    if not path.exists():
        create_store(path, design, fingerprint, identity, description)
    state = read_store(path)
    mismatch = mismatch_error(path, state, design, identity, description, output_names)
    if mismatch is not None:
        raise mismatch
    return state


def _chunk_outputs(
    idx: np.ndarray, result: ArrayLike, n_outputs: int | None, path: Path
) -> np.ndarray:
    y = np.asarray(result, dtype=float)
    if y.ndim == 1 and y.shape[0] == idx.size:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] != idx.size or y.shape[1] == 0:
        raise DesignRunError(
            f"model returned shape {y.shape} for a chunk of {idx.size} points; expected "
            f"({idx.size}, n_outputs)"
        )
    if n_outputs is not None and y.shape[1] != n_outputs:
        raise DesignRunError(
            f"{path}: model returned {y.shape[1]} outputs but the store holds {n_outputs}"
        )
    return y


def _resolve_names(
    state: StoreState, output_names: Sequence[str] | None, n_outputs: int
) -> tuple[str, ...]:
    if state.output_names is not None:
        return state.output_names
    names = (
        tuple(output_names)
        if output_names is not None
        else tuple(f"y{k}" for k in range(n_outputs))
    )
    if len(names) != n_outputs:
        raise DesignRunError(
            f"model returned {n_outputs} outputs but {len(names)} output names were given: {names}"
        )
    return names


class _Recorder:
    """Writes finished chunks to the journal and keeps the run's state in memory."""

    def __init__(self, path: Path, state: StoreState) -> None:
        self.path = path
        self.state = state
        self.done = state.done.copy()
        self.outputs = None if state.outputs is None else state.outputs.copy()
        self.names = state.output_names
        self.writer: JournalWriter | None = None

    def record(self, idx: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> None:
        if self.outputs is None:
            self.outputs = np.full((self.done.size, y.shape[1]), np.nan)
            self.names = names
        journal = journal_path(self.path)
        try:
            if self.writer is None:
                header = JournalHeader(
                    self.state.fingerprint, int(self.done.size), int(y.shape[1]), names
                )
                valid = self.state.journal.valid_bytes if self.state.journal.header else 0
                self.writer = JournalWriter(journal, header, valid)
                reached(JOURNAL_PHASES[0])
            self.writer.append(idx, y)
        except OSError as exc:
            raise StoreWriteError(
                f"{journal}: writing the results of {idx.size} design points failed "
                f"({exc.strerror or exc}); the run stopped with {int(self.done.sum())} of "
                f"{self.done.size} points saved: free disk space or fix the file and run the "
                "same command again to resume"
            ) from exc
        reached(JOURNAL_PHASES[1])
        self.outputs[idx] = y
        self.done[idx] = True

    def finish(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def final_state(self) -> StoreState:
        return dataclasses.replace(
            self.state, done=self.done, outputs=self.outputs, output_names=self.names
        )


@dataclass(frozen=True, slots=True)
class _Failure:
    """What a chunk raised, as plain text (picklable whatever the exception was)."""

    kind: str
    message: str
    simulator: bool


@dataclass(frozen=True, slots=True)
class _Guarded:
    """``model`` whose exceptions come back as a :class:`_Failure` instead of propagating,
    so that the other chunks keep running (``keep_going``)."""

    model: Model

    def __call__(self, x: np.ndarray) -> ArrayLike | _Failure:
        try:
            return self.model(x)
        except Exception as exc:  # any model failure is reported after the other chunks
            reason = " ".join(str(exc).split()) or "no message"
            return _Failure(type(exc).__name__, reason, isinstance(exc, SimulatorRunError))


def _failed_chunks_error(
    failures: list[_Failure], n_chunks: int, n_saved: int, n_total: int, store: Path
) -> DesignRunError:
    shown = "; ".join(f"{f.kind}: {f.message}" for f in failures[:3])
    more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
    text = (
        f"{len(failures)} of {n_chunks} model evaluations failed: {shown}{more}. The "
        f"{n_saved} of {n_total} points that succeeded are saved in {store}: fix the model "
        "and run again to evaluate only the missing ones"
    )
    if all(f.simulator for f in failures):
        return SimulatorRunError(text)
    return DesignRunError(text)


def _progress(n_done: int, n_total: int, n_computed: int, start: float) -> DesignProgress:
    """Progress of a run that started at ``start`` (``time.perf_counter``)."""
    elapsed = time.perf_counter() - start
    rate = n_computed / elapsed if n_computed and elapsed > 0 else 0.0
    left = n_total - n_done
    eta = 0.0 if left == 0 else (left / rate if rate > 0 else float("inf"))
    return DesignProgress(n_done, n_total, n_computed, elapsed, rate, eta)


def _tidy_finished(store: Path, state: StoreState) -> None:
    """A store with every point done: consolidate it (an earlier run was killed before it
    could) or drop the journal a kill left between consolidation and its removal."""
    if not state.consolidated:
        consolidate(store, state)
    else:
        drop_journal(store)


def _next_result(results: Iterator[tuple[int, object]]) -> tuple[int, object] | None:
    """The executor's next ``(chunk, result)``, None when done; a failure of the executor
    itself raises :class:`DesignRunError`."""
    try:
        return next(results)
    except StopIteration:
        return None
    except Exception as exc:
        reason = " ".join(str(exc).split()) or "no message"
        raise DesignRunError(f"model evaluation failed: {type(exc).__name__}: {reason}") from exc


def run_design(
    model: Model,
    design: ArrayLike,
    path: str | os.PathLike[str],
    executor: Executor | None = None,
    chunk_size: int = 128,
    output_names: Sequence[str] | None = None,
    model_id: str = "",
    keep_going: bool = False,
) -> Iterator[DesignProgress]:
    """Evaluate ``model`` on every design point not yet done, yielding progress.

    Parameters
    ----------
    model : callable
        Picklable batched model ``model(X) -> Y`` with ``X`` of shape
        ``(n_chunk, n_params)`` and ``Y`` of shape ``(n_chunk, n_outputs)``.
    design : array_like, shape (n_points, n_params)
        Points to evaluate, in the model's units.
    path : path-like
        HDF5 store; created if absent, resumed if it holds this design and model.
    executor : Executor, optional
        Where chunks run (default: in process).  The caller owns and closes it.
    chunk_size : int
        Points per task (e.g. 64-256 for a fast batched simulator).
    output_names : sequence of str, optional
        Names of the outputs (default ``y0, y1, ...``); checked against the store.
    model_id : str
        Identity of the model recorded in the fingerprint (default ``module.qualname`` of
        ``model``); change it when the model changes behaviour.
    keep_going : bool
        When a chunk fails, evaluate and save the other chunks, then raise (one failed
        run never loses the others); by default the first failure stops the run.

    Yields
    ------
    DesignProgress
        Once at the start (points already done) and after each chunk is stored.

    Raises
    ------
    DesignMismatchError
        ``path`` holds a run of another design, model identity or output names (the
        message says what differs).
    DesignRunError
        The model returned outputs of the wrong shape or raised (chained; with
        ``keep_going`` after the other chunks, naming every failure).
    SimulatorRunError
        With ``keep_going``: every failure was a :class:`SimulatorRunError`.
    StoreError
        ``path`` is not a readable design store.
    StoreWriteError
        Writing the store or its journal failed; the run stops at once.
    """
    arr = _validate_design(design)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise SurrogateInputError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    store = Path(path)
    identity = model_identity(model, model_id)
    state = _open_or_create(store, arr, identity, model_description(model), output_names)
    recorder = _Recorder(store, state)
    try:
        missing = np.flatnonzero(~state.done)
        chunks = [missing[i : i + chunk_size] for i in range(0, missing.size, chunk_size)]
        n_total, n_done, n_computed = arr.shape[0], state.n_done, 0
        start = time.perf_counter()
        if not chunks:
            _tidy_finished(store, state)
        yield _progress(n_done, n_total, n_computed, start)
        runner = executor if executor is not None else InProcessExecutor()
        fn: Callable[[np.ndarray], object] = _Guarded(model) if keep_going else model
        results = runner.map_unordered(fn, [arr[idx] for idx in chunks])
        n_outputs = None if state.outputs is None else state.outputs.shape[1]
        failures: list[_Failure] = []
        try:
            while (item := _next_result(results)) is not None:
                k, result = item
                if isinstance(result, _Failure):
                    failures.append(result)
                    continue
                y = _chunk_outputs(chunks[k], result, n_outputs, store)  # type: ignore[arg-type]
                n_outputs = y.shape[1]
                names = _resolve_names(state, output_names, n_outputs)
                recorder.record(chunks[k], y, names)
                n_done += chunks[k].size
                n_computed += chunks[k].size
                if n_done == n_total:
                    recorder.finish()
                    consolidate(store, recorder.final_state())
                yield _progress(n_done, n_total, n_computed, start)
            if failures:
                raise _failed_chunks_error(failures, len(chunks), n_done, n_total, store)
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
    finally:
        recorder.finish()


def evaluate_design(
    model: Model,
    design: ArrayLike,
    path: str | os.PathLike[str],
    executor: Executor | None = None,
    chunk_size: int = 128,
    output_names: Sequence[str] | None = None,
    model_id: str = "",
    on_progress: Callable[[DesignProgress], None] | None = None,
) -> np.ndarray:
    """Drain :func:`run_design` and return the outputs ``(n_points, n_outputs)``.

    ``on_progress`` (e.g. a progress bar update) receives every progress report.
    """
    for report in run_design(model, design, path, executor, chunk_size, output_names, model_id):
        if on_progress is not None:
            on_progress(report)
    return load_design_outputs(path)[1]


def design_status(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(n_done, n_total)`` of a design store (its journal included).

    Raises
    ------
    StoreError
        If the store is unreadable or damaged.
    """
    state = read_store(_existing(Path(path)))
    return state.n_done, int(state.done.size)


def _existing(path: Path) -> Path:
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise StoreError(f"design store {path} {what}: expected the file of a design run")
    return path


def load_design_outputs(
    path: str | os.PathLike[str],
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Read a finished design run.

    Returns
    -------
    design : numpy.ndarray, shape (n_points, n_params)
    outputs : numpy.ndarray, shape (n_points, n_outputs)
    output_names : tuple of str

    Raises
    ------
    IncompleteDesignError
        If some points are not done yet (the message says how many).
    StoreError
        If the store is unreadable or damaged.
    """
    p = _existing(Path(path))
    state = read_store(p)
    if not state.done.all() or state.outputs is None or state.output_names is None:
        raise IncompleteDesignError(
            f"{p}: {int((~state.done).sum())} of {state.done.size} design points are not done; "
            f"run the design again to finish it"
        )
    return state.design, state.outputs, state.output_names
