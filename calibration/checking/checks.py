"""The checks a campaign must pass before its answer is trusted, with their thresholds.

Every check has a value, a threshold and a severity. A failed ``"fail"`` check makes
``mpiuq campaign run`` warn on stderr and exit 1, like a non-converged sampler; a failed
``"warn"`` check is printed as a warning only. Thresholds come from the campaign's
``[checks]`` table (:class:`~mpiuq.calibration.config.ChecksSpec`):

``mcmc_converged`` (fail; warn on the direct path)
    every surrogate MCMC stage met its R-hat and ESS targets. On the direct path the
    surrogate MCMC only groups the parameters and seeds the direct sampler, whose own
    convergence is ``posterior_converged`` (fail), so there it is a warning.
``surrogate_error`` (fail)
    the final surrogate's RMS error at posterior draws is at most
    ``max_surrogate_error_sd`` data sd at every output (default 1.0: beyond that the
    surrogate posterior can be off by more than the data's resolution, and the
    importance weights degenerate).
``importance_sampling`` (fail; surrogate path only)
    Pareto k-hat of the simulator/surrogate weights <= ``max_khat`` (0.7, the PSIS
    reliability limit), their ESS >= ``min_ess``, and no draw with a NaN or infinite
    simulator log-likelihood (a failed run never counts as weight); failed without a
    simulator. When the weights are almost uniform (ESS >= 99% of the draws: the surrogate
    is as good as the simulator there) k-hat has no tail to fit and is not used.
``moves_mixed`` (fail; surrogate path only)
    the rank-normalised R-hat across the independently resampled and moved
    sub-populations is at most ``posterior.target_rhat`` for every parameter, and no move
    met a failed simulator run.
``posterior_converged`` (fail; direct path only)
    the direct MCMC on the simulator met ``posterior.target_rhat`` (rank-normalised split
    R-hat across independent populations) and ``posterior.target_ess`` (bulk and tail ESS)
    for every parameter within ``posterior.max_steps``, with no failed simulator run. Only
    then are the draws called exact for the simulator.
``exchangeable`` (fail; with ``posterior.exchangeable``)
    swapping declared exchangeable parameters at random prior points leaves every
    simulator output unchanged (relative change <= 1e-9).
``predictive_coverage`` (fail)
    the number of data means inside their 90% simulator-predictive band is at least the
    ``coverage_alpha`` quantile of Binomial(n_sizes, 0.9) (13 of 18 at the default 1%):
    fewer means the model misses the data beyond their noise (model-form error) and the
    parameter uncertainties are overconfident; a discrepancy model is the remedy.
``grouped_vs_posterior`` (warn)
    the grouped (eq. 9) surrogate posterior's means are within ``max_grouped_shift_sd``
    posterior sd of the final posterior's: the grouping approximation is harmless.
``loo_reliable`` (warn)
    every pointwise PSIS-LOO k-hat <= 0.7 (else the LOO comparison is indicative only).
``heldout_coverage (<group>)`` (fail; with ``[validation]`` hold-outs)
    the sizes held out of the fit (a whole series or a size range) inside their 90% full
    posterior-predictive band number at least the ``coverage_alpha`` quantile of
    Binomial(n_sizes, 0.9) (:mod:`~mpiuq.calibration.checking.validation`): the out-of-sample test.
``unselected_coverage (<data set>)`` (fail; with ``validation.unselected_sizes``)
    the same rule for the measured sizes of a fitted series that the fit did not select.
``prior_bounds`` (warn)
    no posterior presses against a bound of its prior range (:mod:`~mpiuq.calibration.reporting.bounds`:
    more than 5% of the draws within 1% of the range from it).
``warmup (<data set>)`` (warn, only for data tables with ``drop_warmup = true``)
    the first iterations of the bursts are slower than the others (one-sided sign test
    over the sizes, p < 0.05): otherwise dropping them discards clean replicas (e.g.
    synthetic ``mpiuq simulate --replicas`` data without ``--warmup-excess``).
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binom

from mpiuq.calibration.sampling.exact import ImportanceWeights

#: Pareto k-hat above which importance-sampling and LOO estimates are unreliable.
KHAT_LIMIT = 0.7
#: Largest sign-test p-value at which the first iterations of bursts count as slower.
WARMUP_P = 0.05
#: Importance weights with an ESS of at least this fraction of the draws are uniform.
UNIFORM_ESS_FRACTION = 0.99


@dataclass(frozen=True, slots=True)
class Check:
    """One check: its outcome, the measured value, the threshold and what it means."""

    name: str
    passed: bool
    severity: str
    value: float | None
    threshold: float | None
    message: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "passed": self.passed,
            "severity": self.severity,
            "value": self.value,
            "threshold": self.threshold,
            "message": self.message,
        }


def coverage_threshold(n_sizes: int, alpha: float) -> int:
    """Smallest count of data inside their 90% band that is not rejected at level ``alpha``.

    The ``alpha`` quantile of Binomial(n_sizes, 0.9).

    Examples
    --------
    >>> coverage_threshold(18, 0.01)
    13
    """
    return int(binom.ppf(alpha, n_sizes, 0.9)) if alpha > 0 else 0


def importance_check(
    name: str, weights: ImportanceWeights, max_khat: float, min_ess: float, severity: str
) -> Check:
    """The check of simulator/surrogate importance weights (see ``importance_sampling``).

    Examples
    --------
    >>> from mpiuq.calibration.sampling.exact import psis_weights
    >>> importance_check("w", psis_weights([float("nan")] * 50), 0.7, 10, "fail").passed
    False
    """
    n_prop = weights.log_weights.size
    # (almost) uniform weights: the tail fit of k-hat has no tail to fit
    uniform = weights.ess >= UNIFORM_ESS_FRACTION * n_prop
    # a NaN or infinite simulator log-likelihood is a failed run: never a weight
    ok = (
        (weights.khat <= max_khat or uniform)
        and weights.ess >= min_ess
        and weights.n_nonfinite == 0
    )
    bad = (
        f"; {weights.n_nonfinite} draws with a NaN or infinite simulator log-likelihood"
        if weights.n_nonfinite
        else ""
    )
    return Check(
        name,
        ok,
        severity,
        weights.khat,
        max_khat,
        f"simulator/surrogate importance weights: Pareto k-hat {weights.khat:.2f} "
        f"(<= {max_khat}{', or uniform weights' if uniform else ''}), ESS "
        f"{weights.ess:.0f} of {n_prop} (>= {min_ess:.0f}){bad}",
    )


def failed(checks: tuple[Check, ...], severity: str = "fail") -> tuple[Check, ...]:
    """Checks of a severity that did not pass."""
    return tuple(c for c in checks if not c.passed and c.severity == severity)
