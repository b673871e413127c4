"""``mpiuq report FOLDER [--out FILE]``: the self-contained HTML report of any results folder.

A campaign's folder (``summary.json``), or the ``--out`` folder of ``mpiuq replay``
(``replay.json``) or ``mpiuq whatif`` (``whatif.json``); or one of those files itself.
``mpiuq campaign run``, ``replay --out`` and ``whatif --out`` write the same report as
``report.html`` beside their results; this command writes it again (e.g. for results
made by an older version). Nothing heavy is imported: the figures are the PNGs already
in the folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

#: Result files a report can be made of, in the order they are looked for in a folder.
RESULT_FILES = ("summary.json", "whatif.json", "replay.json")
#: The report's file name inside a results folder.
REPORT_NAME = "report.html"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``report`` sub-command."""
    p = sub.add_parser(
        "report",
        help="write the self-contained HTML report of a campaign, replay or what-if folder",
        description="Write one HTML file (figures inline, no scripts) describing a results "
        "folder: a campaign's (summary.json), or replay/whatif --out (replay.json, "
        "whatif.json).",
    )
    p.add_argument(
        "folder", type=Path, help="results folder, or its summary.json, replay.json or whatif.json"
    )
    p.add_argument(
        "--out", type=Path, default=None, help=f"HTML file to write (default FOLDER/{REPORT_NAME})"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mpiuq report``."""
    print(f"wrote {write_folder_report(args.folder, args.out)}")
    return 0


def result_file(path: Path) -> Path:
    """The result file a report is made of: ``path`` itself, or the first of
    :data:`RESULT_FILES` in the folder ``path``.

    Raises
    ------
    ResultsError
        If ``path`` does not exist, is another kind of file, or the folder holds none.
    """
    from mpiuq.calibration.errors import ResultsError

    if path.is_dir():
        for name in RESULT_FILES:
            if (path / name).is_file():
                return path / name
        if (path / ".mpiuq-run.lock").is_file():  # a campaign folder: say why (running...)
            from mpiuq.calibration.reporting.artefacts import summary_file

            return summary_file(path)
        raise ResultsError(
            f"{path} holds none of {', '.join(RESULT_FILES)}: expected a campaign results "
            "folder or the --out folder of 'mpiuq replay' or 'mpiuq whatif'"
        )
    if not path.is_file():
        raise ResultsError(
            f"{path} does not exist: expected a results folder or one of {', '.join(RESULT_FILES)}"
        )
    if path.name not in RESULT_FILES:
        raise ResultsError(
            f"{path} is not a result file: expected one of {', '.join(RESULT_FILES)}"
        )
    return path


def write_folder_report(source: Path, out: Path | None = None) -> Path:
    """Write the report of the results in ``source`` (a folder or its result file) to
    ``out`` (default: ``report.html`` beside the result file); returns the path written."""
    from mpiuq.reports.html import write_report

    file = result_file(source)
    target = out if out is not None else file.parent / REPORT_NAME
    return write_report(report_html(file), target)


def report_html(file: Path) -> str:
    """The HTML report of one result file (see :data:`RESULT_FILES`)."""
    if file.name == "summary.json":
        from mpiuq.calibration.reporting.artefacts import read_summary
        from mpiuq.reports.campaign import campaign_report

        path, summary = read_summary(file)
        return campaign_report(path.parent, summary)
    from mpiuq.reports.replay import replay_report, whatif_report

    data = _read_json(file)
    make = whatif_report if file.name == "whatif.json" else replay_report
    return make(file.parent, data)


def _read_json(file: Path) -> dict[str, Any]:
    from mpiuq.calibration.errors import ResultsError

    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ResultsError(
            f"{file} is not a result file ({' '.join(str(exc).split())}): expected the JSON "
            "written by 'mpiuq replay/whatif --out'"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("trace"), dict):
        raise ResultsError(
            f"{file} is not a replay or what-if result (no 'trace' object): expected the JSON "
            "written by 'mpiuq replay/whatif --out'"
        )
    return data
