"""HDF5 persistence of fitted :class:`PolynomialChaos` surrogates (file-format edge)."""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from mpiuq.surrogate.chaos.pce import PolynomialChaos
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.errors import SurrogateInputError
from mpiuq.surrogate.store.atomic_write import replace_atomically
from mpiuq.surrogate.store.hdf5_checksum import USERBLOCK_BYTES, sign, verify
from mpiuq.surrogate.store.hdf5_errors import naming_hdf5_errors

FORMAT_NAME = "mpiuq.surrogate.pce"
FORMAT_VERSION = 1
#: Largest polynomial order accepted when reading (a sanity bound on a damaged attribute).
MAX_STORED_ORDER = 64

_ARRAYS = (
    "lower",
    "upper",
    "multi_indices",
    "coefficients",
    "loo_rmse",
    "loo_rel_error",
    "train_x",
    "train_y",
)


def _strings(values: tuple[str, ...]) -> np.ndarray:
    return np.array(values, dtype=h5py.string_dtype("utf-8"))


def save_pce(pce: PolynomialChaos, path: str | os.PathLike[str]) -> None:
    """Write a surrogate to an HDF5 file (replaces ``path`` atomically).

    The file carries a checksum of its content in its HDF5 user block
    (:mod:`~mpiuq.surrogate.store.hdf5_checksum`), verified by :func:`load_pce`.

    Layout: attributes ``format``, ``version``, ``order``, ``rank``; string datasets
    ``parameter_names`` and ``output_names``; float datasets ``lower``, ``upper``
    (box, parameter units), ``multi_indices`` (int), ``coefficients``, ``loo_rmse``,
    ``loo_rel_error``, ``train_x``, ``train_y``.
    """
    arrays = {
        "lower": pce.box.lower,
        "upper": pce.box.upper,
        "multi_indices": pce.multi_indices,
        "coefficients": pce.coefficients,
        "loo_rmse": pce.loo_rmse,
        "loo_rel_error": pce.loo_rel_error,
        "train_x": pce.train_x,
        "train_y": pce.train_y,
    }
    with replace_atomically(path) as tmp:
        with naming_hdf5_errors(path), h5py.File(tmp, "w", userblock_size=USERBLOCK_BYTES) as f:
            _write_pce(f, pce, arrays)
        sign(tmp)


def _write_pce(f: h5py.File, pce: PolynomialChaos, arrays: dict[str, np.ndarray]) -> None:
    f.attrs["format"] = FORMAT_NAME
    f.attrs["version"] = FORMAT_VERSION
    f.attrs["order"] = int(pce.order)
    f.attrs["rank"] = int(pce.rank)
    f.create_dataset("parameter_names", data=_strings(pce.box.names))
    f.create_dataset("output_names", data=_strings(pce.output_names))
    for name, arr in arrays.items():
        f.create_dataset(name, data=np.asarray(arr))


def load_pce(path: str | os.PathLike[str]) -> PolynomialChaos:
    """Read a surrogate written by :func:`save_pce`; it predicts bit-identically.

    Raises
    ------
    SurrogateInputError
        If the file is missing, not a readable HDF5 file, not a surrogate file of a
        supported version, misses a dataset or holds inconsistent arrays (names the file).
    """
    p = Path(path)
    if not p.is_file():
        what = "is a folder" if p.is_dir() else "does not exist"
        raise SurrogateInputError(f"surrogate file {p} {what}: expected a file from save_pce")
    damage = verify(p)
    if damage is not None:
        raise SurrogateInputError(
            f"{p} is not a readable surrogate file ({damage}): write it again with save_pce"
        )
    try:
        return _read_pce(p)
    except SurrogateInputError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SurrogateInputError(
            f"{p} is not a readable surrogate file ({reason}): write it again with save_pce"
        ) from None


def _read_pce(p: Path) -> PolynomialChaos:
    with h5py.File(p, "r") as f:
        fmt = f.attrs.get("format")
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        if fmt != FORMAT_NAME:
            raise SurrogateInputError(
                f"{p}: not a surrogate file (format attribute {fmt!r}, expected {FORMAT_NAME!r})"
            )
        version = int(f.attrs.get("version", -1))
        if version != FORMAT_VERSION:
            raise SurrogateInputError(
                f"{p}: unsupported surrogate file version {version}, expected {FORMAT_VERSION}"
            )
        missing = [k for k in (*_ARRAYS, "parameter_names", "output_names") if k not in f]
        if missing:
            raise SurrogateInputError(f"{p}: surrogate file lacks datasets {missing}")
        data = {k: np.asarray(f[k][()]) for k in _ARRAYS}
        pnames = tuple(str(s) for s in f["parameter_names"].asstr()[()])
        onames = tuple(str(s) for s in f["output_names"].asstr()[()])
        order = int(f.attrs["order"])
        rank = int(f.attrs["rank"])

    for name in ("lower", "upper", "coefficients", "train_x", "train_y"):
        if data[name].dtype.kind != "f" or not np.all(np.isfinite(data[name])):
            raise SurrogateInputError(f"{p}: dataset {name} is invalid: expected finite floats")
    for name in ("loo_rmse", "loo_rel_error"):  # inf marks a leverage-1 point, NaN is damage
        if data[name].dtype.kind != "f" or np.any(np.isnan(data[name])):
            raise SurrogateInputError(f"{p}: dataset {name} is invalid: expected floats, no NaN")
    if data["multi_indices"].dtype.kind not in "iu":
        raise SurrogateInputError(f"{p}: dataset multi_indices is invalid: expected integers")
    if not 0 <= order <= MAX_STORED_ORDER:
        raise SurrogateInputError(f"{p}: order {order} is invalid: expected 0..{MAX_STORED_ORDER}")
    try:
        box = ParameterBox(names=pnames, lower=data["lower"], upper=data["upper"])
        return PolynomialChaos(
            box=box,
            order=order,
            multi_indices=data["multi_indices"].astype(np.int64),
            coefficients=data["coefficients"],
            output_names=onames,
            loo_rmse=data["loo_rmse"],
            loo_rel_error=data["loo_rel_error"],
            train_x=data["train_x"],
            train_y=data["train_y"],
            rank=rank,
        )
    except SurrogateInputError as exc:
        raise SurrogateInputError(f"{p}: inconsistent surrogate file ({exc})") from None
