"""Calibrated parameters for replay and simulation: the calibration -> replay hand-off.

A finished campaign's ``summary.json`` (:mod:`mpiuq.calibration.artefacts`) holds the
fixed simulator values and per-parameter estimates. :func:`load_calibrated` is the one
reader of that hand-off, so the CLI never parses the summary's keys itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from mpiuq.calibration.errors import CalibrationError

#: Posterior point estimates a campaign summary provides per parameter.
ESTIMATES: tuple[str, ...] = ("map", "mean")


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


def load_calibrated(path: str | Path, estimate: str = "map") -> CalibratedParameters:
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
        value of the estimate (names the file and key).
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
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibratedParametersError(
            f"{file} is not a campaign summary: expected JSON written by 'mpiuq campaign run' "
            f"({exc})"
        ) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("parameters"), Mapping):
        raise CalibratedParametersError(
            f"{file} has no 'parameters' table: expected a campaign summary"
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
        out.append((str(name), float(value)))
    return out
