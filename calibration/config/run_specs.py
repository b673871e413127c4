"""How a campaign runs: surrogate, samplers, refinement, posterior path, exact posterior,
discrepancy, checks and executor settings, and the whole validated :class:`Campaign`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mpiuq.calibration.config.model_specs import DataSpec, ParameterSpec, SimulatorSpec, VariantSpec
from mpiuq.calibration.config.validation_spec import ValidationSpec


@dataclass(frozen=True, slots=True)
class SurrogateSpec:
    """Sparse-grid level of the design and total order of the PCE (eq. 8).

    Attributes
    ----------
    level
        Level of the Clenshaw-Curtis sparse grid of the global design (2465 nodes in 7-D
        at level 4).
    order
        Total order of the Legendre chaos (330 terms in 7-D at order 4).
    """

    level: int = 4
    order: int = 4


@dataclass(frozen=True, slots=True)
class CalibrationSpec:
    """Settings of the grouped (eq. 9) or joint MCMC.

    Attributes
    ----------
    grouping
        ``"sobol"`` (groups from total Sobol indices) or ``"joint"``.
    sobol_threshold
        An output depends on a parameter whose total Sobol index exceeds this.
    walkers
        Walkers per emcee ensemble; by default ``max(32, 2 dim + 2)`` for the ``dim``
        parameters, discrepancy and noise terms the samplers explore
        (:func:`~mpiuq.calibration.config.dimensions.default_walkers`).
    steps
        Steps per block between convergence checks.
    burn
        Initial steps discarded from every ensemble.
    max_steps
        Cap on the steps per ensemble (including burn).
    ensembles
        Independent ensembles per group; R-hat is computed across them.
    target_rhat, target_ess
        Convergence targets (maximum rank R-hat, minimum bulk and tail ESS).
    nominal_source
        Values of the parameters outside a group (eq. 9): ``"config"`` uses the prior
        midpoints or ``[calibration.nominal]``; ``"map"`` uses the MAP of the full
        likelihood found before sampling, so that a group is not biased by far-off
        nominal values of parameters its outputs depend on only weakly.
    moves
        emcee proposal: ``"de"`` (differential evolution, ``DEMove``; the default: it
        crosses the ridges of parameters a benchmark sees only in combination) or
        ``"stretch"``.
    map_starts
        Number of best posterior samples used as starts of the MAP optimisation before
        sampling (``nominal_source = "map"``).
    predictive_draws
        Prior draws used for the prior predictive.
    """

    grouping: str = "sobol"
    sobol_threshold: float = 0.05
    walkers: int = 32
    steps: int = 500
    burn: int = 300
    max_steps: int = 20000
    ensembles: int = 4
    target_rhat: float = 1.01
    target_ess: float = 400.0
    nominal_source: str = "config"
    moves: str = "de"
    map_starts: int = 5
    predictive_draws: int = 1000


@dataclass(frozen=True, slots=True)
class RefinementSpec:
    """Local refinement of the surrogate where the posterior lies (``[refinement]``).

    Attributes
    ----------
    rounds
        At most this many local designs (0: the global surrogate is the proposal).
    level, order
        Sparse-grid level and chaos order of every local design (default: ``[surrogate]``'s).
    pad
        The local box is the posterior's 0.5-99.5% range widened by ``pad`` times its
        width on each side, within the prior.
    target_error_sd
        Refinement stops once the surrogate's RMS error at posterior draws is at most this
        many data standard deviations at every output.
    error_draws
        Posterior draws at which the simulator checks the surrogate in every round.
    max_steps, target_rhat
        Step cap and R-hat target of every round's joint MCMC (ESS target and block
        sizes are ``[calibration]``'s). The surrogate posterior is only the proposal of
        the exact stage, which corrects it; it must cover the posterior, so a looser
        R-hat than the grouped stage's is enough.
    """

    rounds: int = 2
    level: int | None = None
    order: int | None = None
    pad: float = 0.5
    target_error_sd: float = 0.25
    error_draws: int = 1000
    max_steps: int = 3000
    target_rhat: float = 1.05


#: Posterior paths a campaign may choose (``posterior.sampler``).
POSTERIOR_SAMPLERS: tuple[str, ...] = ("auto", "direct", "surrogate")


#: Largest memory of the direct sampler's stored chains, bytes.
MAX_DIRECT_CHAIN_BYTES = 2 << 30


@dataclass(frozen=True, slots=True)
class PosteriorSpec:
    """Which path computes the posterior on the simulator (``[posterior]``).

    Attributes
    ----------
    sampler
        ``"direct"``: differential-evolution MCMC on the simulator itself, to convergence
        (:mod:`~mpiuq.calibration.sampling.direct`); ``"surrogate"``: the refined surrogate's
        posterior corrected by importance weights and moves (:mod:`.exact`); ``"auto"``:
        direct when its estimated time, from the measured time of one simulator batch, is
        at most ``max_direct_seconds``.
    exchangeable
        Groups of calibrated parameters that enter the model only symmetrically (same prior
        range); sampled in one ordering, the draws symmetrised.
    walkers, populations, burn, steps, max_steps
        Direct sampler: walkers per population, independent populations, burn-in steps,
        steps between convergence checks, step cap.
    target_rhat, target_ess
        Direct sampler's convergence targets for the campaign's model (rank-normalised split
        R-hat across populations, bulk and tail ESS of every parameter).
    variant_target_ess, variant_target_rhat
        ESS and R-hat targets of the models fitted only for the PSIS-LOO comparison
        (``[[variants]]``, the model without discrepancy; their check only warns).
    max_direct_seconds
        ``"auto"`` picks the direct path when its estimated sampling time is at most this.
    """

    sampler: str = "auto"
    exchangeable: tuple[tuple[str, ...], ...] = ()
    walkers: int = 32
    populations: int = 4
    burn: int = 200
    steps: int = 250
    max_steps: int = 8000
    target_rhat: float = 1.01
    target_ess: float = 2000.0
    variant_target_ess: float = 400.0
    variant_target_rhat: float = 1.05
    max_direct_seconds: float = 600.0


@dataclass(frozen=True, slots=True)
class ExactSpec:
    """The simulator-exact posterior (``[exact]``): importance weights, then moves.

    Attributes
    ----------
    draws
        Final posterior draws (resampled from the surrogate draws by their weights).
    proposal_draws
        Surrogate posterior draws weighted by the simulator's likelihood.
    move_steps
        Differential-evolution Metropolis steps of every draw on the simulator's posterior.
    map_starts
        Starts of the multi-start MAP search on the simulator's posterior.
    """

    draws: int = 2000
    proposal_draws: int = 4000
    move_steps: int = 20
    map_starts: int = 6


@dataclass(frozen=True, slots=True)
class DiscrepancySpec:
    """Model discrepancy per protocol regime (``[discrepancy]``, :mod:`.discrepancy`).

    Attributes
    ----------
    model
        ``"none"`` or ``"regime"``.
    bias_rel
        Half-width of the uniform prior of each regime's relative bias (0: no bias term).
    sd_rel
        Upper bound of the uniform prior of each regime's relative model-error sd.
    compare
        Also calibrate the model without discrepancy and compare both by PSIS-LOO.
    per_series
        With several data tables: one term per data table and regime (True), or one per
        regime shared by every table (False: the model error of a regime is a property
        of the model, and a series left out of the fit inherits it).
    """

    model: str = "none"
    bias_rel: float = 0.0
    sd_rel: float = 0.2
    compare: bool = True
    per_series: bool = True


@dataclass(frozen=True, slots=True)
class ChecksSpec:
    """Thresholds of the checks a campaign must pass (``[checks]``, :mod:`.checks`).

    Attributes
    ----------
    max_surrogate_error_sd
        Largest RMS surrogate error at posterior draws, in data standard deviations.
    max_khat
        Largest Pareto k-hat of the importance weights (Vehtari et al. 2024: 0.7).
    min_ess
        Smallest effective sample size of the importance weights.
    max_grouped_shift_sd
        Grouped and exact posterior means may differ by this many posterior sd (warning).
    coverage_alpha
        The predictive check fails when fewer data fall inside their 90% predictive band
        than the ``coverage_alpha`` quantile of Binomial(n_sizes, 0.9).
    """

    max_surrogate_error_sd: float = 1.0
    max_khat: float = 0.7
    min_ess: float = 100.0
    max_grouped_shift_sd: float = 0.25
    coverage_alpha: float = 0.01


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """Where the design runs: in process (workers=0), local processes, or a Dask scheduler.

    Attributes
    ----------
    workers
        Local worker processes of the design run; 0 runs it in process.
    scheduler
        Address of a Dask scheduler (``"tcp://HOST:PORT"``) to run it on instead.
    """

    workers: int = 0
    scheduler: str | None = None


@dataclass(frozen=True, slots=True)
class Campaign:
    """An immutable, validated calibration campaign."""

    name: str
    seed: int
    simulator: SimulatorSpec
    parameters: ParameterSpec
    datasets: tuple[DataSpec, ...]
    surrogate: SurrogateSpec
    calibration: CalibrationSpec
    executor: ExecutorSpec
    source: Path | None = None
    refinement: RefinementSpec = field(default_factory=RefinementSpec)
    posterior: PosteriorSpec = field(default_factory=PosteriorSpec)
    exact: ExactSpec = field(default_factory=ExactSpec)
    discrepancy: DiscrepancySpec = field(default_factory=DiscrepancySpec)
    checks: ChecksSpec = field(default_factory=ChecksSpec)
    variants: tuple[VariantSpec, ...] = ()
    validation: ValidationSpec = field(default_factory=ValidationSpec)

    @property
    def fitted_tables(self) -> tuple[DataSpec, ...]:
        """The data tables the fit uses: all but those ``[validation]`` holds out whole."""
        return tuple(t for t in self.datasets if not self.validation.wholly_held_out(t.label))
