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
    """A design run failed (model output of the wrong shape, unreadable store...)."""


class DesignMismatchError(DesignRunError):
    """A design store on disk belongs to a different design or model."""


class IncompleteDesignError(DesignRunError):
    """Outputs were requested from a design store whose points are not all done."""
