"""Leave-one-series-out validation: each data series predicted by a fit of the others.

For a campaign with several data tables, fold ``k`` is the campaign with table ``k``
held out as a whole (:func:`fold_campaigns`; the campaign's own ``[validation]``
hold-outs of other series stay held out), fitted and scored like any campaign with a
``[validation]`` table (:mod:`~mpiuq.calibration.checking.validation`). The folds share one
global design (:func:`shared_design`): the simulator runs once on the sparse grid for
the outputs of every fitted series, and each fold takes the columns of the series it
keeps (:mod:`~mpiuq.calibration.data.design_reuse`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.config.validation_spec import Holdout
from mpiuq.calibration.errors import CampaignError

if TYPE_CHECKING:  # the pipeline (numba, ArviZ) loads when a fold runs
    from mpiuq.calibration.data.design_reuse import DesignColumns
    from mpiuq.calibration.pipeline.campaign import ProgressFn
    from mpiuq.surrogate.executors import Executor


def fold_campaigns(campaign: Campaign) -> tuple[tuple[str, Campaign], ...]:
    """``(label, campaign without that series)`` for every series the campaign fits.

    Raises
    ------
    CampaignError
        If the campaign fits fewer than two data tables (a fold must fit something).
    """
    spec = campaign.validation
    labels = [t.label for t in campaign.datasets if not spec.wholly_held_out(t.label)]
    if len(labels) < 2:
        raise CampaignError(
            "data",
            labels,
            "two or more fitted [[data]] tables for leave-one-series-out (each fold fits the "
            "others and predicts the one left out)",
        )
    folds = []
    for label in labels:
        holdouts = (*(h for h in spec.holdouts if h.series != label), Holdout(label))
        folds.append(
            (label, replace(campaign, validation=replace(spec, holdouts=holdouts, present=True)))
        )
    return tuple(folds)


def shared_design(
    campaign: Campaign,
    path: Path,
    executor: Executor | None = None,
    on_progress: ProgressFn | None = None,
) -> DesignColumns:
    """The global design of every series the campaign fits, for the folds to share
    (resumable through ``path``)."""
    from mpiuq.calibration.checking.validation import split_campaign
    from mpiuq.calibration.data.design_reuse import DesignColumns, output_keys
    from mpiuq.calibration.pipeline.campaign import (
        CampaignProgress,
        design_outputs,
        model_for,
        observations_for,
        threads_per_call,
    )

    fit = split_campaign(campaign).fit if campaign.validation.present else campaign
    obs = observations_for(fit)
    model = model_for(fit, obs, threads_per_call(executor))
    emit: ProgressFn = on_progress if on_progress is not None else (lambda _p: None)
    emit(CampaignProgress("data", 1, 1, f"{obs.sizes_bytes.size} sizes of every series"))
    x, y, _ = design_outputs(fit, obs, model, path, executor, emit)
    return DesignColumns(x, y, output_keys(fit, obs))
