"""How the replay commands hand their result over: a JSON file and a figure, then a table.

``--out DIR`` writes ``DIR/<json_name>`` and the figure; ``--json`` prints the JSON
instead of the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


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
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / json_name).write_text(json.dumps(data, indent=1) + "\n")
        plot(args.out / figure_name)
    if args.json:
        json.dump(data, sys.stdout, indent=1)
        print()
        return
    print(table())
    if args.out is not None:
        print(f"wrote {args.out / json_name} and {args.out / figure_name}")
