"""Typed errors of the surrogate layer.

Every error raised for bad input subclasses :class:`ValueError`; every failure of a
design run subclasses :class:`RuntimeError`.  Messages name the offending value and
what was expected.
"""

from __future__ import annotations


class SurrogateInputError(ValueError):
    """Bad input to a surrogate function (box, design, outputs, order, file contents)."""


class RankDeficientError(SurrogateInputError):
    """The least-squares design matrix does not have full column rank.

    Attributes
    ----------
    rank : int
        Numerical rank of the design matrix.
    n_terms : int
        Number of columns (polynomial terms) of the design matrix.
    """

    def __init__(self, message: str, rank: int, n_terms: int) -> None:
        super().__init__(message)
        self.rank = rank
        self.n_terms = n_terms


class RankDeficiencyWarning(UserWarning):
    """Issued instead of :class:`RankDeficientError` when the caller allows it."""


class ExecutorConfigError(SurrogateInputError):
    """Bad executor settings (worker count, scheduler address)."""


class DesignRunError(RuntimeError):
    """A design run failed (the model raised or returned outputs of the wrong shape)."""


class DesignMismatchError(DesignRunError):
    """A design store on disk belongs to a different design or model."""


class IncompleteDesignError(DesignRunError):
    """Outputs were requested from a design store whose points are not all done."""


class StoreError(DesignRunError):
    """A design store cannot be read (damaged, truncated, not a store); names the file and the fix."""


class StoreWriteError(DesignRunError):
    """Writing a design store failed (disk full, I/O error, permissions); the run stopped."""


class BudgetError(SurrogateInputError):
    """The requested settings need more memory or work than the resource budget allows.

    Attributes
    ----------
    resource : str
        ``"memory"``, ``"model work"`` or ``"surrogate evaluations"``.
    needed, limit : float
        The estimate and the limit, in bytes for memory and in counts otherwise.
    """

    def __init__(self, message: str, resource: str, needed: float, limit: float) -> None:
        super().__init__(message)
        self.resource = resource
        self.needed = needed
        self.limit = limit


class SimulatorRunError(DesignRunError):
    """A run of an external simulator failed: it raised, exited non-zero, timed out, or
    returned outputs of the wrong shape, NaN or negative values; the message names the
    parameter set(s) and what was expected."""
