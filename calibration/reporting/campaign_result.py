"""The frozen outcome of a calibration campaign (:func:`~mpiuq.calibration.pipeline.campaign.run_campaign`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.checking.checks import Check
from mpiuq.calibration.checking.validation_result import ValidationResult
from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.reporting.comparison import Loo
from mpiuq.calibration.reporting.estimates import Estimates
from mpiuq.calibration.reporting.predictive import Predictive
from mpiuq.calibration.sampling.direct import DirectStats
from mpiuq.calibration.sampling.exact import ExactPosterior
from mpiuq.calibration.sampling.grouping import Grouping
from mpiuq.calibration.sampling.posterior import Posterior, Problem
from mpiuq.calibration.sampling.posterior_path import PathChoice
from mpiuq.calibration.sampling.proposal import Proposal
from mpiuq.surrogate.chaos.pce import PolynomialChaos

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class VariantResult:
    """One likelihood variant (with or without discrepancy) calibrated end to end.

    Attributes
    ----------
    name
        ``"discrepancy"`` or ``"no discrepancy"``.
    problem
        The exact problem: simulator predictor, prior box, data, discrepancy.
    proposal
        The refined surrogate posterior and the surrogate check at it.
    exact
        Posterior draws of the simulator's likelihood.
    predictive
        Simulator-computed prior and posterior predictive.
    loo
        PSIS-LOO of the pointwise log-likelihood.
    direct
        The direct sampler's diagnostics (None on the surrogate path).
    """

    name: str
    problem: Problem
    proposal: Proposal
    exact: ExactPosterior
    predictive: Predictive
    loo: Loo
    direct: DirectStats | None = None

    @property
    def verified(self) -> bool:
        """Whether the draws are the simulator's posterior by passed diagnostics: the
        direct sampler converged with no model failure (the surrogate path is never
        verified: what its moves could not correct does not show in its diagnostics)."""
        return self.direct is not None and self.direct.passed


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """Everything a campaign computed; the CLI turns it into files, plots and tables.

    Attributes
    ----------
    surrogate, sobol_total, grouping
        The global chaos over the prior, its total Sobol indices and the groups of eq. (9).
    problem
        The global-surrogate problem the grouped posterior was sampled on.
    posterior
        The grouped (eq. 9) posterior on the global surrogate (the paper's method), kept
        for the comparison with the exact posterior.
    main
        The campaign's model (discrepancy as configured), refined and exact.
    alternatives
        Variants fitted for the model comparison (the model without discrepancy).
    estimates
        Estimates of ``main``.
    grouped_shift_sd
        Per parameter: ``|grouped mean - exact mean| / exact sd``.
    comparison
        Rows of the PSIS-LOO comparison of ``main`` and ``alternatives`` (empty if none).
    checks
        The honesty checks (:mod:`~mpiuq.calibration.checking.checks`).
    path
        Which posterior path ran and why (:mod:`~mpiuq.calibration.sampling.posterior_path`).
    swap_error
        Largest relative output change when declared exchangeable parameters are swapped
        (None when none are declared).
    validation
        Held-out and unselected data scored after the fit (``[validation]``; None
        without one): :mod:`~mpiuq.calibration.checking.validation`.
    simulator_runs
        An external simulator's runs per stage, in all and against the budget
        (:func:`~mpiuq.calibration.pipeline.external.runs_summary`); None for mpiuq's simulator.
    """

    campaign: Campaign
    observations: Observations
    surrogate: PolynomialChaos
    sobol_total: FloatArray
    grouping: Grouping
    problem: Problem
    posterior: Posterior
    main: VariantResult
    alternatives: tuple[VariantResult, ...]
    estimates: Estimates
    grouped_shift_sd: FloatArray
    comparison: tuple[dict[str, Any], ...]
    checks: tuple[Check, ...]
    design_outputs: FloatArray
    timings_s: tuple[tuple[str, float], ...]
    path: PathChoice | None = None
    swap_error: float | None = None
    validation: ValidationResult | None = None
    simulator_runs: dict[str, Any] | None = None

    @property
    def predictive(self) -> Predictive:
        """The main variant's predictive."""
        return self.main.predictive
