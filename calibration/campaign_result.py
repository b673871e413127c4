"""The frozen outcome of a calibration campaign (:func:`~mpiuq.calibration.campaign.run_campaign`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.estimates import Estimates
from mpiuq.calibration.grouping import Grouping
from mpiuq.calibration.observations import Observations
from mpiuq.calibration.posterior import Posterior, Problem
from mpiuq.calibration.predictive import Predictive
from mpiuq.surrogate.pce import PolynomialChaos

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """Everything a campaign computed; the CLI turns it into files, plots and tables."""

    campaign: Campaign
    observations: Observations
    surrogate: PolynomialChaos
    sobol_total: FloatArray
    grouping: Grouping
    problem: Problem
    posterior: Posterior
    estimates: Estimates
    predictive: Predictive
    joint: Posterior | None
    joint_estimates: Estimates | None
    design_outputs: FloatArray
    timings_s: tuple[tuple[str, float], ...]
