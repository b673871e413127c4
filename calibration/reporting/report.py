"""Turn a :class:`~mpiuq.calibration.reporting.campaign_result.CampaignResult` into data for humans and tools.

:func:`inference_data` builds the ArviZ container saved as ``posterior.nc``;
:func:`summary_dict` builds the JSON-ready ``summary.json`` content. Neither prints
nor writes: the CLI does.
"""

from __future__ import annotations

from typing import Any

import arviz as az
import numpy as np

from mpiuq.calibration.checking.checks import failed
from mpiuq.calibration.reporting.campaign_result import CampaignResult, VariantResult
from mpiuq.calibration.reporting.summary_sections import (
    comparison_section,
    identifiability_section,
    parameter_entries,
    posterior_section,
    surrogate_section,
)
from mpiuq.calibration.sampling.posterior import Posterior
from mpiuq.calibration.sampling.sampler import ChainDiagnostics
from mpiuq.simulator.benchmarks.kinds import WINDOWED_BENCHMARKS
from mpiuq.simulator.regimes import CONTINUOUS_SLOTS
from mpiuq.surrogate.store.json_text import json_text


def inference_data(result: CampaignResult) -> az.InferenceData:
    """ArviZ InferenceData of the final posterior draws (one chain).

    Groups: ``posterior`` (one variable per parameter: model, discrepancy, noise),
    ``log_likelihood`` (``y``: pointwise over the ``output`` names, for PSIS-LOO),
    ``posterior_predictive`` and ``prior_predictive`` (``y``, simulator-computed),
    ``prior``, ``observed_data`` (``y`` = per-size data mean) and ``constant_data`` (data
    sd, RMS surrogate error at the posterior, size and data set index of every output). Attributes name the model parameters,
    the fixed simulator values (JSON) and the posterior's source.
    """
    main = result.main
    names = main.problem.names
    draws = main.exact.draws
    pred = main.predictive
    obs = result.observations
    coords = {"output": list(result.surrogate.output_names)}
    per_output = ("y", "data_sd", "surrogate_rmse", "size_bytes", "data_set")
    dims = {k: ["output"] for k in per_output}
    idata = az.from_dict(
        posterior={n: draws[None, :, j] for j, n in enumerate(names)},
        log_likelihood={"y": main.exact.loglik[None]},
        prior={n: pred.prior_x[None, :, j] for j, n in enumerate(names)},
        posterior_predictive={"y": pred.draws[None]},
        prior_predictive={"y": pred.prior_draws[None]},
        observed_data={"y": obs.mean},
        constant_data={
            "data_sd": obs.sd,
            "surrogate_rmse": main.proposal.check.rmse,
            "size_bytes": obs.sizes_bytes,
            "data_set": obs.dataset,
        },
        coords=coords,
        dims=dims,
    )
    attrs = idata.posterior.attrs
    attrs["campaign"] = result.campaign.name
    attrs["seed"] = result.campaign.seed
    attrs["observable"] = obs.observable
    attrs["data_sets"] = json_text(list(obs.labels))
    attrs["source"] = main.exact.source
    attrs["method"] = main.exact.method
    attrs["exact_for_simulator"] = int(main.verified)
    attrs["model_parameters"] = json_text(list(main.problem.model_names))
    attrs["fixed"] = json_text(_fixed(result))
    attrs["checks_passed"] = int(not failed(result.checks))
    return idata


def _f(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _diag_entry(d: ChainDiagnostics, k: int, steps: int) -> dict[str, Any]:
    return {
        "rhat": _f(d.rhat[k]),
        "ess_bulk": _f(d.ess_bulk[k]),
        "ess_tail": _f(d.ess_tail[k]),
        "tau_steps": _f(d.tau[k]),
        "acceptance": float(np.mean(d.acceptance)),
        "steps": steps,
        "converged": d.converged,
    }


def _diagnostics(post: Posterior, names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in post.groups:
        for k, j in enumerate(g.parameters):
            out[names[j]] = _diag_entry(g.samples.diagnostics, k, g.samples.total_steps)
    for j in post.unconstrained:
        out[names[j]] = {"rhat": None, "ess_bulk": None, "ess_tail": None, "sampled": False}
    out["converged"] = post.converged
    return out


def _path(result: CampaignResult) -> dict[str, Any]:
    """Which posterior path ran, why, and what was verified."""
    p = result.path
    out: dict[str, Any] = {"path": "surrogate" if p is None else p.path}
    if p is not None:
        out |= {
            "setting": p.setting,
            "reason": p.reason,
            "batch_size": p.batch_size,
            "seconds_per_batch": p.seconds_per_batch,
            "estimated_direct_seconds": p.estimated_seconds,
            "max_direct_seconds": p.limit_seconds,
        }
    out["exchangeable"] = [list(g) for g in result.campaign.posterior.exchangeable]
    out["swap_error"] = result.swap_error
    main = result.main
    if main.verified:
        out["verified"] = (
            "direct MCMC on the simulator converged (R-hat and bulk/tail ESS of every "
            "parameter across independent populations met their targets, no failed "
            "simulator run): the draws are exact for the simulator up to Monte Carlo error "
            "(rare excursions into long tails are not seen by these diagnostics)"
        )
    elif main.direct is not None:
        out["verified"] = "direct MCMC on the simulator did NOT meet its targets: not exact"
    elif main.exact.method == "surrogate":
        out["verified"] = "nothing: no simulator to call; the surrogate's posterior"
    else:
        out["verified"] = (
            "surrogate posterior corrected on the simulator (importance weights and moves); "
            "the importance and moves checks say how far to trust it; not verified exact"
        )
    return out


def _predictive(result: CampaignResult, v: VariantResult) -> dict[str, Any]:
    obs = result.observations
    pred = v.predictive
    sizes: list[dict[str, Any]] = []
    sim = result.campaign.simulator
    for i, s in enumerate(obs.sizes_bytes.tolist()):
        sizes.append(
            {
                "data_set": obs.labels[int(obs.dataset[i])],
                "size_bytes": int(s),
                "protocol": sim.regime_of(int(s)),
                "n_replicas": int(obs.n_replicas[i]),
                "data_mean": float(obs.mean[i]),
                "data_sd": float(obs.sd[i]),
                "post_mean": float(pred.post_mean[i]),
                "post_sd": float(pred.post_sd[i]),
                "post_q05": float(pred.post_lo[i]),
                "post_q95": float(pred.post_hi[i]),
                "model_median": float(pred.model_median[i]),
                "model_q05": float(pred.model_lo[i]),
                "model_q95": float(pred.model_hi[i]),
                "prior_q05": float(pred.prior_lo[i]),
                "prior_q95": float(pred.prior_hi[i]),
                "inside_90": bool(pred.inside[i]),
                "within_data_sd": bool(abs(pred.model_median[i] - obs.mean[i]) <= obs.sd[i]),
                "z": float((pred.model_median[i] - obs.mean[i]) / obs.sd[i]),
                "loo_pareto_k": float(v.loo.pareto_k[i]),
            }
        )
    return {
        "source": pred.source,
        "band": "5-95% of f(x)(1 + bias) + noise over the posterior, noise of the data set's "
        "likelihood (positive: truncated Gaussian / Student-t, or log-normal) with variance "
        "data var + discrepancy var",
        "n_inside_90": pred.n_inside,
        "n_within_data_sd": int(sum(bool(p["within_data_sd"]) for p in sizes)),
        "n_sizes": len(sizes),
        "sizes": sizes,
    }


def _fixed(result: CampaignResult) -> dict[str, Any]:
    """The fixed simulator values for replay: the campaign's, plus the slots of an explicit
    regime table (a calibrated slot holds its prior midpoint here; the estimate overrides
    it; the last regime's unbounded size is left out)."""
    sim = result.campaign.simulator
    out: dict[str, Any] = dict(sim.fixed)
    if sim.regimes and sim.external is None:
        from mpiuq.simulator.regimes import flatten

        out.update({k: v for k, v in flatten(sim.regimes).items() if np.isfinite(v)})
    return out


def _regimes(result: CampaignResult) -> list[dict[str, Any]]:
    """The regimes of the campaign's sizes: the protocol table of mpiuq's simulator, or an
    external simulator's named size ranges."""
    sim = result.campaign.simulator
    if sim.external is not None:
        ext = sim.external
        bounds: list[int | None] = [*ext.regime_max_bytes, None]
        return [{"name": n, "max_bytes": b} for n, b in zip(ext.regime_names, bounds, strict=True)]
    return [
        {
            "name": r.label,
            "protocol": r.protocol,
            "max_bytes": None if r.max_bytes == float("inf") else int(r.max_bytes),
            "segment_bytes": r.segment_bytes,
            "fragment_bytes": r.fragment_bytes,
            **{name: getattr(r, name) for name in CONTINUOUS_SLOTS},
        }
        for r in sim.base_params().regime_table()
    ]


def _data_sets(result: CampaignResult) -> list[dict[str, Any]]:
    """One entry per data table: what was read, how it was reduced and modelled."""
    obs = result.observations
    out = []
    for k, spec in enumerate(result.campaign.datasets):
        out.append(
            {
                "label": spec.label,
                "path": str(spec.path),
                "benchmark": spec.benchmark,
                "model": spec.model,
                "window": spec.window if spec.model in WINDOWED_BENCHMARKS else None,
                "observable": spec.observable,
                "likelihood": spec.likelihood,
                "summary": spec.summary,
                "n_sizes": int(obs.outputs_of(k).size),
                "drop_warmup": spec.drop_warmup,
                "aggregate_bursts": spec.aggregate_bursts,
                "warmup_excess": float(obs.warmup_excess[k]),
                "warmup_p": float(obs.warmup_p[k]),
            }
        )
    return out


def summary_dict(result: CampaignResult) -> dict[str, Any]:
    """The content of ``summary.json`` (JSON-ready: lists, floats, None for non-finite)."""
    c = result.campaign
    main = result.main
    names = main.problem.names
    est = result.estimates
    obs = result.observations
    out_names = list(result.surrogate.output_names)
    mode = est.mode
    params, disc_params, noise_params = parameter_entries(result)
    comparison = comparison_section(result)
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
        "data_sets": _data_sets(result),
        "posterior_source": main.exact.source,
        "grouping": c.calibration.grouping,
        "nominal_source": c.calibration.nominal_source,
        "parameters": params,
        "discrepancy": {
            "model": c.discrepancy.model,
            "bias_rel": c.discrepancy.bias_rel,
            "sd_rel": c.discrepancy.sd_rel,
            "regimes": list(main.problem.discrepancy.regimes),
            "parameters": disc_params,
        },
        "noise": {
            "likelihoods": {spec.label: spec.likelihood for spec in c.datasets},
            "parameters": noise_params,
        },
        "map": {
            "unique": mode.unique,
            "reason": mode.reason(names),
            "log_posterior": mode.best_log_post,
            "starts": int(mode.ends.shape[0]),
        },
        "identifiability": identifiability_section(result),
        "fixed": _fixed(result),
        "regimes": _regimes(result),
        "groups": groups,
        "unconstrained": [names[j] for j in result.grouping.unconstrained],
        "unexplained_outputs": [out_names[i] for i in result.grouping.unexplained],
        "surrogate": surrogate_section(result),
        "posterior": posterior_section(main) | _path(result),
        "sobol_total": {
            "outputs": out_names,
            "parameters": list(main.problem.model_names),
            "values": np.round(result.sobol_total, 6).tolist(),
        },
        "diagnostics": _diagnostics(result.posterior, names),
        "diagnostics_refined": _diagnostics(main.proposal.posterior, names),
        "predictive": _predictive(result, main),
        "model_comparison": comparison,
        "checks": {ch.name: ch.as_dict() for ch in result.checks},
        "checks_passed": not failed(result.checks),
        "timings_s": {k: round(v, 3) for k, v in result.timings_s},
    }
    if result.validation is not None:
        from mpiuq.calibration.checking.validation_report import validation_dict

        summary["validation"] = validation_dict(result.validation)
    ext = c.simulator.external
    if ext is not None:
        summary["simulator"] = {
            "kind": ext.kind,
            "target": ext.target,
            "output_sizes": {label or "data": list(sizes) for label, sizes in ext.output_sizes},
            "max_simulator_runs": ext.max_simulator_runs,
            "batch_size": ext.batch_size,
        }
        summary["simulator_runs"] = result.simulator_runs
        summary["predictive"]["prior_source"] = "surrogate"
        summary["map"]["source"] = "surrogate"
    summary["diagnostics"]["converged"] = _converged(result)
    return _finite_or_none(summary)


def _converged(result: CampaignResult) -> bool:
    """Whether the samplers the posterior rests on met their targets: the direct sampler's
    populations where the simulator was sampled directly (the surrogate MCMC then only
    grouped the parameters and seeded the walkers), else every surrogate MCMC stage."""
    variants = (result.main, *result.alternatives)
    if all(v.direct is not None for v in variants):
        return all(v.direct is not None and v.direct.passed for v in variants)
    return bool(
        result.posterior.converged
        and result.main.proposal.posterior.converged
        and all(a.proposal.posterior.converged for a in result.alternatives)
    )


def _finite_or_none(x: Any) -> Any:
    """Replace every non-finite float of a JSON-ready structure by None."""
    if isinstance(x, dict):
        return {k: _finite_or_none(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite_or_none(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x
