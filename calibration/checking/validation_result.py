"""What a campaign's validation computed (:mod:`~mpiuq.calibration.checking.validation`).

Frozen records only: the scored groups with their data and predictive bands, the
in-sample figures, and the derived coverage, errors and verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import DataSpec
from mpiuq.calibration.config.validation_spec import ValidationSpec
from mpiuq.calibration.model.transfer import PredictiveBand

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Kinds of scored groups.
KINDS: tuple[str, ...] = ("held-out series", "held-out sizes", "unselected sizes")


@dataclass(frozen=True, slots=True)
class ScoredGroup:
    """Sizes of one data series scored after the fit.

    Attributes
    ----------
    name
        ``"isend"``, ``"pingpong_half_rtt >= 100000 B"``, ``"pingpong_half_rtt (unselected)"``.
    kind
        One of :data:`KINDS`.
    spec
        The series' data table.
    sizes_bytes
        Sizes scored.
    """

    name: str
    kind: str
    spec: DataSpec
    sizes_bytes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GroupScore:
    """A scored group: data, predictive band and the figures derived from them.

    Attributes
    ----------
    group
        What was scored.
    sizes_bytes, data_mean, data_sd
        Scored sizes (those with a usable replica spread) and their data.
    band
        The posterior predictive at them.
    regimes, sources
        Regime of every size and where its discrepancy came from
        (:data:`~mpiuq.calibration.model.transfer.SOURCES`).
    skipped
        Sizes left out: fewer than 2 replicas or zero spread, and no ``sd_floor_rel``;
        0 B (the simulated benchmarks send at least 1 B).
    fitted_range
        Smallest and largest fitted size of the series (None: the series was not fitted).
    threshold
        Least count inside the 90% band that passes (:func:`coverage_threshold`).
    """

    group: ScoredGroup
    sizes_bytes: IntArray
    data_mean: FloatArray
    data_sd: FloatArray
    band: PredictiveBand
    regimes: tuple[str, ...]
    sources: tuple[str, ...]
    skipped: tuple[int, ...]
    fitted_range: tuple[int, int] | None
    threshold: int

    @property
    def inside(self) -> npt.NDArray[np.bool_]:
        """Whether each data centre lies inside its 90% band."""
        return self.band.inside(self.data_mean)

    @property
    def n_inside(self) -> int:
        """Sizes inside their 90% band."""
        return int(self.inside.sum())

    @property
    def relative_error(self) -> FloatArray:
        """``|predictive median - data| / data`` per size."""
        return self.band.relative_error(self.data_mean)

    @property
    def median_relative_error(self) -> float:
        """Median over the sizes of the relative error."""
        return float(np.median(self.relative_error))

    @property
    def passed(self) -> bool:
        """Whether at least ``threshold`` sizes lie inside."""
        return self.n_inside >= self.threshold

    @property
    def n_outside_fitted_range(self) -> int:
        """Sizes outside the fitted size range of the series (all, for a series not fitted)."""
        if self.fitted_range is None:
            return int(self.sizes_bytes.size)
        lo, hi = self.fitted_range
        return int(np.sum((self.sizes_bytes < lo) | (self.sizes_bytes > hi)))


@dataclass(frozen=True, slots=True)
class InSample:
    """The campaign's own predictive on its fitted sizes (in-sample); ``discrepancy``:
    whether a discrepancy was fitted to them too."""

    n_sizes: int
    n_inside: int
    median_relative_error: float
    discrepancy: bool = False


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """Everything a campaign's validation computed.

    Attributes
    ----------
    spec
        The ``[validation]`` table.
    in_sample
        Coverage and error on the fitted sizes.
    groups
        One score per held-out or unselected group.
    n_draws
        Posterior draws of the predictive.
    alpha
        ``checks.coverage_alpha`` of the binomial rule.
    """

    spec: ValidationSpec
    in_sample: InSample
    groups: tuple[GroupScore, ...]
    n_draws: int
    alpha: float
