"""The checks a campaign must pass before its answer is trusted, with their thresholds.

Every check has a value, a threshold and a severity. A failed ``"fail"`` check makes
``mpiuq campaign run`` warn on stderr and exit 1, like a non-converged sampler; a failed
``"warn"`` check is printed as a warning only. Thresholds come from the campaign's
``[checks]`` table (:class:`~mpiuq.calibration.config.ChecksSpec`):

``mcmc_converged`` (fail)
    every surrogate MCMC stage met its R-hat and ESS targets.
``surrogate_error`` (fail)
    the final surrogate's RMS error at posterior draws is at most
    ``max_surrogate_error_sd`` data sd at every output (default 1.0: beyond that the
    surrogate posterior can be off by more than the data's resolution, and the
    importance weights degenerate).
``importance_sampling`` (fail)
    Pareto k-hat of the simulator/surrogate weights <= ``max_khat`` (0.7, the PSIS
    reliability limit) and their ESS >= ``min_ess``; failed without a simulator. When the
    weights are almost uniform (ESS >= 99% of the draws: the surrogate is as good as the
    simulator there) k-hat has no tail to fit and is not used.
``predictive_coverage`` (fail)
    the number of data means inside their 90% simulator-predictive band is at least the
    ``coverage_alpha`` quantile of Binomial(n_sizes, 0.9) (13 of 18 at the default 1%):
    fewer means the model misses the data beyond their noise (model-form error) and the
    parameter uncertainties are overconfident; a discrepancy model is the remedy.
``grouped_vs_exact`` (warn)
    the grouped (eq. 9) surrogate posterior's means are within ``max_grouped_shift_sd``
    posterior sd of the exact posterior's: the grouping approximation is harmless.
``loo_reliable`` (warn)
    every pointwise PSIS-LOO k-hat <= 0.7 (else the LOO comparison is indicative only).
``warmup (<data set>)`` (warn, only for data tables with ``drop_warmup = true``)
    the first iterations of the bursts are slower than the others (one-sided sign test
    over the sizes, p < 0.05): otherwise dropping them discards clean replicas (e.g.
    synthetic ``mpiuq simulate --replicas`` data without ``--warmup-excess``).
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binom

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


def failed(checks: tuple[Check, ...], severity: str = "fail") -> tuple[Check, ...]:
    """Checks of a severity that did not pass."""
    return tuple(c for c in checks if not c.passed and c.severity == severity)


def importance_ok(khat: float, ess: float, n: int, max_khat: float, min_ess: float) -> bool:
    """Whether importance weights pass the ``importance_sampling`` check.

    Pareto k-hat at most ``max_khat`` (or almost uniform weights: ESS of at least
    :data:`UNIFORM_ESS_FRACTION` of the ``n`` draws, where k-hat has no tail to fit), and
    an ESS of at least ``min_ess``.

    Examples
    --------
    >>> importance_ok(0.5, 300.0, 1000, 0.7, 100.0), importance_ok(0.9, 300.0, 1000, 0.7, 100.0)
    (True, False)
    """
    uniform = ess >= UNIFORM_ESS_FRACTION * n
    return bool((khat <= max_khat or uniform) and ess >= min_ess)
