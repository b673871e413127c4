"""Calibrated parameters for replay and simulation: the calibration -> replay hand-off.

A finished campaign's ``summary.json`` (:mod:`mpiuq.calibration.reporting.artefacts`) holds its
hand-off record (:mod:`mpiuq.calibration.reporting.handoff`: the fixed simulator values, the
per-parameter estimates, the regime table with names, the posterior files' checksums);
its ``posterior.nc`` holds the posterior draws, and ``posterior_draws.nc`` the same
draws compressed (the file committed with a curated result, as ``posterior.nc`` is too
large to commit). :func:`load_calibrated` (one point estimate) and
:func:`load_posterior_draws` (many draws) are the only readers of that hand-off, so the
CLI never parses the files' keys itself.

The default estimate is the posterior **median**: on a ridge the data do not resolve
(a ping-pong fixes only ``min(injection, link)`` bandwidth) a MAP is an arbitrary point
of the ridge, so ``"map"`` is refused unless the campaign found a unique mode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config.limits import check_parameter_value, parameter_range
from mpiuq.calibration.errors import CalibrationError
from mpiuq.calibration.reporting.handoff import Handoff, HandoffError, verified_handoff
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import SimParams
from mpiuq.surrogate.store.json_text import read_json

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
    handoff
        The verified hand-off record (regime table with names included).
    """

    source: Path
    campaign: str
    estimate: str
    fixed: tuple[tuple[str, float], ...]
    calibrated: tuple[tuple[str, float], ...]
    handoff: Handoff

    def values(self) -> dict[str, float]:
        """Fixed and calibrated values in one mapping."""
        return dict(self.fixed) | dict(self.calibrated)

    def params(self, overrides: Mapping[str, Any] | None = None) -> SimParams:
        """The parameter set: the campaign's regime table (names kept), its fixed and
        calibrated values, then ``overrides`` (``--param``)."""
        return self.handoff.params(dict(self.calibrated) | dict(overrides or {}))


def summary_path(path: str | Path) -> Path:
    """``summary.json`` of a results folder (or the file itself)."""
    p = Path(path)
    return p / "summary.json" if p.is_dir() else p


def _read_summary(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The summary file of ``path`` and its content (a JSON object)."""
    file = summary_path(path)
    if not file.is_file():
        raise CalibratedParametersError(
            f"campaign summary {file} does not exist: expected results/<campaign>/summary.json "
            "written by 'mpiuq campaign run'"
        )
    try:
        data = read_json(file)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CalibratedParametersError(
            f"{file} is not a campaign summary: expected JSON written by 'mpiuq campaign run' "
            f"({' '.join(str(exc).split())})"
        ) from None
    if not isinstance(data, dict):
        raise CalibratedParametersError(
            f"{file} is not a campaign summary: expected a JSON object written by "
            "'mpiuq campaign run'"
        )
    return file, data


def load_calibrated(path: str | Path, estimate: str = "median") -> CalibratedParameters:
    """Read the calibrated parameters of a finished campaign (its verified hand-off record).

    Parameters
    ----------
    path
        ``results/<campaign>`` or its ``summary.json`` (written by ``mpiuq campaign run``).
    estimate
        One of :data:`ESTIMATES`.

    Raises
    ------
    CalibratedParametersError
        If the file is missing, not JSON, has no valid hand-off record (an older summary,
        a malformed or foreign record: :func:`~.handoff.verified_handoff`), or if
        ``estimate = "map"`` and the campaign found no unique mode (the reason is quoted).
    """
    if estimate not in ESTIMATES:
        raise CalibratedParametersError(
            f"estimate {estimate!r} is unknown: expected one of {list(ESTIMATES)}"
        )
    file, data = _read_summary(path)
    record = _verified(file, data)
    if estimate == "map" and not record.map_unique:
        raise CalibratedParametersError(
            f"{file}: the MAP is not unique ({record.map_reason or 'not recorded'}): use "
            "--estimate median or mean, or replay posterior draws"
        )
    calibrated = []
    for name, entry in record.estimates.items():
        value = entry[estimate]
        if value is None:
            raise CalibratedParametersError(
                f"{file}: handoff.estimates.{name}.{estimate} = None is invalid: expected a "
                "finite number"
            )
        calibrated.append((name, float(value)))
    return CalibratedParameters(
        file, record.campaign, estimate, tuple(record.fixed.items()), tuple(calibrated), record
    )


def _verified(file: Path, data: dict[str, Any], needed: tuple[str, ...] = ()) -> Handoff:
    try:
        return verified_handoff(file, data, needed)
    except HandoffError as exc:
        raise CalibratedParametersError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class PosteriorDraws:
    """Posterior draws of the calibrated simulator parameters, for replaying many of them.

    Attributes
    ----------
    source
        The posterior file read (``posterior.nc`` or ``posterior_draws.nc``).
    names
        Calibrated simulator parameter names (columns of ``values``).
    values
        Draws, shape (n_draws, len(names)), in the parameters' units (each in range).
    fixed
        ``(name, value)`` of the simulator parameters the campaign held fixed.
    handoff
        The verified hand-off record the draws belong to.
    other_names, other_values
        The same draws' discrepancy and noise parameters (``sd_rel_*``, ``nu_*``), shape
        (n_draws, len(other_names)); empty for a file written before they were kept.
    """

    source: Path
    names: tuple[str, ...]
    values: npt.NDArray[np.float64]
    fixed: tuple[tuple[str, float], ...]
    handoff: Handoff
    other_names: tuple[str, ...] = ()
    other_values: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))

    def mapping(self, k: int) -> dict[str, float]:
        """Fixed values and draw ``k`` in one mapping."""
        return dict(self.fixed) | {
            n: float(v) for n, v in zip(self.names, self.values[k], strict=True)
        }

    def params(self, k: int, overrides: Mapping[str, Any] | None = None) -> SimParams:
        """The parameter set of draw ``k`` (regime table with its names, fixed values,
        the draw, then ``overrides``)."""
        draw = {n: float(v) for n, v in zip(self.names, self.values[k], strict=True)}
        return self.handoff.params(draw | dict(overrides or {}))


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
    """Read ``n_draws`` posterior draws of the simulator parameters of a finished campaign
    (and, with the same pick, of the discrepancy and noise parameters the file holds).

    The draws file must be one the folder's hand-off record lists, unchanged (size and
    SHA-256; :func:`~.handoff.verified_handoff`); every draw is range-checked.

    Parameters
    ----------
    path
        ``results/<campaign>`` or its ``posterior.nc`` / ``posterior_draws.nc``.
    n_draws
        Draws wanted (>= 1); picked without replacement when the file holds enough,
        else all of them and then with replacement.
    seed
        Seed of the pick: the same seed gives the same draws.

    Raises
    ------
    CalibratedParametersError
        If the file is missing, not listed by (or changed since) the hand-off record beside
        it, not a campaign posterior, holds no draws or an out-of-range draw, or
        ``n_draws`` is invalid.
    """
    if isinstance(n_draws, bool) or not isinstance(n_draws, int) or n_draws < 1:
        raise CalibratedParametersError(f"n_draws={n_draws!r} is invalid: expected an integer >= 1")
    file = posterior_path(path)
    if not file.is_file():
        raise CalibratedParametersError(
            f"campaign posterior {file} does not exist: the results folder holds no posterior "
            "draws (posterior.nc or posterior_draws.nc; they are not committed with every "
            "result): use --estimate median (or mean), or re-run 'mpiuq campaign run' on its "
            "campaign file"
        )
    summary, data = _read_summary(file.parent)
    record = _verified(summary, data, needed=(file.name,))
    import xarray as xr

    try:
        with xr.open_dataset(file, group="posterior", engine="h5netcdf") as ds:
            names = tuple(json.loads(ds.attrs["model_parameters"]))
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
            f"written by 'mpiuq campaign run' ({' '.join(str(exc).split())[:200]})"
        ) from None
    if set(names) != set(record.estimates):
        raise CalibratedParametersError(
            f"{file} holds draws of {list(names)}, its hand-off record calibrates "
            f"{sorted(record.estimates)}: not this campaign's posterior"
        )
    n = values.shape[0]
    if n == 0:
        raise CalibratedParametersError(
            f"{file} holds 0 posterior draws: expected at least 1 (a damaged or empty posterior)"
        )
    for j, name in enumerate(names):  # the one range check, over every draw
        _check_draws(file, name, values[:, j])
    rng = np.random.default_rng(seed)
    if n_draws <= n:
        pick = rng.choice(n, size=n_draws, replace=False)
    else:
        pick = np.concatenate([rng.permutation(n), rng.choice(n, size=n_draws - n)])
    return PosteriorDraws(
        file,
        names,
        values[pick],
        tuple(record.fixed.items()),
        record,
        others,
        other_values[pick],
    )


def _check_draws(file: Path, name: str, column: npt.NDArray[np.float64]) -> None:
    low, high = parameter_range(name)
    bad = ~np.isfinite(column) | (column < low) | (column > high)
    if bad.any():
        k = int(np.argmax(bad))
        _check_range(file, f"draw {k} of {name}", name, float(column[k]))
        raise CalibratedParametersError(  # pragma: no cover - _check_range raised
            f"{file}: draw {k} of {name} = {column[k]!r} is invalid"
        )


def _check_range(file: Path, key: str, name: str, value: float) -> None:
    try:
        check_parameter_value(name, value)
    except ParameterError as exc:
        raise CalibratedParametersError(
            f"{file}: {key} = {value!r} is invalid: expected {exc.allowed}"
        ) from None
