"""The sections of ``summary.json`` about the parameters, their identifiability, the model
comparison and the surrogate (:func:`~mpiuq.calibration.reporting.report.summary_dict`
assembles them with the others)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mpiuq.calibration.reporting.campaign_result import CampaignResult, VariantResult


def marginal(draws: np.ndarray, j: int, est: Any = None) -> dict[str, Any]:
    from mpiuq.calibration.reporting.summaries import hdi

    x = draws[:, j]
    return {
        "median": float(np.median(x)),
        "mean": float(x.mean()),
        "sd": float(x.std(ddof=1)),
        "hdi90": list(hdi(x)),
    }


def parameter_entries(
    result: CampaignResult,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Every sampled parameter's marginal, MAP, prior, information and grouped marginal:
    the model parameters, the discrepancy parameters and the noise parameters."""
    main = result.main
    names = main.problem.names
    nm = main.problem.n_model
    nd = main.problem.discrepancy.dim
    est = result.estimates
    mode = est.mode
    grouped = result.posterior.draws.reshape(-1, result.posterior.draws.shape[-1])
    params: dict[str, Any] = {}
    disc_params: dict[str, Any] = {}
    noise_params: dict[str, Any] = {}
    for j, n in enumerate(names):
        info = est.identifiability.parameters[j]
        entry = {
            "median": float(est.median[j]),
            "mean": est.marginals[j].mean,
            "sd": est.marginals[j].sd,
            "hdi90": list(est.marginals[j].hdi90),
            "map": float(mode.best[j]) if mode.unique else None,
            "prior": [float(main.problem.lower[j]), float(main.problem.upper[j])],
            "information": {
                "sd_ratio": info.sd_ratio,
                "kl_nats": info.kl_nats,
                "label": info.label,
            },
            "grouped": marginal(grouped, j) | {"shift_sd": float(result.grouped_shift_sd[j])},
        }
        if j < nm:
            entry["nominal"] = float(result.problem.nominal[j])
            params[n] = entry
        elif j < nm + nd:
            disc_params[n] = entry
        else:
            noise_params[n] = entry
    return params, disc_params, noise_params


def identifiability_section(result: CampaignResult) -> dict[str, Any]:
    """Identified parameter combinations, the candidates and the weak directions."""
    ident = result.estimates.identifiability
    combos = [
        {
            "expression": cmb.expression,
            "kind": cmb.kind,
            "parameters": [cmb.first, cmb.second],
            "sd_ratio": cmb.sd_ratio,
            "gain": cmb.gain,
            "median": cmb.median,
            "hdi90": list(cmb.hdi90),
            "identified": cmb.identified,
        }
        for cmb in ident.combinations
    ]
    return {
        "identified_combinations": [x for x in combos if x["identified"]],
        "candidates": combos[:12],
        "directions": [
            {"sd_ratio": d.sd_ratio, "loadings": dict(d.loadings)} for d in ident.directions
        ],
    }


def posterior_section(v: VariantResult) -> dict[str, Any]:
    """How a variant's posterior was computed and what was verified."""
    e = v.exact
    names = v.problem.names
    out: dict[str, Any] = {
        "method": e.method,
        "source": e.source,
        "n_draws": int(e.draws.shape[0]),
        "exact_for_simulator": v.verified,
    }
    d = v.direct
    if d is not None:
        out["direct"] = {
            "populations": d.populations,
            "walkers": d.walkers,
            "steps": d.steps,
            "burn": d.burn,
            "evaluations": d.evaluations,
            "seconds": d.seconds,
            "acceptance": d.acceptance,
            "target_rhat": d.target_rhat,
            "target_ess": d.target_ess,
            "converged": d.converged,
            "nonfinite_runs": d.nonfinite,
            "exchangeable": [[names[j] for j in g] for g in d.exchangeable],
            "parameters": {
                n: {
                    "rhat": float(d.rhat[j]),
                    "ess_bulk": float(d.ess_bulk[j]),
                    "ess_tail": float(d.ess_tail[j]),
                    "tau_steps": float(d.tau[j]),
                }
                for j, n in enumerate(names)
            },
            "symmetry": [
                {
                    "parameters": [c.first, c.second],
                    "mean_diff_sd": c.mean_diff_sd,
                    "ks_p": c.ks_p,
                }
                for c in d.symmetry
            ],
        }
    if e.weights is not None:
        out["importance"] = {
            "pareto_khat": e.weights.khat,
            "ess": e.weights.ess,
            "n_proposal": int(e.weights.log_weights.size),
            "n_nonfinite": e.weights.n_nonfinite,
        }
    if e.moves is not None:
        out["moves"] = {
            "steps": e.moves.steps,
            "acceptance": e.moves.acceptance,
            "unique_before": e.moves.unique_before,
            "unique_after": e.moves.unique_after,
            "populations": e.moves.populations,
            "rhat": {n: float(e.moves.rhat[j]) for j, n in enumerate(names)},
            "runs": e.moves.runs,
            "budget_limited": e.moves.budget_limited,
            "nonfinite_runs": e.moves.nonfinite,
        }
    return out


def comparison_section(result: CampaignResult) -> dict[str, Any]:
    """PSIS-LOO of the main variant and its alternatives, their coverage and medians."""
    main = result.main
    obs = result.observations
    out_names = list(result.surrogate.output_names)
    comparison: dict[str, Any] = {"method": "PSIS-LOO (ArviZ), one observation per size"}
    variants = {}
    for v in (main, *result.alternatives):
        variants[v.name] = {
            "elpd_loo": v.loo.elpd,
            "se": v.loo.se,
            "p_loo": v.loo.p_loo,
            "max_pareto_k": float(np.max(v.loo.pareto_k)),
            "n_inside_90": v.predictive.n_inside,
            "n_sizes": int(v.predictive.inside.size),
            "sizes_outside_90": [
                int(sz)
                for sz, ok in zip(obs.sizes_bytes, v.predictive.inside, strict=True)
                if not ok
            ],
            "outputs_outside_90": [
                name for name, ok in zip(out_names, v.predictive.inside, strict=True) if not ok
            ],
            "z_model_median": [float(z) for z in (v.predictive.model_median - obs.mean) / obs.sd],
            "posterior": posterior_section(v),
            "surrogate_at_posterior_worst_sd": v.proposal.check.worst_sd,
            "medians": {
                n: float(np.median(v.exact.draws[:, j])) for j, n in enumerate(v.problem.names)
            },
        }
    comparison["variants"] = variants
    comparison["table"] = list(result.comparison)
    return comparison


def surrogate_at_posterior(v: VariantResult, out_names: list[str]) -> dict[str, Any]:
    c = v.proposal.check
    return {
        "checked_by": v.proposal.checked_by,
        "n_draws": c.n_draws,
        "worst_rmse_data_sd": c.worst_sd,
        "outputs": {
            n: {
                "rmse": float(c.rmse[i]),
                "rmse_data_sd": float(c.rmse_sd[i]),
                "max_abs": float(c.max_abs[i]),
            }
            for i, n in enumerate(out_names)
        },
    }


def surrogate_section(result: CampaignResult) -> dict[str, Any]:
    """The global and local surrogates, the refinement rounds and the error at the
    posterior."""
    c = result.campaign
    main = result.main
    out_names = list(result.surrogate.output_names)
    local = main.proposal.surrogate
    return {
        "n_train": int(result.surrogate.train_x.shape[0]),
        "n_terms": int(result.surrogate.n_terms),
        "level": c.surrogate.level,
        "order": c.surrogate.order,
        "loo_rmse": dict(zip(out_names, map(float, result.surrogate.loo_rmse), strict=True)),
        "local": {
            "box": {
                n: [float(local.box.lower[j]), float(local.box.upper[j])]
                for j, n in enumerate(main.problem.model_names)
            },
            "n_train": int(local.train_x.shape[0]),
            "loo_rmse": dict(zip(out_names, map(float, local.loo_rmse), strict=True)),
        },
        "refinement": [
            {
                "n_design": rd.n_design,
                "worst_rmse_data_sd": rd.check.worst_sd,
                "pressed_faces": list(rd.pressed),
                "converged": rd.converged,
            }
            for rd in main.proposal.rounds
        ],
        "at_posterior": surrogate_at_posterior(main, out_names),
    }
