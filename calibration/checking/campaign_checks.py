"""The honesty checks of a campaign's result: surrogate error, importance sampling, moves,
grouped vs final posterior, warm-up, coverage, bounds and symmetry
(:mod:`~mpiuq.calibration.checking.checks` holds the check type and thresholds).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.checking.checks import (
    KHAT_LIMIT,
    WARMUP_P,
    Check,
    coverage_threshold,
    importance_check,
)
from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.observations import Observations
from mpiuq.calibration.reporting.bounds import bound_shares, bounds_check
from mpiuq.calibration.reporting.campaign_result import VariantResult
from mpiuq.calibration.sampling.posterior import Posterior
from mpiuq.calibration.units import unit_of

FloatArray = npt.NDArray[np.float64]


def _mcmc_check(passed: bool, what: str, *, aid_only: bool) -> Check:
    """``mcmc_converged``: a warning where the surrogate MCMC only grouped the parameters
    and seeded the direct sampler (the posterior is judged by ``posterior_converged``)."""
    message = (
        f"surrogate MCMC: {what}"
        if passed
        else "a surrogate MCMC stage did not meet its R-hat/ESS targets within its "
        "max_steps (grouped: [calibration]; refined: [refinement])"
    )
    if aid_only and not passed:
        message += (
            " (it only grouped the parameters and seeded the direct sampler: the posterior "
            "is judged by posterior_converged)"
        )
    return Check("mcmc_converged", passed, "warn" if aid_only else "fail", None, None, message)


def campaign_checks(
    campaign: Campaign,
    grouped: Posterior,
    main: VariantResult,
    alternatives: tuple[VariantResult, ...],
    shift: FloatArray,
) -> tuple[Check, ...]:
    """The checks of the main variant's posterior: MCMC convergence, surrogate error,
    importance sampling, predictive coverage, grouped vs final posterior, PSIS-LOO and
    prior bounds."""
    t = campaign.checks
    stages = [grouped.converged, main.proposal.posterior.converged]
    stages += [a.proposal.posterior.converged for a in alternatives]
    surrogate_mcmc = (
        "the grouped MCMC met the [calibration] R-hat/ESS targets"
        if main.direct is not None
        else "the grouped MCMC met the [calibration] R-hat/ESS targets and the final refined "
        "MCMC the [refinement] ones"
    )
    out = [_mcmc_check(all(stages), surrogate_mcmc, aid_only=main.direct is not None)]
    check = main.proposal.check
    worst = check.worst_sd
    by = main.proposal.checked_by
    out.append(
        Check(
            "surrogate_error",
            worst <= t.max_surrogate_error_sd and by == "simulator",
            # with a simulator the posterior is sampled on it (direct) or corrected on it
            # (judged by importance_sampling); without one the surrogate's is the answer
            "warn" if by == "simulator" else "fail",
            worst,
            t.max_surrogate_error_sd,
            f"largest RMS surrogate error at posterior draws: {worst:.3g} data sd"
            + ("" if by == "simulator" else " (LOO only: no simulator to check the posterior)"),
        )
    )
    out += _importance_checks(campaign, main, alternatives)
    n = main.predictive.inside.size
    need = coverage_threshold(n, t.coverage_alpha)
    got = main.predictive.n_inside
    out.append(
        Check(
            "predictive_coverage",
            got >= need,
            "fail",
            float(got),
            float(need),
            f"data inside the 90% simulator-predictive band at {got} of {n} sizes "
            f"(at least {need} expected; in-sample: scored on the sizes the "
            f"{'discrepancy was' if main.problem.discrepancy.enabled else 'parameters were'} "
            "fitted to)"
            + (
                "" if got >= need else ": model-form error; consider [discrepancy] model = 'regime'"
            ),
        )
    )
    worst_shift = float(np.max(shift))
    worst_name = main.problem.names[int(np.argmax(shift))]
    out.append(
        Check(
            "grouped_vs_posterior",
            worst_shift <= t.max_grouped_shift_sd,
            "warn",
            worst_shift,
            t.max_grouped_shift_sd,
            f"grouped (eq. 9) surrogate posterior means within {worst_shift:.2g} posterior sd "
            f"of the final posterior's (largest: {worst_name})",
        )
    )
    kmax = float(np.max(main.loo.pareto_k))
    out.append(
        Check(
            "loo_reliable",
            kmax <= KHAT_LIMIT,
            "warn",
            kmax,
            KHAT_LIMIT,
            f"largest pointwise PSIS-LOO k-hat {kmax:.2f}",
        )
    )
    p = main.problem
    shares = bound_shares(main.exact.draws, p.names, p.lower, p.upper, p.n_model, p.discrepancy.dim)
    out.append(bounds_check(shares, {n: unit_of(n) for n in p.names}))
    return tuple(out)


def _importance_checks(
    campaign: Campaign, main: VariantResult, alternatives: tuple[VariantResult, ...]
) -> list[Check]:
    """The importance weights of the main variant (must pass) and of the alternatives."""
    t = campaign.checks
    out: list[Check] = []
    w = main.exact.weights
    if main.exact.method == "surrogate":
        out.append(
            Check(
                "importance_sampling",
                False,
                "fail",
                None,
                t.max_khat,
                "no simulator: the posterior is the surrogate's, not corrected on the simulator",
            )
        )
    elif w is not None:
        out.append(importance_check("importance_sampling", w, t.max_khat, t.min_ess, "fail"))
    for a in alternatives:
        if a.exact.weights is not None:
            name = f"importance_sampling ({a.name})"
            out.append(importance_check(name, a.exact.weights, t.max_khat, t.min_ess, "warn"))
    return out


#: Largest relative output change under a swap of declared exchangeable parameters.
MAX_SWAP_ERROR = 1e-9


def posterior_checks(
    campaign: Campaign,
    main: VariantResult,
    alternatives: tuple[VariantResult, ...],
    swap: float | None,
) -> tuple[Check, ...]:
    """Must-pass checks of the posterior path: the direct sampler's convergence, or the
    moves' mixing on the surrogate path, and the declared symmetry."""
    out: list[Check] = []
    for v in (main, *alternatives):
        suffix = "" if v is main else f" ({v.name})"
        severity = "fail" if v is main else "warn"
        d = v.direct
        if d is not None:
            ess = float(min(np.min(d.ess_bulk), np.min(d.ess_tail)))
            rhat = float(np.max(d.rhat))
            detail = (
                f"direct MCMC on the simulator, {d.populations} populations x {d.walkers} "
                f"walkers, {d.steps} steps ({d.evaluations} simulator runs, {d.seconds:.1f} s): "
                f"max R-hat {rhat:.4f} (<= {d.target_rhat}), min bulk/tail ESS {ess:.0f} "
                f"(>= {d.target_ess:.0f})"
            )
            if d.nonfinite:
                detail += f"; {d.nonfinite} simulator runs gave a NaN or infinite log-likelihood"
            if not d.converged:
                detail += ": not converged within posterior.max_steps"
            out.append(
                Check(
                    f"posterior_converged{suffix}", d.passed, severity, rhat, d.target_rhat, detail
                )
            )
        elif v.exact.moves is not None and v.exact.moves.steps == 0:
            # no move step (a run budget that paid for none, or exact.move_steps = 0):
            # nothing mixed, nothing to check but the importance weights (their own check)
            mv = v.exact.moves
            detail = (
                "resample-move: no move step (exact.move_steps = 0 or none fitted in "
                "[simulator] max_simulator_runs); the draws are the importance-resampled "
                f"proposal draws ({mv.unique_after} distinct), checked by importance_sampling "
                "only"
            )
            out.append(Check(f"moves_mixed{suffix}", False, "warn", None, None, detail))
        elif v.exact.moves is not None:
            mv = v.exact.moves
            rhat = float(np.nanmax(mv.rhat)) if np.isfinite(mv.rhat).any() else float("inf")
            target = campaign.posterior.target_rhat
            ok = rhat <= target and mv.nonfinite == 0
            detail = (
                f"resample-move: {mv.steps} steps of {mv.populations} sub-populations, "
                f"acceptance {mv.acceptance:.2f}, R-hat across sub-populations {rhat:.4f} "
                f"(<= {target}); {mv.unique_after} distinct draws"
                + (" (run budget reached)" if mv.budget_limited else "")
                + (f"; {mv.nonfinite} NaN or infinite log-likelihoods" if mv.nonfinite else "")
            )
            out.append(Check(f"moves_mixed{suffix}", ok, severity, rhat, target, detail))
    if swap is not None:
        names = "; ".join(", ".join(g) for g in campaign.posterior.exchangeable)
        out.append(
            Check(
                "exchangeable",
                swap <= MAX_SWAP_ERROR,
                "fail",
                swap,
                MAX_SWAP_ERROR,
                f"swapping the declared exchangeable parameters ({names}) at random prior "
                f"points changes the simulator's outputs by at most {swap:.2g} (relative)"
                + ("" if swap <= MAX_SWAP_ERROR else ": the declaration is wrong for this model"),
            )
        )
    return tuple(out)


def warmup_checks(campaign: Campaign, obs: Observations) -> tuple[Check, ...]:
    """A warning for every data table that drops warm-up iterations it does not have."""
    out = []
    for k, spec in enumerate(campaign.datasets):
        if not spec.drop_warmup:
            continue
        p, excess = obs.warmup_p[k], obs.warmup_excess[k]
        ok = bool(np.isfinite(p) and p < WARMUP_P)
        detail = (
            f"first iterations of the bursts of {spec.burst_length} are {100 * excess:+.1f}% "
            f"(median over sizes; sign test p = {p:.2g})"
            if np.isfinite(p)
            else f"no size has two bursts of {spec.burst_length} to compare"
        )
        out.append(
            Check(
                f"warmup ({spec.label})",
                ok,
                "warn",
                None if not np.isfinite(p) else float(p),
                WARMUP_P,
                detail
                + (
                    ""
                    if ok
                    else ": no warm-up detected (synthetic data?), so drop_warmup = true discards "
                    f"1 in {spec.burst_length} clean replicas; set drop_warmup = false"
                ),
            )
        )
    return tuple(out)


