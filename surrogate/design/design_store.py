"""The on-disk checkpoint of a design run: an HDF5 store written whole, plus a journal.

``<store>`` (HDF5) is only ever written whole, to a temporary name that is then renamed
over it (:mod:`~mpiuq.surrogate.store.atomic_write`): once when the run starts (design,
fingerprint, nothing done) and once when every point is done (outputs added:
*consolidation*).  Results in between go to the append-only ``<store>.journal``
(:mod:`~mpiuq.surrogate.store.store_journal`).  So a kill at any moment leaves a readable store,
and resuming reads the store, replays the journal's whole records and computes the rest.

Layout of the HDF5 file: attributes ``format`` (:data:`STORE_FORMAT`), ``fingerprint``
(SHA-256 of the design and the model identity), ``model_id``, ``model_description``
(for messages) and, once consolidated, ``outputs_sha256``; datasets ``design``,
``done`` (bool per point) and, once consolidated, ``outputs`` and ``output_names``. The
whole file is signed (:mod:`~mpiuq.surrogate.store.hdf5_checksum`) and verified before h5py
reads it; a file without that signature is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from mpiuq.surrogate.errors import DesignMismatchError, StoreError, StoreWriteError
from mpiuq.surrogate.store.atomic_write import replace_atomically
from mpiuq.surrogate.store.hdf5_checksum import USERBLOCK_BYTES, sign, verify
from mpiuq.surrogate.store.hdf5_errors import naming_hdf5_errors
from mpiuq.surrogate.store.store_journal import JournalContent, journal_path, read_journal

STORE_FORMAT = "mpiuq.surrogate.design-run"

#: Moments of store creation, journal writing and consolidation at which :data:`phase_hook` is called (tests
#: kill the process there to check that every moment resumes).
CREATE_PHASES = ("create:opened", "create:written", "create:closed", "create:renamed")
JOURNAL_PHASES = ("journal:opened", "journal:record")
CONSOLIDATE_PHASES = (
    "consolidate:opened",
    "consolidate:written",
    "consolidate:closed",
    "consolidate:renamed",
    "consolidate:done",
)

#: Called with the name of each phase reached; None in normal use (tests set it).
phase_hook: Callable[[str], None] | None = None


def reached(phase: str) -> None:
    """Report a phase to :data:`phase_hook` (a no-op unless a test set it)."""
    if phase_hook is not None:
        phase_hook(phase)


def _fix(path: Path) -> str:
    return (
        f"delete {path} (and {journal_path(path).name}) or run again with --restart to start over"
    )


@dataclass(frozen=True, slots=True)
class StoreState:
    """Everything a store and its journal hold.

    Attributes
    ----------
    fingerprint, model_id, model_description
        Identity of the run (see :func:`design_fingerprint`).
    design
        Points, shape (n_points, n_params).
    done
        Points with outputs, shape (n_points,).
    outputs
        Outputs (NaN where not done), shape (n_points, n_outputs), or None before any.
    output_names
        Names of the outputs, or None before any.
    journal
        The journal's valid content (``header`` None if there is no usable journal).
    consolidated
        Whether the HDF5 file itself holds every output.
    """

    fingerprint: str
    model_id: str
    model_description: str
    design: np.ndarray
    done: np.ndarray
    outputs: np.ndarray | None
    output_names: tuple[str, ...] | None
    journal: JournalContent
    consolidated: bool

    @property
    def n_done(self) -> int:
        """Points done."""
        return int(self.done.sum())


def design_fingerprint(design: np.ndarray, identity: str) -> str:
    """SHA-256 of the design's shape and float64 values and the model identity."""
    arr = np.ascontiguousarray(design, dtype="<f8")
    h = hashlib.sha256(b"mpiuq-design-run-v1")
    h.update(np.asarray(arr.shape, dtype="<i8").tobytes())
    h.update(arr.tobytes())
    h.update(identity.encode("utf-8"))
    return h.hexdigest()


def outputs_digest(outputs: np.ndarray) -> str:
    """SHA-256 of float64 outputs (shape and bits)."""
    arr = np.ascontiguousarray(outputs, dtype="<f8")
    h = hashlib.sha256(np.asarray(arr.shape, dtype="<i8").tobytes())
    h.update(arr.tobytes())
    return h.hexdigest()


def _attr_text(f: h5py.File, name: str) -> str | None:
    value = f.attrs.get(name)
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_store(path: Path) -> StoreState:
    """Read a store and replay its journal (read only).

    Raises
    ------
    StoreError
        If the file is not a readable design store or its content is damaged (names the
        file and the fix).
    """
    damage = verify(path)
    if damage is not None:
        raise StoreError(f"{path} is not a readable design store ({damage}): {_fix(path)}")
    try:
        with h5py.File(path, "r") as f:
            fmt = _attr_text(f, "format")
            if fmt != STORE_FORMAT:
                raise StoreError(
                    f"{path} is not a design-run store (format {fmt!r}, expected "
                    f"{STORE_FORMAT!r}): {_fix(path)}"
                )
            fingerprint = _attr_text(f, "fingerprint") or ""
            model_id = _attr_text(f, "model_id") or ""
            description = _attr_text(f, "model_description") or ""
            digest = _attr_text(f, "outputs_sha256")
            design = np.asarray(f["design"][()], dtype=np.float64)
            done = np.asarray(f["done"][()], dtype=bool)
            outputs = np.asarray(f["outputs"][()], dtype=np.float64) if "outputs" in f else None
            names = (
                tuple(str(s) for s in f["output_names"].asstr()[()])
                if "output_names" in f
                else None
            )
    except StoreError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
        raise StoreError(
            f"{path} is not a readable design store ({' '.join(str(exc).split()) or type(exc).__name__}): "
            f"{_fix(path)}"
        ) from None
    n = design.shape[0] if design.ndim == 2 else -1
    if (
        design.ndim != 2
        or done.shape != (n,)
        or (outputs is not None and (outputs.ndim != 2 or outputs.shape[0] != n))
        or (names is not None and (outputs is None or len(names) != outputs.shape[1]))
        or (outputs is None and bool(done.any()))
        or design_fingerprint(design, model_id) != fingerprint
    ):
        raise StoreError(
            f"{path} is damaged (its design does not match its fingerprint): {_fix(path)}"
        )
    consolidated = bool(done.all()) and outputs is not None
    if digest is not None and (outputs is None or outputs_digest(outputs) != digest):
        raise StoreError(
            f"{path} is damaged (its outputs do not match their checksum): {_fix(path)}"
        )
    journal = _usable_journal(read_journal(journal_path(path)), fingerprint, n, outputs, names)
    if journal.header is not None and journal.indices.size:
        m = journal.header.n_outputs
        if outputs is None:
            outputs = np.full((n, m), np.nan)
            names = journal.header.output_names
        outputs = outputs.copy()
        outputs[journal.indices] = journal.outputs
        done = done.copy()
        done[journal.indices] = True
    return StoreState(
        fingerprint, model_id, description, design, done, outputs, names, journal, consolidated
    )


def _usable_journal(
    journal: JournalContent,
    fingerprint: str,
    n_points: int,
    outputs: np.ndarray | None,
    names: tuple[str, ...] | None,
) -> JournalContent:
    """The journal if it belongs to this store, else an empty one (to be overwritten)."""
    h = journal.header
    if h is None:
        return journal
    belongs = h.fingerprint == fingerprint and h.n_points == n_points
    if outputs is not None:
        belongs = belongs and h.n_outputs == outputs.shape[1]
    if names is not None:
        belongs = belongs and h.output_names == names
    if belongs:
        return journal
    return JournalContent(None, journal.indices[:0], journal.outputs[:0], 0, journal.total_bytes)


def create_store(
    path: Path, design: np.ndarray, fingerprint: str, model_id: str, description: str
) -> None:
    """Write a new store with nothing done (atomically; a journal left there is removed).

    Raises
    ------
    StoreWriteError
        If the file cannot be written (names the file).
    """
    with contextlib.suppress(FileNotFoundError):
        journal_path(path).unlink()
    attrs = {"format": STORE_FORMAT, "fingerprint": fingerprint, "model_id": model_id}
    attrs["model_description"] = description
    _write_whole(
        path,
        attrs,
        {"design": design, "done": np.zeros(design.shape[0], dtype=bool)},
        CREATE_PHASES,
        "create the design store",
    )


def consolidate(path: Path, state: StoreState) -> None:
    """Rewrite a finished store with all outputs (atomically) and remove its journal.

    Raises
    ------
    StoreWriteError
        If the file cannot be written (names the file; the journal keeps the results).
    """
    if state.outputs is None or state.output_names is None or not state.done.all():
        raise StoreError(f"{path}: cannot consolidate a run that is not finished")
    attrs = {
        "format": STORE_FORMAT,
        "fingerprint": state.fingerprint,
        "model_id": state.model_id,
        "model_description": state.model_description,
        "outputs_sha256": outputs_digest(state.outputs),
    }
    datasets = {
        "design": state.design,
        "done": state.done,
        "outputs": state.outputs,
        "output_names": np.array(state.output_names, dtype=h5py.string_dtype("utf-8")),
    }
    _write_whole(path, attrs, datasets, CONSOLIDATE_PHASES[:4], "write the finished design store")
    drop_journal(path)
    reached(CONSOLIDATE_PHASES[4])


def drop_journal(path: Path) -> None:
    """Remove the journal of a consolidated store (its records are all in the store)."""
    with contextlib.suppress(FileNotFoundError):
        journal_path(path).unlink()


def _write_whole(
    path: Path,
    attrs: dict[str, str],
    datasets: dict[str, np.ndarray],
    phases: Sequence[str],
    action: str,
) -> None:
    try:
        with replace_atomically(path) as tmp:
            with naming_hdf5_errors(path), h5py.File(tmp, "w", userblock_size=USERBLOCK_BYTES) as f:
                reached(phases[0])
                for key, text in attrs.items():
                    f.attrs[key] = text
                for key, array in datasets.items():
                    f.create_dataset(key, data=array)
                reached(phases[1])
            sign(tmp)
            reached(phases[2])
        reached(phases[3])
    except (OSError, RuntimeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StoreWriteError(
            f"{path}: cannot {action} ({' '.join(reason.split())}); the run stopped: free "
            "disk space or fix the folder's permissions and run the same command again"
        ) from exc


def discard_store(path: Path) -> None:
    """Remove a store, its journal and its temporary files (``--restart``)."""
    for p in (path, journal_path(path), *path.parent.glob(f"{path.name}.partial-*")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def mismatch_error(
    path: Path,
    state: StoreState,
    design: np.ndarray,
    model_id: str,
    description: str,
    output_names: Sequence[str] | None,
) -> DesignMismatchError | None:
    """A :class:`DesignMismatchError` saying what differs between a store and a request.

    Returns None if the store belongs to this design, model and output names.
    """
    differences = _design_differences(state.design, design)
    if state.model_id != model_id:
        diff = f"stored model {state.model_id!r}, requested model {model_id!r}"
        if state.model_description and description and state.model_description != description:
            diff += f" ({_text_difference(state.model_description, description)})"
        differences.append(diff)
    elif not differences and state.fingerprint != design_fingerprint(design, model_id):
        differences.append("stored fingerprint differs")  # pragma: no cover - hash collision
    stored_names = state.output_names
    if (
        output_names is not None
        and stored_names is not None
        and tuple(output_names) != stored_names
    ):
        differences.append(
            f"stored output names {stored_names[:8]}, requested {tuple(output_names)[:8]}"
        )
    if not differences:
        return None
    return DesignMismatchError(
        f"{path} holds a run of another design or model: {'; '.join(differences)}. Run with "
        "--restart to discard it (or use another store or folder)"
    )


def _design_differences(stored: np.ndarray, requested: np.ndarray) -> list[str]:
    if stored.shape != requested.shape:
        return [f"stored design of shape {stored.shape}, requested {requested.shape}"]
    differ = np.flatnonzero(np.any(stored != requested, axis=1))
    if differ.size == 0:
        return []
    i = int(differ[0])
    out = [
        f"{differ.size} of the {stored.shape[0]} points of the design of shape "
        f"{stored.shape} differ, first point {i}: stored {stored[i].tolist()}, requested "
        f"{requested[i].tolist()}"
    ]
    lo_s, hi_s = stored.min(axis=0), stored.max(axis=0)
    lo_r, hi_r = requested.min(axis=0), requested.max(axis=0)
    for j in np.flatnonzero((lo_s != lo_r) | (hi_s != hi_r))[:4]:
        out.append(
            f"column {int(j)} spans [{lo_s[j]:.6g}, {hi_s[j]:.6g}] stored, "
            f"[{lo_r[j]:.6g}, {hi_r[j]:.6g}] requested"
        )
    return out


def _text_difference(a: str, b: str, context: int = 30) -> str:
    """``...window=64...`` vs ``...window=32...`` around the first differing character."""
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, i - context)

    def cut(s: str) -> str:
        return (
            ("..." if start else "")
            + s[start : i + context]
            + ("..." if i + context < len(s) else "")
        )

    return f"stored {cut(a)!r} vs requested {cut(b)!r}"
