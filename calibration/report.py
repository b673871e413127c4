"""Turn a :class:`~mpiuq.calibration.campaign_result.CampaignResult` into data for humans and tools.

:func:`inference_data` builds the ArviZ container saved as ``posterior.nc``;
:func:`summary_dict` builds the JSON-ready ``summary.json`` content. Neither prints
nor writes: the CLI does.
"""

from __future__ import annotations

from typing import Any

import arviz as az
import numpy as np

from mpiuq.calibration.campaign_result import CampaignResult
from mpiuq.calibration.estimates import Estimates
from mpiuq.calibration.posterior import Posterior


def inference_data(result: CampaignResult) -> az.InferenceData:
    """ArviZ InferenceData with posterior, prior, (prior/posterior) predictive and data.

    Groups: ``posterior`` (one variable per parameter, chain x draw; chain ``c`` pairs
    ensemble ``c`` of every sensitivity group), ``prior``, ``posterior_predictive`` and
    ``prior_predictive`` (variable ``y`` over ``size_bytes``), ``observed_data`` (``y`` =
    per-size data mean) and ``constant_data`` (data sd, surrogate LOO RMSE).
    """
    names = result.problem.names
    draws = result.posterior.draws
    pred = result.predictive
    obs = result.observations
    coords = {"size_bytes": obs.sizes_bytes.tolist()}
    dims = {"y": ["size_bytes"], "data_sd": ["size_bytes"], "loo_rmse": ["size_bytes"]}
    idata = az.from_dict(
        posterior={n: draws[:, :, j] for j, n in enumerate(names)},
        prior={n: pred.prior_x[None, :, j] for j, n in enumerate(names)},
        posterior_predictive={"y": pred.draws},
        prior_predictive={"y": pred.prior_draws[None]},
        observed_data={"y": obs.mean},
        constant_data={"data_sd": obs.sd, "loo_rmse": result.problem.loo_rmse},
        coords=coords,
        dims=dims,
    )
    idata.posterior.attrs["campaign"] = result.campaign.name
    idata.posterior.attrs["seed"] = result.campaign.seed
    idata.posterior.attrs["observable"] = obs.observable
    idata.posterior.attrs["converged"] = int(result.posterior.converged)
    return idata


def _f(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _marginals(est: Estimates, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    return {
        n: {
            "map": float(est.map[j]),
            "mean": est.marginals[j].mean,
            "sd": est.marginals[j].sd,
            "hdi90": list(est.marginals[j].hdi90),
            "constrained": est.constrained[j],
        }
        for j, n in enumerate(names)
    }


def _diagnostics(post: Posterior, names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in post.groups:
        d = g.samples.diagnostics
        for k, j in enumerate(g.parameters):
            out[names[j]] = {
                "rhat": _f(d.rhat[k]),
                "ess_bulk": _f(d.ess_bulk[k]),
                "ess_tail": _f(d.ess_tail[k]),
                "tau_steps": _f(d.tau[k]),
                "acceptance": float(np.mean(d.acceptance)),
                "steps": g.samples.total_steps,
                "converged": d.converged,
            }
    for j in post.unconstrained:
        out[names[j]] = {"rhat": None, "ess_bulk": None, "ess_tail": None, "sampled": False}
    out["converged"] = post.converged
    return out


def summary_dict(result: CampaignResult) -> dict[str, Any]:
    """The content of ``summary.json`` (JSON-ready: lists, floats, None for non-finite)."""
    c = result.campaign
    names = result.problem.names
    obs = result.observations
    params = _marginals(result.estimates, names)
    for j, n in enumerate(names):
        params[n]["prior"] = [c.parameters.lower[j], c.parameters.upper[j]]
        params[n]["nominal"] = float(result.problem.nominal[j])
    if result.joint_estimates is not None:
        joint = _marginals(result.joint_estimates, names)
        for n in names:
            params[n]["joint"] = {k: joint[n][k] for k in ("map", "mean", "sd", "hdi90")}
    out_names = list(result.surrogate.output_names)
    pred = result.predictive
    lo_design = result.design_outputs.min(axis=0)
    hi_design = result.design_outputs.max(axis=0)
    predictive: list[dict[str, Any]] = []
    for i, s in enumerate(obs.sizes_bytes.tolist()):
        within = abs(pred.post_mean[i] - obs.mean[i]) <= obs.sd[i]
        q05, q95 = (float(v) for v in np.quantile(obs.replicas[i], [0.05, 0.95]))
        predictive.append(
            {
                "size_bytes": int(s),
                "output": out_names[i],
                "n_replicas": int(obs.n_replicas[i]),
                "data_mean": float(obs.mean[i]),
                "data_sd": float(obs.sd[i]),
                "data_q05": q05,
                "data_q95": q95,
                "post_mean": float(pred.post_mean[i]),
                "post_sd": float(pred.post_sd[i]),
                "post_model_sd": float(pred.post_model_sd[i]),
                "post_hdi90_approx": [float(pred.post_lo[i]), float(pred.post_hi[i])],
                "prior_q05": float(pred.prior_lo[i]),
                "prior_q95": float(pred.prior_hi[i]),
                "simulator_range_over_design": [float(lo_design[i]), float(hi_design[i])],
                "prior_covers_data": bool(lo_design[i] <= obs.mean[i] <= hi_design[i]),
                "loo_rmse": float(result.problem.loo_rmse[i]),
                "within_data_sd": bool(within),
                "within_data_q05_q95": bool(q05 <= pred.post_mean[i] <= q95),
                "z": float((pred.post_mean[i] - obs.mean[i]) / obs.sd[i]),
            }
        )
    groups = [
        {
            "parameters": [names[j] for j in g.parameters],
            "outputs": [out_names[i] for i in g.outputs],
        }
        for g in result.grouping.groups
    ]
    summary: dict[str, Any] = {
        "name": c.name,
        "seed": c.seed,
        "campaign_file": str(c.source) if c.source is not None else None,
        "observable": obs.observable,
        "grouping": c.calibration.grouping,
        "nominal_source": c.calibration.nominal_source,
        "parameters": params,
        "fixed": dict(c.simulator.fixed),
        "groups": groups,
        "unconstrained": [names[j] for j in result.grouping.unconstrained],
        "unexplained_outputs": [out_names[i] for i in result.grouping.unexplained],
        "surrogate": {
            "n_train": int(result.surrogate.train_x.shape[0]),
            "n_terms": int(result.surrogate.n_terms),
            "level": c.surrogate.level,
            "order": c.surrogate.order,
            "loo_rel_error": dict(
                zip(out_names, map(float, result.surrogate.loo_rel_error), strict=True)
            ),
            "loo_rmse": dict(zip(out_names, map(float, result.surrogate.loo_rmse), strict=True)),
        },
        "sobol_total": {
            "outputs": out_names,
            "parameters": list(names),
            "values": np.round(result.sobol_total, 6).tolist(),
        },
        "diagnostics": _diagnostics(result.posterior, names),
        "map_log_posterior": result.estimates.map_log_post,
        "predictive": predictive,
        "fit": {
            "sizes_within_data_sd": int(sum(p["within_data_sd"] for p in predictive)),
            "sizes_within_data_q05_q95": int(sum(p["within_data_q05_q95"] for p in predictive)),
            "n_sizes": len(predictive),
        },
        "timings_s": {k: round(v, 3) for k, v in result.timings_s},
    }
    if result.joint is not None:
        summary["diagnostics_joint"] = _diagnostics(result.joint, names)
    return summary
