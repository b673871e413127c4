"""Give committed results folders written before the hand-off record their record.

``summary.json`` files written by earlier versions have no ``format_version`` and no
``handoff`` table, so ``replay``/``whatif``/``simulate --params`` refuse them. This adds
both, built from the summary's own content (estimates, MAP, fixed values, regime table
with names) exactly as ``mpiuq campaign run`` now writes them, and lists the posterior
files present in the folder after checking each against the SHA-256 the summary's
``run`` table recorded for it (a file the run did not record is not listed). Nothing else
of the summary changes. Prints what it did per folder.

Usage::

    python experiments/checks/add_handoff_records.py results/stampede-ib results/tcp-taurus ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mpiuq.calibration.reporting.artefacts import POSTERIOR_DRAWS_FILE, POSTERIOR_FILE
from mpiuq.calibration.reporting.handoff import (
    SUMMARY_FORMAT,
    SUMMARY_VERSION,
    build_handoff,
    file_sha256,
)
from mpiuq.surrogate.store.json_text import write_json


def migrate(folder: Path) -> str:
    path = folder / "summary.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format_version") == SUMMARY_VERSION and "sha256" in doc.get("handoff", {}):
        return "already has a hand-off record"
    run = doc.get("run") if isinstance(doc.get("run"), dict) else {}
    recorded = run.get("files", {}) if isinstance(run.get("files"), dict) else {}
    listed = []
    for name in (POSTERIOR_FILE, POSTERIOR_DRAWS_FILE):
        p = folder / name
        if p.is_file() and recorded.get(name) == file_sha256(p):
            listed.append(p)
    record = build_handoff(doc, str(run.get("fingerprint") or ""), listed)
    doc.pop("handoff", None)
    out = {"format": SUMMARY_FORMAT, "format_version": SUMMARY_VERSION, **doc}
    out["handoff"] = record.to_json()
    write_json(path, out)
    return f"hand-off record added (posterior files listed: {[p.name for p in listed]})"


def main() -> int:
    for arg in sys.argv[1:]:
        print(f"{arg}: {migrate(Path(arg))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
