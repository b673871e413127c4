"""Write a finished campaign's result files: the file edge of the calibration layer.

The pipeline (:func:`~mpiuq.calibration.pipeline.campaign.run_campaign`) returns a frozen
:class:`~mpiuq.calibration.reporting.campaign_result.CampaignResult`; this module alone turns it
into files in the results folder:

``surrogate.h5``
    the global polynomial chaos over the prior (:func:`mpiuq.surrogate.store.storage.save_pce`);
``surrogate_local.h5``
    the final local chaos of the refinement around the posterior;
``posterior.nc``
    ArviZ InferenceData (:func:`mpiuq.calibration.reporting.report.inference_data`);
``posterior_draws.nc``
    its posterior draws of every parameter (small enough to commit; what
    :func:`mpiuq.calibration.reporting.calibrated.load_posterior_draws` reads when ``posterior.nc``
    is absent);
``summary.json``
    ``format``/``format_version`` (:data:`~.handoff.SUMMARY_FORMAT`, version
    :data:`~.handoff.SUMMARY_VERSION`), the summary of
    :func:`mpiuq.calibration.reporting.report.summary_dict`, plus what the caller adds (figure
    names, plot timings), ``run``: the run's fingerprint and the SHA-256 of every file the
    run wrote, and ``handoff``: the calibration hand-off record
    (:class:`~mpiuq.calibration.reporting.handoff.Handoff`: estimates, fixed values, regime table
    with names, the posterior files' sizes and SHA-256), read back as a unit by
    :func:`~mpiuq.calibration.reporting.handoff.verified_handoff`;
``report.html``
    the self-contained report the CLI writes from ``summary.json`` and the figures
    (a view: not listed in ``run``, rewritten by ``mpiuq campaign report``).

The working files ``surrogate.h5``, ``surrogate_local.h5`` and ``posterior.nc``
(:data:`WORKING_FILES`) are large and read by nothing downstream (replay and what-if
read ``posterior_draws.nc`` when ``posterior.nc`` is absent): a results folder kept or
committed without them is complete, and :func:`result_file_states` says "not kept"
instead of "missing" for them.

Completeness: every file is written to a temporary name and renamed into place, and
``summary.json`` is written last, so a folder with a ``summary.json`` holds a finished
run. A new run first moves the previous run's ``summary.json`` and the files it lists to
``previous-run/`` (:func:`set_aside_previous_results`), so a run killed midway never
leaves the previous run's results looking current; they come back if the new run is
refused before it starts, and are removed once it has finished.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiuq.calibration.errors import ResultsError
from mpiuq.calibration.reporting.handoff import (
    SUMMARY_FORMAT,
    SUMMARY_VERSION,
    build_handoff,
    external_simulator,
    file_sha256,
)
from mpiuq.surrogate.store.atomic_write import replace_atomically
from mpiuq.surrogate.store.hdf5_errors import naming_hdf5_errors
from mpiuq.surrogate.store.json_text import write_json

if TYPE_CHECKING:  # reading a results folder needs neither (nor SciPy and h5py behind them)
    from mpiuq.calibration.config import Campaign
    from mpiuq.calibration.reporting.campaign_result import CampaignResult

SURROGATE_FILE = "surrogate.h5"
LOCAL_SURROGATE_FILE = "surrogate_local.h5"
POSTERIOR_FILE = "posterior.nc"
POSTERIOR_DRAWS_FILE = "posterior_draws.nc"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
#: Files a run writes that a results folder may go without (large; nothing reads them
#: after the run; a re-run writes them again): see the module docstring.
WORKING_FILES = frozenset({SURROGATE_FILE, LOCAL_SURROGATE_FILE, POSTERIOR_FILE})
try:
    MPIUQ_VERSION = importlib.metadata.version("mpiuq")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a copy
    MPIUQ_VERSION = "unknown"
#: Where the previous run's results wait while a new run is in progress.
PREVIOUS_RUN_DIR = "previous-run"
#: Held (``flock``, exclusive) by the run writing the folder; the kernel drops it when the
#: process ends, however it ends.
LOCK_FILE = ".mpiuq-run.lock"
#: The resumable design checkpoint of :func:`~mpiuq.calibration.pipeline.campaign.run_campaign`.
DESIGN_FILE = "design.h5"


@contextlib.contextmanager
def hold_results_folder(out_dir: str | Path) -> Iterator[Path]:
    """Hold ``out_dir`` for one run: a second run on the same folder is refused.

    Two runs writing one folder would interleave design chunks and result files. The
    lock is an exclusive ``flock`` on ``<out_dir>/.mpiuq-run.lock`` (holding the
    holder's process id), released when the block ends or the process dies.

    Raises
    ------
    ResultsError
        If another process holds the folder (the message names the folder and its pid).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise ResultsError(
                f"{out}/ is being written by another mpiuq run (process {holder}); wait for "
                "it to finish or choose another folder with --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield out
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def run_holder(out_dir: str | Path) -> int | None:
    """Process id of the run holding ``out_dir`` now (:func:`hold_results_folder`), or None.

    Probes the lock with a shared, non-blocking ``flock`` (released at once), so it
    never waits; a lock file left by a finished run is not held.
    """
    path = Path(out_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def write_result_files(result: CampaignResult, out_dir: str | Path) -> list[Path]:
    """Write ``surrogate.h5``, ``surrogate_local.h5``, ``posterior.nc`` and
    ``posterior_draws.nc`` into ``out_dir`` (each atomically).

    Returns the paths written.
    """
    from mpiuq.calibration.reporting.report import inference_data  # arviz import only when needed
    from mpiuq.surrogate.store.storage import save_pce

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    surrogate = out / SURROGATE_FILE
    save_pce(result.surrogate, surrogate)
    local = out / LOCAL_SURROGATE_FILE
    save_pce(result.main.proposal.surrogate, local)
    posterior = out / POSTERIOR_FILE
    idata = inference_data(result)
    with replace_atomically(posterior) as tmp, naming_hdf5_errors(posterior):
        idata.to_netcdf(str(tmp))
    draws = out / POSTERIOR_DRAWS_FILE
    write_posterior_draws(idata["posterior"], draws)
    return [surrogate, local, posterior, draws]


def write_posterior_draws(posterior: Any, path: Path) -> None:
    """Write the draws of a posterior group (an xarray Dataset with the
    ``model_parameters`` attribute) to ``path``, group ``posterior``, compressed: the
    simulator parameters and the discrepancy and noise parameters, which the posterior
    predictive of ``mpiuq simulate --params`` needs."""
    names = [str(v) for v in posterior.data_vars]
    subset = posterior[names]
    subset.attrs = dict(posterior.attrs)
    encoding = {n: {"zlib": True, "complevel": 6} for n in names}
    with replace_atomically(path) as tmp, naming_hdf5_errors(path):
        subset.to_netcdf(str(tmp), group="posterior", engine="h5netcdf", encoding=encoding)


def run_fingerprint(campaign: Campaign) -> str:
    """SHA-256 of what made a run: the validated campaign, its file, its data, mpiuq's version."""
    h = hashlib.sha256(f"mpiuq {MPIUQ_VERSION}\n{campaign!r}\n".encode())
    for path in (campaign.source, *(spec.path for spec in campaign.datasets)):
        if path is not None and path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def write_summary(
    summary: dict[str, Any],
    out_dir: str | Path,
    files: Sequence[Path] = (),
    fingerprint: str | None = None,
) -> Path:
    """Write ``summary.json`` last and atomically: it marks the run's outputs complete.

    Parameters
    ----------
    summary
        The content of :func:`~mpiuq.calibration.reporting.report.summary_dict` (plus additions).
    out_dir
        The results folder.
    files
        The other files the run wrote (result files, figures): their SHA-256 go into
        ``summary["run"]["files"]`` so that :func:`check_result_files` can tell whether
        they are still this run's.
    fingerprint
        The run's :func:`run_fingerprint`.
    """
    path = Path(out_dir) / SUMMARY_FILE
    doc = {"format": SUMMARY_FORMAT, "format_version": SUMMARY_VERSION, **summary}
    doc["run"] = {
        "complete": True,
        "fingerprint": fingerprint,
        "mpiuq_version": MPIUQ_VERSION,
        "files": {p.name: file_sha256(p) for p in files},
    }
    posterior = [p for p in files if p.name in (POSTERIOR_FILE, POSTERIOR_DRAWS_FILE)]
    # an external simulator's parameters are its own: nothing for mpiuq's replay to take
    if doc.get("parameters") and external_simulator(doc) is None:
        doc["handoff"] = build_handoff(doc, fingerprint or "", posterior).to_json()
    write_json(path, doc)
    return path


def set_aside_previous_results(out_dir: str | Path) -> Path | None:
    """Move a previous run's ``summary.json`` (first), then the files it lists, aside.

    They go to ``<out_dir>/previous-run/`` (replacing an older one), so the folder no longer
    presents them as current; :func:`restore_previous_results` puts them back if the new
    run is refused before it starts, :func:`drop_previous_results` removes them once the new
    run has finished. ``surrogate.h5``, ``surrogate_local.h5`` and ``posterior.nc`` go too; the design checkpoint
    (``design.h5``) stays, since it is fingerprinted and resumable.

    Returns the folder holding the previous results, or None if there were none.
    """
    out = Path(out_dir)
    summary = out / SUMMARY_FILE
    if not summary.is_file():
        return None
    names = {SURROGATE_FILE, LOCAL_SURROGATE_FILE, POSTERIOR_FILE, REPORT_FILE}
    with contextlib.suppress(OSError, ValueError, RecursionError):
        doc = json.loads(summary.read_text(encoding="utf-8"))
        if isinstance(doc, dict):
            run = doc.get("run")
            listed = [*(run.get("files", {}) if isinstance(run, dict) else {})]
            figures = doc.get("figures")
            listed += figures if isinstance(figures, list) else []
            names |= {n for n in listed if isinstance(n, str) and _plain_name(n)}
    aside = out / PREVIOUS_RUN_DIR
    shutil.rmtree(aside, ignore_errors=True)
    aside.mkdir()
    for name in [SUMMARY_FILE, *sorted(names - {SUMMARY_FILE, DESIGN_FILE, PREVIOUS_RUN_DIR})]:
        with contextlib.suppress(FileNotFoundError):
            (out / name).rename(aside / name)
    return aside


def restore_previous_results(out_dir: str | Path, aside: Path) -> None:
    """Undo :func:`set_aside_previous_results` (``summary.json`` last)."""
    out = Path(out_dir)
    names = sorted(p.name for p in aside.iterdir())
    for name in [n for n in names if n != SUMMARY_FILE] + [SUMMARY_FILE]:
        with contextlib.suppress(FileNotFoundError):
            (aside / name).rename(out / name)
    with contextlib.suppress(OSError):
        aside.rmdir()


def drop_previous_results(out_dir: str | Path) -> None:
    """Remove results set aside by :func:`set_aside_previous_results` (a run has finished)."""
    shutil.rmtree(Path(out_dir) / PREVIOUS_RUN_DIR, ignore_errors=True)


def _plain_name(name: str) -> bool:
    return bool(name) and Path(name).name == name and name not in (".", "..")


def summary_file(path: str | Path) -> Path:
    """``summary.json`` of a results folder (or the file itself).

    Raises
    ------
    ResultsError
        If the path does not exist, or the folder has no ``summary.json`` (the campaign
        has not finished).
    """
    p = Path(path)
    if p.is_dir():
        if not (p / SUMMARY_FILE).is_file():
            aside = p / PREVIOUS_RUN_DIR / SUMMARY_FILE
            earlier = (
                f" (an earlier run's results are in {aside.parent})" if aside.is_file() else ""
            )
            pid = run_holder(p)
            if pid is not None:
                raise ResultsError(
                    f"results folder {p}: its campaign is running now (pid {pid or 'unknown'}); "
                    f"{SUMMARY_FILE} appears when the run finishes{earlier}"
                )
            raise ResultsError(
                f"results folder {p} has no {SUMMARY_FILE}: its campaign has not finished "
                "(interrupted, failed or never run); run 'mpiuq campaign run CAMPAIGN.toml' "
                f"to finish it{earlier}"
            )
        return p / SUMMARY_FILE
    if not p.is_file():
        raise ResultsError(
            f"{p} does not exist: expected a results folder (results/<campaign>) or its "
            f"{SUMMARY_FILE}"
        )
    return p


def read_summary(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """Read a campaign's ``summary.json``; returns its path and content.

    Raises
    ------
    ResultsError
        If it is missing, not UTF-8 JSON or not a JSON object (names the file).
    """
    file = summary_file(path)
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ResultsError(
            f"{file} is not a campaign summary ({reason}): expected the JSON written by "
            "'mpiuq campaign run'"
        ) from None
    if not isinstance(doc, dict):
        raise ResultsError(
            f"{file} is not a campaign summary (a JSON {type(doc).__name__}): expected a JSON "
            "object written by 'mpiuq campaign run'"
        )
    return file, doc


def result_file_states(file: Path, summary: dict[str, Any]) -> list[tuple[str, str]]:
    """``(name, state)`` of every file a summary's ``run`` record lists.

    ``state`` is ``"ok"`` (present, same SHA-256 as when the run wrote it),
    ``"changed"``, ``"missing"``, ``"not kept"`` (a :data:`WORKING_FILES` member that
    is absent: the folder does not need it) or ``"invalid name"``. Empty when the
    summary predates the ``run`` record.
    """
    run = summary.get("run")
    if not isinstance(run, dict) or not isinstance(run.get("files"), dict):
        return []
    states = []
    for name, digest in run["files"].items():
        if not isinstance(name, str) or not _plain_name(name):
            states.append((str(name), "invalid name"))
            continue
        p = file.parent / name
        if not p.is_file():
            states.append((name, "not kept" if name in WORKING_FILES else "missing"))
        else:
            states.append((name, "ok" if file_sha256(p) == digest else "changed"))
    return states


def check_result_files(file: Path, summary: dict[str, Any]) -> list[str]:
    """Problems with the files a summary lists: missing, or changed since the run wrote them.

    Returns one message per problem (an empty list when all match, or when the summary
    predates the ``run`` record). An absent :data:`WORKING_FILES` member is no problem.
    """
    messages = {
        "invalid name": "{file}: run.files lists {name!r}, which is not a file name",
        "missing": "{path} is missing (the run wrote it)",
        "changed": "{path} has changed since the run wrote it (modified or from another run)",
    }
    return [
        messages[state].format(file=file, name=name, path=file.parent / name)
        for name, state in result_file_states(file, summary)
        if state in messages
    ]
