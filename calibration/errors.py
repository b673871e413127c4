"""Typed errors of the calibration layer.

Every error names the offending key or value and what was expected, so that a
user editing a campaign file or a data file knows what to change.
"""

from __future__ import annotations


class CalibrationError(Exception):
    """Base class of all errors raised by :mod:`mpiuq.calibration`."""


class CampaignError(CalibrationError, ValueError):
    """A campaign file has a missing, unknown or invalid key.

    Attributes
    ----------
    key : str
        Dotted key of the campaign file, e.g. ``"calibration.walkers"``.
    value : object
        The offending value (``"(missing)"`` when the key is absent).
    allowed : str
        What the key accepts.
    """

    def __init__(self, key: str, value: object, allowed: str) -> None:
        self.key = key
        self.value = value
        self.allowed = allowed
        super().__init__(f"campaign key {key!r} = {value!r} is invalid: expected {allowed}")


class DataError(CalibrationError, ValueError):
    """Measured benchmark data cannot support the requested calibration.

    Raised for missing sizes, sizes with fewer than 2 replicas, zero variance
    without a configured floor, malformed CSV rows and unknown benchmark labels.
    """


class SamplerError(CalibrationError, ValueError):
    """Invalid sampler settings or a log-posterior that cannot be sampled."""


class ResultsError(CalibrationError, ValueError):
    """A campaign's result folder or ``summary.json`` is missing, unreadable or incomplete."""


class RunBudgetError(CalibrationError, ValueError):
    """A stage of a campaign needs more simulator runs than ``max_simulator_runs`` leaves.

    The message names the stage, the runs it needs, the runs spent per stage so far and
    the budget.
    """
