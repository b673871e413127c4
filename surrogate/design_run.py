"""Evaluate a batched model over a design, checkpointed in HDF5 and restartable.

The store (one HDF5 file) holds the design, a done-mask, the outputs (NaN until done),
the output names and a fingerprint of the design and the model identity.  Points are
evaluated in chunks through an :class:`~mpiuq.surrogate.executors.Executor`; each
finished chunk is written and flushed before progress is reported, so a run killed
midway and started again with the same design and model computes only the missing
points.  Starting it against a different design or model raises
:class:`~mpiuq.surrogate.errors.DesignMismatchError` instead of mixing results.

Results do not depend on the executor or the chunk size as long as the model is
evaluated point by point (row ``i`` of its output depends on row ``i`` of its input only).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
from numpy.typing import ArrayLike

from mpiuq.surrogate.errors import (
    DesignMismatchError,
    DesignRunError,
    IncompleteDesignError,
    SurrogateInputError,
)
from mpiuq.surrogate.executors import Executor, InProcessExecutor

#: A batched model: ``(n_points, n_params)`` parameters -> ``(n_points, n_outputs)`` outputs.
Model = Callable[[np.ndarray], ArrayLike]

STORE_FORMAT = "mpiuq.surrogate.design-run"


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


def design_fingerprint(design: np.ndarray, identity: str) -> str:
    """SHA-256 of the design's shape and float64 values and the model identity."""
    arr = np.ascontiguousarray(design, dtype="<f8")
    h = hashlib.sha256(b"mpiuq-design-run-v1")
    h.update(np.asarray(arr.shape, dtype="<i8").tobytes())
    h.update(arr.tobytes())
    h.update(identity.encode("utf-8"))
    return h.hexdigest()


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


def _open_store(path: Path, design: np.ndarray, fingerprint: str, identity: str) -> h5py.File:
    if path.exists():
        f = h5py.File(path, "a")
        stored = f.attrs.get("fingerprint")
        if f.attrs.get("format") != STORE_FORMAT or stored != fingerprint:
            shape = f["design"].shape if "design" in f else None
            other = f.attrs.get("model_id")
            f.close()
            raise DesignMismatchError(
                f"{path} holds a run of another design or model (stored design shape "
                f"{shape}, model {other!r}; requested shape {design.shape}, model "
                f"{identity!r}); use another file or delete it to start over"
            )
        return f
    f = h5py.File(path, "w")
    f.attrs["format"] = STORE_FORMAT
    f.attrs["fingerprint"] = fingerprint
    f.attrs["model_id"] = identity
    f.create_dataset("design", data=design)
    f.create_dataset("done", data=np.zeros(design.shape[0], dtype=bool))
    f.flush()
    return f


def _check_names(f: h5py.File, output_names: Sequence[str] | None, path: Path) -> None:
    if output_names is None or "output_names" not in f:
        return
    stored = tuple(str(s) for s in f["output_names"].asstr()[()])
    if stored != tuple(output_names):
        raise DesignMismatchError(
            f"{path}: stored output names {stored} differ from requested {tuple(output_names)}"
        )


def _index(idx: np.ndarray) -> slice | np.ndarray:
    if idx.size and idx[-1] - idx[0] + 1 == idx.size:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def _store_outputs(
    f: h5py.File,
    idx: np.ndarray,
    result: ArrayLike,
    output_names: Sequence[str] | None,
    path: Path,
) -> None:
    y = np.asarray(result, dtype=float)
    if y.ndim == 1 and y.shape[0] == idx.size:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] != idx.size or y.shape[1] == 0:
        raise DesignRunError(
            f"model returned shape {y.shape} for a chunk of {idx.size} points; expected "
            f"({idx.size}, n_outputs)"
        )
    if "outputs" not in f:
        names = (
            tuple(output_names)
            if output_names is not None
            else tuple(f"y{k}" for k in range(y.shape[1]))
        )
        if len(names) != y.shape[1]:
            raise DesignRunError(
                f"model returned {y.shape[1]} outputs but {len(names)} output names were "
                f"given: {names}"
            )
        n = f["design"].shape[0]
        f.create_dataset(
            "outputs",
            shape=(n, y.shape[1]),
            dtype=float,
            fillvalue=np.nan,
            chunks=(min(n, 1024), y.shape[1]),
        )
        f.create_dataset("output_names", data=np.array(names, dtype=h5py.string_dtype()))
    elif f["outputs"].shape[1] != y.shape[1]:
        raise DesignRunError(
            f"{path}: model returned {y.shape[1]} outputs but the store holds "
            f"{f['outputs'].shape[1]}"
        )
    sel = _index(idx)
    f["outputs"][sel] = y
    f["done"][sel] = True
    f.flush()


def run_design(
    model: Model,
    design: ArrayLike,
    path: str | os.PathLike[str],
    executor: Executor | None = None,
    chunk_size: int = 128,
    output_names: Sequence[str] | None = None,
    model_id: str = "",
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

    Yields
    ------
    DesignProgress
        Once at the start (points already done) and after each chunk is stored.

    Raises
    ------
    DesignMismatchError
        ``path`` holds a run of another design, model identity or output names.
    DesignRunError
        The model returned outputs of the wrong shape or raised (chained).
    """
    arr = _validate_design(design)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise SurrogateInputError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    store = Path(path)
    identity = model_identity(model, model_id)
    f = _open_store(store, arr, design_fingerprint(arr, identity), identity)
    try:
        _check_names(f, output_names, store)
        done = np.asarray(f["done"][()], dtype=bool)
        missing = np.flatnonzero(~done)
        chunks = [missing[i : i + chunk_size] for i in range(0, missing.size, chunk_size)]
        n_total, n_done, n_computed = arr.shape[0], int(done.sum()), 0
        start = time.perf_counter()

        def progress() -> DesignProgress:
            elapsed = time.perf_counter() - start
            rate = n_computed / elapsed if n_computed and elapsed > 0 else 0.0
            left = n_total - n_done
            eta = 0.0 if left == 0 else (left / rate if rate > 0 else float("inf"))
            return DesignProgress(n_done, n_total, n_computed, elapsed, rate, eta)

        yield progress()
        runner = executor if executor is not None else InProcessExecutor()
        results = runner.map_unordered(model, [arr[idx] for idx in chunks])
        try:
            while True:
                try:
                    k, result = next(results)
                except StopIteration:
                    break
                except Exception as exc:
                    raise DesignRunError(f"model evaluation failed: {exc}") from exc
                _store_outputs(f, chunks[k], result, output_names, store)
                n_done += chunks[k].size
                n_computed += chunks[k].size
                yield progress()
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
    finally:
        f.close()


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
    """``(n_done, n_total)`` of a design store."""
    with h5py.File(Path(path), "r") as f:
        _check_format(f, Path(path))
        done = np.asarray(f["done"][()], dtype=bool)
    return int(done.sum()), int(done.size)


def _check_format(f: h5py.File, path: Path) -> None:
    if f.attrs.get("format") != STORE_FORMAT:
        raise SurrogateInputError(f"{path} is not a design-run store (format {STORE_FORMAT})")


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
    """
    p = Path(path)
    with h5py.File(p, "r") as f:
        _check_format(f, p)
        done = np.asarray(f["done"][()], dtype=bool)
        if not done.all() or "outputs" not in f:
            raise IncompleteDesignError(
                f"{p}: {int((~done).sum())} of {done.size} design points are not done; "
                f"run the design again to finish it"
            )
        design = np.asarray(f["design"][()])
        outputs = np.asarray(f["outputs"][()])
        names = tuple(str(s) for s in f["output_names"].asstr()[()])
    return design, outputs, names
