"""The one way mpiuq writes JSON: finite numbers only, files replaced atomically.

JSON has no NaN or Infinity; Python's :func:`json.dumps` writes them anyway as the bare
tokens ``NaN`` and ``Infinity``, which other JSON readers refuse. :func:`json_text`
either refuses a non-finite number (the default: a :class:`NonFiniteJSONError` naming the
key path, e.g. ``scenarios.net2x.speedup.sd = inf``) or, when the caller says so
(``nonfinite="null"``), writes it as ``null``: an explicit, documented mapping.
:func:`write_json` writes such text to a file atomically
(:func:`~mpiuq.surrogate.store.atomic_write.replace_atomically`), so a full disk leaves the
previous file and an error naming the file. :func:`read_json` reads JSON back refusing
the non-standard tokens too.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Literal

from mpiuq.surrogate.store.atomic_write import replace_atomically

__all__ = ["NonFiniteJSONError", "json_text", "read_json", "write_json"]

#: What to do with a NaN or infinite float: refuse it, or write ``null``.
NonFinite = Literal["refuse", "null"]


class NonFiniteJSONError(ValueError):
    """A value to be written as JSON is NaN or infinite (JSON has no such numbers)."""


def _finite(x: Any, path: str, nonfinite: NonFinite, where: str) -> Any:
    if isinstance(x, dict):
        return {
            k: _finite(v, f"{path}.{k}" if path else str(k), nonfinite, where) for k, v in x.items()
        }
    if isinstance(x, list | tuple):
        return [_finite(v, f"{path}[{i}]", nonfinite, where) for i, v in enumerate(x)]
    if isinstance(x, float) and not math.isfinite(x):
        if nonfinite == "null":
            return None
        raise NonFiniteJSONError(
            f"{where + ': ' if where else ''}{path or 'value'} = {x!r} is not a finite number: "
            "JSON has no NaN or Infinity (a result out of range)"
        )
    return x


def json_text(
    data: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    nonfinite: NonFinite = "refuse",
    where: str = "",
) -> str:
    """``data`` as standard JSON text.

    Parameters
    ----------
    data
        JSON-ready data (dicts, lists, strings, numbers, booleans, None).
    indent, sort_keys
        As :func:`json.dumps`.
    nonfinite
        ``"refuse"`` (default): a NaN or infinite float raises; ``"null"``: it is written
        as ``null``.
    where
        What is being written (a file name), for the error message.

    Raises
    ------
    NonFiniteJSONError
        For a NaN or infinite float with ``nonfinite="refuse"``, naming its key path.

    Examples
    --------
    >>> json_text({"a": [1.5, float("nan")]}, nonfinite="null")
    '{"a": [1.5, null]}'
    """
    clean = _finite(data, "", nonfinite, where)
    return json.dumps(clean, indent=indent, sort_keys=sort_keys, allow_nan=False)


def write_json(
    path: str | os.PathLike[str],
    data: Any,
    *,
    indent: int | None = 2,
    nonfinite: NonFinite = "refuse",
    text: str | None = None,
) -> Path:
    """Write ``data`` (or JSON ``text`` already made by :func:`json_text`) to ``path``
    atomically, with a final newline; returns the path.

    Raises
    ------
    NonFiniteJSONError
        See :func:`json_text` (nothing is written).
    OSError
        If the file cannot be written (naming it; the previous file is left as it was).
    """
    target = Path(path)
    body = (
        json_text(data, indent=indent, nonfinite=nonfinite, where=str(target))
        if text is None
        else text
    )
    with replace_atomically(target) as tmp:
        tmp.write_text(body + "\n", encoding="utf-8")
    return target


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse the JSON file ``path`` (UTF-8), refusing ``NaN`` and ``Infinity`` tokens.

    Raises
    ------
    OSError
        If the file cannot be read.
    UnicodeDecodeError, ValueError
        If it is not UTF-8 standard JSON (:class:`json.JSONDecodeError` is a ValueError).
    """
    text = Path(path).read_text(encoding="utf-8")
    return json.loads(text, parse_constant=_refuse_constant)
