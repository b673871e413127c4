"""Write a finished campaign's result files: the file edge of the calibration layer.

The pipeline (:func:`~mpiuq.calibration.campaign.run_campaign`) returns a frozen
:class:`~mpiuq.calibration.campaign_result.CampaignResult`; this module alone turns it
into files in the results folder:

``surrogate.h5``
    the global polynomial chaos over the prior (:func:`mpiuq.surrogate.storage.save_pce`);
``surrogate_local.h5``
    the final local chaos of the refinement around the posterior;
``posterior.nc``
    ArviZ InferenceData (:func:`mpiuq.calibration.report.inference_data`);
``summary.json``
    the summary of :func:`mpiuq.calibration.report.summary_dict`, plus what the
    caller adds (figure names, plot timings).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mpiuq.calibration.campaign_result import CampaignResult
from mpiuq.surrogate.storage import save_pce

SURROGATE_FILE = "surrogate.h5"
LOCAL_SURROGATE_FILE = "surrogate_local.h5"
POSTERIOR_FILE = "posterior.nc"
SUMMARY_FILE = "summary.json"


def write_result_files(result: CampaignResult, out_dir: str | Path) -> list[Path]:
    """Write ``surrogate.h5``, ``surrogate_local.h5`` and ``posterior.nc`` into ``out_dir``.

    Returns the paths written.
    """
    from mpiuq.calibration.report import inference_data  # arviz import only when needed

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    surrogate = out / SURROGATE_FILE
    save_pce(result.surrogate, surrogate)
    local = out / LOCAL_SURROGATE_FILE
    save_pce(result.main.proposal.surrogate, local)
    posterior = out / POSTERIOR_FILE
    inference_data(result).to_netcdf(str(posterior))
    return [surrogate, local, posterior]


def write_summary(summary: dict[str, Any], out_dir: str | Path) -> Path:
    """Write ``summary.json`` (the content of :func:`~mpiuq.calibration.report.summary_dict`)."""
    path = Path(out_dir) / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return path
