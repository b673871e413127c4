"""How the replay commands hand their result over: a JSON file and a figure, then a table.

``--out DIR`` writes ``DIR/<json_name>``, the figure and ``DIR/report.html`` (the
self-contained HTML report of :mod:`mpiuq.commands.report`); ``--json`` prints the JSON
instead of the table. Commands that write a folder by default write it under
:func:`results_folder` (never into the repository's committed ``results/``).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mpiuq.surrogate.store.json_text import json_text, write_json

_NUMBER = r"(?:-?[0-9][0-9.eE+-]*|null|NaN|-?Infinity)"
#: A JSON list of numbers as ``json.dumps(..., indent=1)`` lays it out, one item a line.
_NUMBER_LIST = re.compile(rf"\[\s*({_NUMBER}(?:,\s*{_NUMBER})*)\s*\]")


#: Environment variable naming the folder commands write their results under by default.
RESULTS_ENV = "MPIUQ_RESULTS"
#: That folder when the variable is not set (relative to the working directory).
DEFAULT_RESULTS = "mpiuq-results"


def results_folder() -> Path:
    """Where commands write result folders by default: ``$MPIUQ_RESULTS`` if set, else
    ``./mpiuq-results``."""
    return Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)


def result_json(data: dict[str, Any], where: str = "") -> str:
    """``data`` as indented JSON with every list of numbers on one line.

    JSON of :func:`~mpiuq.surrogate.store.json_text.json_text`: a NaN or infinite number is
    refused (a :class:`~mpiuq.surrogate.store.json_text.NonFiniteJSONError` naming its key and
    ``where``), never written as the non-standard ``NaN``/``Infinity``.

    The per-draw values of a replay are lists of 64 or more numbers: one line each keeps
    the file readable and about a third of the size, and parses to the same object.

    >>> print(result_json({"a": {"draws": [1.5, 2, None]}}))
    {
     "a": {
      "draws": [1.5, 2, null]
     }
    }
    """
    text = json_text(data, indent=1, where=where)
    return _NUMBER_LIST.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)


def emit(
    args: argparse.Namespace,
    data: dict[str, Any],
    json_name: str,
    figure_name: str,
    plot: Callable[[Path], None],
    table: Callable[[], str],
) -> None:
    """Write ``data`` and the figure under ``args.out`` (if given) and print JSON or table.

    Parameters
    ----------
    args
        The command's options (``out``, ``json``).
    data
        The JSON-ready result.
    json_name, figure_name
        File names inside ``args.out``.
    plot
        Draws the figure into the path it is given (matplotlib is imported only then).
    table
        The human-readable table.
    """
    text = result_json(data, str(args.out / json_name) if args.out is not None else "JSON output")
    report = None
    if args.out is not None:
        from mpiuq.commands.report import write_folder_report

        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / json_name, None, text=text)  # atomic: a full disk keeps the old
        plot(args.out / figure_name)
        report = write_folder_report(args.out / json_name)
    if args.json:
        print(text)
        return
    print(table())
    if args.out is not None:
        print(f"wrote {args.out / json_name}, {args.out / figure_name} and {report}")
