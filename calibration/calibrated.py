"""Calibrated parameters for replay and simulation: the calibration -> replay hand-off.

A finished campaign's ``summary.json`` (:mod:`mpiuq.calibration.artefacts`) holds the
fixed simulator values and per-parameter estimates; its ``posterior.nc`` holds the
posterior draws, and ``posterior_draws.nc`` the same draws compressed (the
file committed with a curated result, as ``posterior.nc`` is too large to commit). :func:`load_calibrated` (one point estimate) and
:func:`load_posterior_draws` (many draws) are the only readers of that hand-off, so the
CLI never parses the files' keys itself.

The default estimate is the posterior **median**: on a ridge the data do not resolve
(a ping-pong fixes only ``min(injection, link)`` bandwidth) a MAP is an arbitrary point
of the ridge, so ``"map"`` is refused unless the campaign found a unique mode.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import CalibrationError
from mpiuq.calibration.limits import check_parameter_value
from mpiuq.simulator.errors import ParameterError

#: Posterior point estimates a campaign summary provides per parameter (default first).
ESTIMATES: tuple[str, ...] = ("median", "mean", "map")


class CalibratedParametersError(CalibrationError, ValueError):
    """A campaign result cannot provide calibrated parameters (names the file and key)."""


@dataclass(frozen=True, slots=True)
class CalibratedParameters:
    """Simulator parameter values from a calibration campaign.

    Attributes
    ----------
    source
        The ``summary.json`` read.
    campaign
        Campaign name.
    estimate
        Which point estimate the calibrated values are (one of :data:`ESTIMATES`).
    fixed
        ``(name, value)`` of the simulator parameters the campaign held fixed.
    calibrated
        ``(name, value)`` of the calibrated parameters at ``estimate``.
    """

    source: Path
    campaign: str
    estimate: str
    fixed: tuple[tuple[str, float], ...]
    calibrated: tuple[tuple[str, float], ...]

    def values(self) -> dict[str, float]:
        """Fixed and calibrated values in one mapping (``SimParams.from_mapping`` input)."""
        return dict(self.fixed) | dict(self.calibrated)


def summary_path(path: str | Path) -> Path:
    """``summary.json`` of a results folder (or the file itself)."""
    p = Path(path)
    return p / "summary.json" if p.is_dir() else p


def load_calibrated(path: str | Path, estimate: str = "median") -> CalibratedParameters:
    """Read the calibrated parameters of a finished campaign.

    Parameters
    ----------
    path
        ``results/<campaign>`` or its ``summary.json`` (written by ``mpiuq campaign run``).
    estimate
        One of :data:`ESTIMATES`.

    Raises
    ------
    CalibratedParametersError
        If the file is missing, not JSON, or lacks the ``parameters`` table or a finite
        value of the estimate (names the file and key), or if ``estimate = "map"`` and the
        campaign found no unique mode (the reason is quoted).
    """
    if estimate not in ESTIMATES:
        raise CalibratedParametersError(
            f"estimate {estimate!r} is unknown: expected one of {list(ESTIMATES)}"
        )
    file = summary_path(path)
    if not file.is_file():
        raise CalibratedParametersError(
            f"campaign summary {file} does not exist: expected results/<campaign>/summary.json "
            "written by 'mpiuq campaign run'"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CalibratedParametersError(
            f"{file} is not a campaign summary: expected JSON written by 'mpiuq campaign run' "
            f"({exc})"
        ) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("parameters"), Mapping):
        raise CalibratedParametersError(
            f"{file} has no 'parameters' table: expected a campaign summary"
        )
    if estimate == "map":
        mode = data.get("map")
        if not isinstance(mode, Mapping) or mode.get("unique") is not True:
            reason = (
                mode.get("reason", "not recorded") if isinstance(mode, Mapping) else "not recorded"
            )
            raise CalibratedParametersError(
                f"{file}: the MAP is not unique ({reason}): use --estimate median or mean, "
                "or replay posterior draws"
            )
    fixed = _numbers(file, "fixed", data.get("fixed") or {})
    calibrated: list[tuple[str, float]] = []
    for name, entry in data["parameters"].items():
        value = entry.get(estimate) if isinstance(entry, Mapping) else None
        if not _finite(value):
            raise CalibratedParametersError(
                f"{file}: parameters.{name}.{estimate} = {value!r} is invalid: "
                "expected a finite number"
            )
        _check_range(file, f"parameters.{name}.{estimate}", str(name), value)
        calibrated.append((str(name), float(value)))
    return CalibratedParameters(
        file, str(data.get("name", "")), estimate, tuple(fixed), tuple(calibrated)
    )


def _finite(value: object) -> TypeGuard[int | float]:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _numbers(file: Path, key: str, table: object) -> list[tuple[str, float]]:
    if not isinstance(table, Mapping):
        raise CalibratedParametersError(f"{file}: {key} = {table!r} is invalid: expected a table")
    out = []
    for name, value in table.items():
        if not _finite(value):
            raise CalibratedParametersError(
                f"{file}: {key}.{name} = {value!r} is invalid: expected a finite number"
            )
        _check_range(file, f"{key}.{name}", str(name), value)
        out.append((str(name), float(value)))
    return out


@dataclass(frozen=True, slots=True)
class PosteriorDraws:
    """Posterior draws of the calibrated simulator parameters, for replaying many of them.

    Attributes
    ----------
    source
        The ``posterior.nc`` read.
    names
        Calibrated simulator parameter names (columns of ``values``).
    values
        Draws, shape (n_draws, len(names)), in the parameters' units.
    fixed
        ``(name, value)`` of the simulator parameters the campaign held fixed.
    other_names, other_values
        The same draws' discrepancy and noise parameters (``sd_rel_*``, ``nu_*``), shape
        (n_draws, len(other_names)); empty for a file written before they were kept.
    """

    source: Path
    names: tuple[str, ...]
    values: npt.NDArray[np.float64]
    fixed: tuple[tuple[str, float], ...]
    other_names: tuple[str, ...] = ()
    other_values: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))

    def mapping(self, k: int) -> dict[str, float]:
        """Fixed values and draw ``k`` in one mapping (``SimParams.from_mapping`` input)."""
        return dict(self.fixed) | {
            n: float(v) for n, v in zip(self.names, self.values[k], strict=True)
        }


def posterior_path(path: str | Path) -> Path:
    """Posterior draws of a results folder: its ``posterior.nc``, else its
    ``posterior_draws.nc`` (or the file itself)."""
    p = Path(path)
    if not p.is_dir():
        return p
    full = p / "posterior.nc"
    return (
        full
        if full.is_file() or not (p / "posterior_draws.nc").is_file()
        else (p / "posterior_draws.nc")
    )


def load_posterior_draws(path: str | Path, n_draws: int, seed: int = 0) -> PosteriorDraws:
    """Read ``n_draws`` posterior draws of the simulator parameters from ``posterior.nc``
    (and, with the same pick, of the discrepancy and noise parameters the file holds).

    Parameters
    ----------
    path
        ``results/<campaign>`` or its ``posterior.nc`` (written by ``mpiuq campaign run``).
    n_draws
        Draws wanted (>= 1); picked without replacement when the file holds enough,
        else all of them and then with replacement.
    seed
        Seed of the pick: the same seed gives the same draws.

    Raises
    ------
    CalibratedParametersError
        If the file is missing or not a campaign posterior, or ``n_draws`` is invalid.
    """
    if isinstance(n_draws, bool) or not isinstance(n_draws, int) or n_draws < 1:
        raise CalibratedParametersError(f"n_draws={n_draws!r} is invalid: expected an integer >= 1")
    file = posterior_path(path)
    if not file.is_file():
        raise CalibratedParametersError(
            f"campaign posterior {file} does not exist: expected results/<campaign>/posterior.nc "
            "written by 'mpiuq campaign run'"
        )
    _check_written_by_its_run(file)
    import xarray as xr

    try:
        with xr.open_dataset(file, group="posterior", engine="h5netcdf") as ds:
            names = tuple(json.loads(ds.attrs["model_parameters"]))
            fixed_raw = json.loads(ds.attrs.get("fixed", "{}"))
            values = np.stack(
                [np.asarray(ds[n].values, dtype=np.float64).ravel() for n in names], axis=1
            )
            others = tuple(str(v) for v in ds.data_vars if str(v) not in names)
            other_values = np.stack(
                [np.asarray(ds[n].values, dtype=np.float64).ravel() for n in others]
                or [np.zeros(values.shape[0])],
                axis=1,
            )[:, : len(others)]
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise CalibratedParametersError(
            f"{file} is not a campaign posterior with model_parameters: expected posterior.nc "
            f"written by 'mpiuq campaign run' ({exc})"
        ) from None
    fixed = _numbers(file, "fixed", fixed_raw)
    rng = np.random.default_rng(seed)
    n = values.shape[0]
    if n_draws <= n:
        pick = rng.choice(n, size=n_draws, replace=False)
    else:
        pick = np.concatenate([rng.permutation(n), rng.choice(n, size=n_draws - n)])
    return PosteriorDraws(file, names, values[pick], tuple(fixed), others, other_values[pick])


def _check_written_by_its_run(file: Path) -> None:
    """Refuse draws that are not the ones the folder's ``summary.json`` reports.

    A campaign records the SHA-256 of every file it wrote in ``summary.json``; draws
    changed since (edited, or copied from another run) would be replayed under the other
    run's summary. Files the summary does not list (older runs) are read as they are.
    """
    from mpiuq.calibration.artefacts import file_sha256

    summary = file.parent / "summary.json"
    try:
        doc = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no summary beside it: a posterior file given on its own
    run = doc.get("run") if isinstance(doc, dict) else None
    files = run.get("files") if isinstance(run, dict) else None
    digest = files.get(file.name) if isinstance(files, dict) else None
    if isinstance(digest, str) and file_sha256(file) != digest:
        raise CalibratedParametersError(
            f"{file} has changed since the run that wrote {summary} (its SHA-256 differs "
            "from the one the summary records): its draws are not that calibration's; "
            "re-run the campaign or restore the file"
        )


def _check_range(file: Path, key: str, name: str, value: float) -> None:
    try:
        check_parameter_value(name, value)
    except ParameterError as exc:
        raise CalibratedParametersError(
            f"{file}: {key} = {value!r} is invalid: expected {exc.allowed}"
        ) from None
