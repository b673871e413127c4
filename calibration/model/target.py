"""The campaign's posterior with the simulator as predictor: the target every sampler aims at.

:func:`simulator_problem` builds the likelihood problem of a campaign (data, priors,
discrepancy and noise model) with the simulator itself as predictor and no surrogate
error term. Its ``log_posterior()`` is the density the direct sampler, the surrogate path's
importance weights and moves, and an independent reference run all target.
"""

from __future__ import annotations

import numpy as np

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.model.discrepancy import Discrepancy
from mpiuq.calibration.model.joint_model import NamedModel
from mpiuq.calibration.model.likelihood import ModelPredictor
from mpiuq.calibration.pipeline.campaign import noise_for
from mpiuq.calibration.sampling.posterior import Problem


def simulator_problem(
    campaign: Campaign,
    observations: Observations,
    model: NamedModel,
    discrepancy: Discrepancy | None = None,
    nominal: np.ndarray | None = None,
) -> Problem:
    """The campaign's likelihood over all its parameters with ``model`` as predictor.

    Parameters
    ----------
    campaign
        The validated campaign (priors, likelihood families).
    observations
        Its data (:func:`~mpiuq.calibration.pipeline.campaign.observations_for`).
    model
        Batch model of the data tables (:func:`~mpiuq.calibration.pipeline.campaign.model_for`).
    discrepancy
        The discrepancy model (none by default).
    nominal
        Nominal values of all parameters (default: the campaign's nominal values, zero
        discrepancy and the noise model's); they only matter for a subset of columns.
    """
    p = campaign.parameters
    disc = discrepancy if discrepancy is not None else Discrepancy()
    noise = noise_for(campaign, observations)
    default = np.concatenate([np.asarray(p.nominal, dtype=np.float64), disc.nominal, noise.nominal])
    return Problem(
        predictor=ModelPredictor(model),
        names=p.names + disc.names + noise.names,
        lower=np.concatenate([np.asarray(p.lower, dtype=np.float64), disc.lower, noise.lower]),
        upper=np.concatenate([np.asarray(p.upper, dtype=np.float64), disc.upper, noise.upper]),
        nominal=default if nominal is None else np.asarray(nominal, dtype=np.float64),
        data_mean=observations.mean,
        data_var=observations.var,
        loo_rmse=np.zeros_like(observations.mean),
        discrepancy=disc,
        noise=noise,
    )
