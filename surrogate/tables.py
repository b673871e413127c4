"""CSV tables and design sidecars: the file edge used by the ``mpiuq surrogate`` CLI.

A table is a CSV file with a header of names and one numeric row per point.  A design
written by :func:`write_design_csv` gets a JSON sidecar ``<csv>.json`` holding the
parameter box, so that ``fit`` can recover the bounds of any external simulator's design.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.surrogate.box import ParameterBox
from mpiuq.surrogate.errors import SurrogateInputError

SIDECAR_FORMAT = "mpiuq.surrogate.design"


def sidecar_path(csv_path: str | os.PathLike[str]) -> Path:
    """``design.csv`` -> ``design.csv.json``."""
    p = Path(csv_path)
    return p.with_name(p.name + ".json")


def write_table_csv(path: str | os.PathLike[str], names: Sequence[str], values: np.ndarray) -> None:
    """Write a header of ``names`` and one row per line of ``values`` (full precision)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise SurrogateInputError(
            f"table of shape {arr.shape} does not match {len(names)} column names"
        )
    with Path(path).open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        writer.writerows([[repr(float(v)) for v in row] for row in arr])


def read_table_csv(path: str | os.PathLike[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """Read a numeric CSV table with a header row.

    Returns
    -------
    names : tuple of str
        Column names (stripped).
    values : numpy.ndarray, shape (n_rows, n_columns)

    Raises
    ------
    SurrogateInputError
        Empty file, blank or repeated column names, ragged rows or non-numeric cells; the
        message names the file, the line and the column.
    """
    p = Path(path)
    with p.open(newline="") as f:
        rows = [row for row in csv.reader(f) if row and any(c.strip() for c in row)]
    if not rows:
        raise SurrogateInputError(f"{p}: empty file, expected a header row of names")
    names = tuple(c.strip() for c in rows[0])
    if any(not n for n in names):
        raise SurrogateInputError(f"{p}: blank column name in header {list(names)}")
    if len(set(names)) != len(names):
        raise SurrogateInputError(f"{p}: repeated column names in header {list(names)}")
    values = np.empty((len(rows) - 1, len(names)))
    for i, row in enumerate(rows[1:]):
        line = i + 2
        if len(row) != len(names):
            raise SurrogateInputError(
                f"{p}, line {line}: {len(row)} cells, expected {len(names)} ({list(names)})"
            )
        for j, cell in enumerate(row):
            try:
                values[i, j] = float(cell)
            except ValueError:
                raise SurrogateInputError(
                    f"{p}, line {line}, column {names[j]!r}: {cell!r} is not a number"
                ) from None
    if values.shape[0] == 0:
        raise SurrogateInputError(f"{p}: no data rows after the header")
    return names, values


def write_design_csv(
    path: str | os.PathLike[str],
    box: ParameterBox,
    design: np.ndarray,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write a design CSV and its sidecar ``<path>.json``; returns the sidecar path.

    The sidecar holds ``format``, ``parameters`` (list of ``{name, lower, upper}``),
    ``n_points`` and any ``meta`` entries (e.g. the level or seed).
    """
    write_table_csv(path, box.names, design)
    side = sidecar_path(path)
    doc: dict[str, Any] = {
        "format": SIDECAR_FORMAT,
        "parameters": [
            {"name": n, "lower": lo, "upper": hi} for n, (lo, hi) in box.bounds().items()
        ],
        "n_points": int(np.asarray(design).shape[0]),
    }
    doc.update(meta or {})
    side.write_text(json.dumps(doc, indent=2) + "\n")
    return side


def read_design_sidecar(csv_path: str | os.PathLike[str]) -> ParameterBox | None:
    """The box stored next to a design CSV, or ``None`` if there is no sidecar."""
    side = sidecar_path(csv_path)
    if not side.exists():
        return None
    try:
        doc = json.loads(side.read_text())
        params = doc["parameters"]
        bounds = {str(p["name"]): (float(p["lower"]), float(p["upper"])) for p in params}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise SurrogateInputError(
            f"{side}: unreadable design sidecar ({exc}); expected 'parameters' as a list of "
            f"{{name, lower, upper}}"
        ) from None
    return ParameterBox.from_bounds(bounds)


def json_safe(value: Any) -> Any:
    """Recursively turn numpy scalars/arrays into JSON values; non-finite floats -> None."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
