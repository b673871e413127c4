"""CSV tables and design sidecars: the file edge used by the ``mpiuq surrogate`` CLI.

A table is a CSV file with a header of names and one numeric row per point.  A design
written by :func:`write_design_csv` gets a JSON sidecar ``<csv>.json`` holding the
parameter box, so that ``fit`` can recover the bounds of any external simulator's design.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.errors import SurrogateInputError
from mpiuq.surrogate.store.atomic_write import replace_atomically
from mpiuq.surrogate.store.json_text import write_json
from mpiuq.surrogate.store.text_input import not_a_file, other_separator, read_text

SIDECAR_FORMAT = "mpiuq.surrogate.design"


def sidecar_path(csv_path: str | os.PathLike[str]) -> Path:
    """``design.csv`` -> ``design.csv.json``."""
    p = Path(csv_path)
    return p.with_name(p.name + ".json")


def write_table_csv(path: str | os.PathLike[str], names: Sequence[str], values: np.ndarray) -> None:
    """Write a header of ``names`` and one row per line of ``values`` (full precision).

    The file is replaced atomically: a kill leaves the old file or the new one.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise SurrogateInputError(
            f"table of shape {arr.shape} does not match {len(names)} column names"
        )
    with replace_atomically(path) as tmp, tmp.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        writer.writerows([[repr(float(v)) for v in row] for row in arr])


def read_table_csv(
    path: str | os.PathLike[str], max_abs: float | None = None
) -> tuple[tuple[str, ...], np.ndarray]:
    """Read a numeric CSV table with a header row.

    Parameters
    ----------
    path
        UTF-8 CSV file (an optional byte-order mark is ignored).
    max_abs
        Largest magnitude allowed for a cell (default: any finite number).

    Returns
    -------
    names : tuple of str
        Column names (stripped).
    values : numpy.ndarray, shape (n_rows, n_columns)

    Raises
    ------
    SurrogateInputError
        Missing file or folder, text that is not UTF-8 or not CSV, an empty file, blank or
        repeated column names, ragged rows, or cells that are not finite numbers within
        ``max_abs``; the message names the file, the line and the column.
    """
    p = Path(path)
    what = not_a_file(p)
    if what is not None:
        raise SurrogateInputError(f"{p} {what}: expected a CSV file with a header row of names")
    text, why = read_text(p)
    if text is None:
        raise SurrogateInputError(f"{p}: {why}: expected a CSV table")
    rows: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    line = 0
    try:
        for row in reader:
            line = reader.line_num
            if row and any(c.strip() for c in row):
                rows.append((line, row))
    except csv.Error as exc:
        raise SurrogateInputError(f"{p}, line {line + 1}: malformed CSV ({exc})") from None
    if not rows:
        raise SurrogateInputError(f"{p}: empty file, expected a header row of names")
    names = tuple(c.strip() for c in rows[0][1])
    separator = other_separator(",".join(rows[0][1])) if len(names) == 1 else None
    if separator is not None:
        raise SurrogateInputError(
            f"{p}: its fields are separated by {separator}: expected a comma-separated "
            "table (save it as CSV with commas; decimal points, not commas)"
        )
    if any(not n for n in names):
        raise SurrogateInputError(f"{p}: blank column name in header {list(names)[:20]}")
    if not all(n.isprintable() for n in names):
        raise SurrogateInputError(
            f"{p}: column names {list(names)[:20]} are invalid: expected printable text"
        )
    if len(set(names)) != len(names):
        raise SurrogateInputError(f"{p}: repeated column names in header {list(names)[:20]}")
    values = np.empty((len(rows) - 1, len(names)))
    for i, (line, row) in enumerate(rows[1:]):
        if len(row) != len(names):
            raise SurrogateInputError(
                f"{p}, line {line}: {len(row)} cells, expected {len(names)} ({list(names)[:20]})"
            )
        for j, cell in enumerate(row):
            try:
                value = float(cell)
            except ValueError:
                raise SurrogateInputError(
                    f"{p}, line {line}, column {names[j]!r}: {_short(cell)} is not a number"
                ) from None
            if not math.isfinite(value) or (max_abs is not None and abs(value) > max_abs):
                bound = "" if max_abs is None else f" of magnitude at most {max_abs:g}"
                raise SurrogateInputError(
                    f"{p}, line {line}, column {names[j]!r}: {_short(cell)} is out of range: "
                    f"expected a finite number{bound}"
                )
            values[i, j] = value
    if values.shape[0] == 0:
        raise SurrogateInputError(f"{p}: no data rows after the header")
    return names, values


def _short(value: str, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    write_json(side, doc)
    return side


def read_design_sidecar(csv_path: str | os.PathLike[str]) -> ParameterBox | None:
    """The box stored next to a design CSV, or ``None`` if there is no sidecar."""
    side = sidecar_path(csv_path)
    if not side.exists():
        return None
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
        params = doc["parameters"]
        if not isinstance(params, list):
            raise TypeError(f"'parameters' is {type(params).__name__}")
        bounds = {str(p["name"]): (float(p["lower"]), float(p["upper"])) for p in params}
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
        raise SurrogateInputError(
            f"{side}: unreadable design sidecar ({exc}); expected 'parameters' as a list of "
            f"{{name, lower, upper}}"
        ) from None
    try:
        return ParameterBox.from_bounds(bounds)
    except SurrogateInputError as exc:
        raise SurrogateInputError(f"{side}: {exc}") from None


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
