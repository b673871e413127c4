"""The posterior path chosen for a results folder, recorded so that a resumed or repeated
run of the same campaign takes the same path.

``posterior.sampler = "auto"`` chooses between direct sampling and the corrected surrogate
by timing a simulator batch (:mod:`~mpiuq.calibration.sampling.posterior_path`), and a time depends
on the machine's load. The choice is written beside the design checkpoint
(``posterior_path.json``) with the run's fingerprint; a later run of the same campaign into
the same folder reads it instead of timing again, so a killed and resumed run gives the
same results as an uninterrupted one. A record of another campaign, or one that cannot be
read, is ignored (timed again and overwritten); ``campaign run --restart`` discards it.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, fields
from pathlib import Path

from mpiuq.calibration.sampling.posterior_path import PathChoice
from mpiuq.surrogate.store.atomic_write import replace_atomically

#: File name of the record in a results folder.
PATH_FILE = "posterior_path.json"


def read_path_choice(out_dir: Path, fingerprint: str) -> PathChoice | None:
    """The recorded choice of the run with ``fingerprint`` in ``out_dir``, or None (no
    record, another run's, or unreadable)."""
    try:
        doc = json.loads((out_dir / PATH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint:
        return None
    choice = doc.get("choice")
    names = [f.name for f in fields(PathChoice)]
    if not isinstance(choice, dict) or sorted(choice) != sorted(names):
        return None
    if choice["path"] not in ("direct", "surrogate"):
        return None
    try:
        return PathChoice(**choice)
    except TypeError:
        return None


def write_path_choice(out_dir: Path, fingerprint: str, choice: PathChoice) -> None:
    """Record ``choice`` for the run with ``fingerprint`` (written whole or not at all)."""
    text = json.dumps({"fingerprint": fingerprint, "choice": asdict(choice)}, indent=1)
    with replace_atomically(out_dir / PATH_FILE) as partial:
        partial.write_text(text + "\n", encoding="utf-8")


def discard_path_choice(out_dir: Path) -> None:
    """Remove the record (``campaign run --restart``)."""
    with contextlib.suppress(FileNotFoundError):
        (out_dir / PATH_FILE).unlink()
