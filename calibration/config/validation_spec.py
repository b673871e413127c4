"""The ``[validation]`` table of a campaign: which measurements the fit must not see.

A campaign can hold out whole data series and size ranges of a series; the campaign
then fits without them and scores them with its full posterior predictive
(:mod:`~mpiuq.calibration.checking.validation`)::

    [validation]
    holdout = [
        { series = "isend" },                               # a whole [[data]] table
        { series = "pingpong_half_rtt", min_bytes = 100000 },  # its sizes >= 100 kB
    ]
    unselected_sizes = true   # also score the measured sizes the fit did not select
    draws = 1000              # posterior draws of the predictive

``series`` is the ``label`` of a data table (its benchmark label unless set).
``min_bytes`` and ``max_bytes`` (inclusive) bound the held-out sizes; without them the
whole series is held out. The held-out sizes are *every* size the series measured in
that range (not only a ``sizes_per_protocol`` selection); a data table with a held-out
range is fitted on its selection among the sizes outside every range.

``unselected_sizes`` (default true) scores, per fitted series, the measured sizes that
are neither fitted (``sizes_per_protocol`` picks a few per regime) nor held out: the
same benchmark at sizes the fit did not see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpiuq.calibration.errors import CampaignError

#: Keys of the ``[validation]`` table and of one hold-out entry.
VALIDATION_KEYS: tuple[str, ...] = ("holdout", "unselected_sizes", "draws")
HOLDOUT_KEYS: tuple[str, ...] = ("series", "min_bytes", "max_bytes")
#: Default and fewest posterior draws of the predictive that scores the held-out data.
DEFAULT_DRAWS = 1000
MIN_DRAWS = 100
#: Largest size bound of a hold-out entry (the data's sizes are below it).
MAX_BYTES = 2**62


@dataclass(frozen=True, slots=True)
class Holdout:
    """One held-out part of a data series.

    Attributes
    ----------
    series
        Label of the data table.
    min_bytes, max_bytes
        Inclusive bounds of the held-out sizes; None: unbounded on that side (both None:
        the whole series).
    """

    series: str
    min_bytes: int | None = None
    max_bytes: int | None = None

    @property
    def whole(self) -> bool:
        """Whether the whole series is held out."""
        return self.min_bytes is None and self.max_bytes is None

    def covers(self, size_bytes: int) -> bool:
        """Whether a message size lies in the held-out range."""
        lo = 0 if self.min_bytes is None else self.min_bytes
        hi = MAX_BYTES if self.max_bytes is None else self.max_bytes
        return lo <= size_bytes <= hi

    def describe(self) -> str:
        """``"isend"`` or ``"pingpong_half_rtt >= 100000 B"`` (names checks and figures)."""
        if self.whole:
            return self.series
        if self.max_bytes is None:
            return f"{self.series} >= {self.min_bytes} B"
        if self.min_bytes is None:
            return f"{self.series} <= {self.max_bytes} B"
        return f"{self.series} {self.min_bytes}-{self.max_bytes} B"


@dataclass(frozen=True, slots=True)
class ValidationSpec:
    """The ``[validation]`` table (empty: no validation, the campaign as before).

    Attributes
    ----------
    holdouts
        Held-out series and size ranges, in file order.
    unselected_sizes
        Also score the measured sizes of fitted series that the fit did not select.
    draws
        Posterior draws of the scoring predictive (at most the posterior's).
    present
        Whether the campaign has a ``[validation]`` table.
    """

    holdouts: tuple[Holdout, ...] = ()
    unselected_sizes: bool = True
    draws: int = DEFAULT_DRAWS
    present: bool = False

    def holdouts_of(self, series: str) -> tuple[Holdout, ...]:
        """The hold-out entries of one series."""
        return tuple(h for h in self.holdouts if h.series == series)

    def wholly_held_out(self, series: str) -> bool:
        """Whether a series is held out as a whole (not fitted at all)."""
        return any(h.whole for h in self.holdouts_of(series))


def parse_validation(t: Mapping[str, Any], labels: tuple[str, ...]) -> ValidationSpec:
    """Validate a ``[validation]`` table against the campaign's data-table labels.

    Raises
    ------
    CampaignError
        For an unknown key, a ``series`` that names no data table, bad or overlapping
        size bounds, or hold-outs that leave no data table to fit (names the key).
    """
    for key in t:
        if key not in VALIDATION_KEYS:
            raise CampaignError(
                f"validation.{key}", t[key], f"one of the keys {list(VALIDATION_KEYS)}"
            )
    raw = t.get("holdout", [])
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise CampaignError(
            "validation.holdout",
            raw,
            'a list of tables such as { series = "isend" } or '
            '{ series = "pingpong_half_rtt", min_bytes = 100000 }',
        )
    holdouts: list[Holdout] = []
    for k, entry in enumerate(raw):
        holdouts.append(_parse_holdout(entry, f"validation.holdout[{k}].", labels, holdouts))
    fitted = [label for label in labels if not any(h.whole for h in holdouts if h.series == label)]
    if not fitted:
        raise CampaignError(
            "validation.holdout",
            [h.describe() for h in holdouts],
            "at least one data table left to fit (every table is held out as a whole)",
        )
    unselected = t.get("unselected_sizes", True)
    if not isinstance(unselected, bool):
        raise CampaignError("validation.unselected_sizes", unselected, "true or false")
    draws = t.get("draws", DEFAULT_DRAWS)
    if isinstance(draws, bool) or not isinstance(draws, int) or not MIN_DRAWS <= draws <= 10**6:
        raise CampaignError("validation.draws", draws, f"an integer in [{MIN_DRAWS}, 1000000]")
    return ValidationSpec(tuple(holdouts), unselected, draws, present=True)


def _parse_holdout(
    entry: Mapping[str, Any], prefix: str, labels: tuple[str, ...], earlier: list[Holdout]
) -> Holdout:
    for key in entry:
        if key not in HOLDOUT_KEYS:
            raise CampaignError(
                f"{prefix}{key}", entry[key], f"one of the keys {list(HOLDOUT_KEYS)}"
            )
    if "series" not in entry:
        raise CampaignError(
            f"{prefix}series", "(missing)", f"the label of a data table, one of {list(labels)}"
        )
    series = entry["series"]
    if series not in labels:
        raise CampaignError(
            f"{prefix}series", series, f"the label of a data table, one of {list(labels)}"
        )
    bounds: dict[str, int | None] = {}
    for key in ("min_bytes", "max_bytes"):
        v = entry.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_BYTES
        ):
            raise CampaignError(f"{prefix}{key}", v, f"a whole number of bytes in [1, {MAX_BYTES}]")
        bounds[key] = v
    lo, hi = bounds["min_bytes"], bounds["max_bytes"]
    if lo is not None and hi is not None and hi < lo:
        raise CampaignError(f"{prefix}max_bytes", hi, f">= {prefix}min_bytes = {lo}")
    h = Holdout(series, lo, hi)
    for other in earlier:
        if other.series == series and _overlap(h, other):
            raise CampaignError(
                f"{prefix}series",
                series,
                f"a size range not overlapping the earlier hold-out {other.describe()!r} of "
                "the same series",
            )
    return h


def _overlap(a: Holdout, b: Holdout) -> bool:
    lo_a = 1 if a.min_bytes is None else a.min_bytes
    hi_a = math.inf if a.max_bytes is None else a.max_bytes
    lo_b = 1 if b.min_bytes is None else b.min_bytes
    hi_b = math.inf if b.max_bytes is None else b.max_bytes
    return lo_a <= hi_b and lo_b <= hi_a
