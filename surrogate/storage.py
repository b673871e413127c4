"""HDF5 persistence of fitted :class:`PolynomialChaos` surrogates (file-format edge)."""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from mpiuq.surrogate.box import ParameterBox
from mpiuq.surrogate.errors import SurrogateInputError
from mpiuq.surrogate.pce import PolynomialChaos

FORMAT_NAME = "mpiuq.surrogate.pce"
FORMAT_VERSION = 1

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
    """Write a surrogate to an HDF5 file (overwrites ``path``).

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
    with h5py.File(Path(path), "w") as f:
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
        If the file is not a surrogate file of a supported version or misses a dataset.
    """
    p = Path(path)
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
