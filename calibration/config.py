"""Campaign description: a TOML file loaded into frozen dataclasses, validated once.

The key names of the campaign file are a contract shared with users::

    name = "stampede-ib"   # names the results folder <name>/ (one plain folder name)
    seed = 1               # every random choice derives from it
    [simulator]            # benchmark = "pingpong" | "stream"; window (stream only)
    [simulator.fixed]      # simulator parameters held fixed, NAME = value
    [parameters]           # calibrated parameters, NAME = [low, high] (uniform prior, eq. 6)
    [data]                 # path, benchmark, sizes | sizes_per_protocol, observable, filters,
                           # likelihood, summary (or [[data]] tables: several data sets)
    [surrogate]            # level, order
    [calibration]          # grouping, sobol_threshold, walkers, steps, burn, targets, ...
    [calibration.nominal]  # optional nominal values of calibrated parameters
    [refinement]           # optional: local surrogate refinement around the posterior
    [posterior]            # optional: which posterior path (direct MCMC on the simulator, or
                           # surrogate + importance weights + moves), exchangeable parameters
    [exact]                # optional: the surrogate path's importance weights and moves
    [discrepancy]          # optional: per-regime model discrepancy, model comparison
    [checks]               # optional: thresholds of the honesty checks
    [executor]             # optional: workers, scheduler
    [validation]           # optional: held-out series and sizes (:mod:`.validation_spec`)

Every invalid key raises :class:`~mpiuq.calibration.errors.CampaignError` naming the
dotted key, the value and what is allowed.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpiuq.calibration.dimensions import default_walkers, discrepancy_dimension, noise_dimension
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.external_spec import ExternalSpec, parse_external
from mpiuq.calibration.limits import MAX_MESSAGE_BYTES, check_parameter_value
from mpiuq.calibration.validation_spec import ValidationSpec, parse_validation
from mpiuq.simulator.benchmark_kinds import BENCHMARKS, WINDOWED_BENCHMARKS
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS, SimParams, parameter_names
from mpiuq.simulator.regimes import (
    CONTINUOUS_SLOTS,
    PROTOCOLS,
    RDMA_PROTOCOLS,
    STREAM_PROTOCOLS,
    Regime,
    parse_slot_name,
)

OBSERVABLES: tuple[str, ...] = ("time_us", "throughput_MBps")
GROUPINGS: tuple[str, ...] = ("sobol", "joint")
NOMINAL_SOURCES: tuple[str, ...] = ("config", "map")

#: Longest campaign name (it names the results folder).
MAX_NAME_CHARS = 100
#: Smallest non-zero ``data.sd_floor_rel``: a relative spread of 1e-300 squares to a
#: variance of 0 (18 observations of the issue's reproducer), a likelihood of infinite
#: weight; a millionth of the value is already far below any timer's resolution.
MIN_SD_FLOOR_REL = 1e-6
#: Most sizes per protocol regime (``data.sizes_per_protocol``).
MAX_SIZES_PER_PROTOCOL = 1000
#: Longest burst of back-to-back iterations (``data.burst_length``; runs go up to 10^9).
MAX_BURST_LENGTH = 10**9
#: Most starts of the MAP optimisation (``calibration.map_starts``).
MAX_MAP_STARTS = 100
#: Largest campaign or parameter file read, bytes (a campaign file is a few kB).
MAX_TOML_BYTES = 1 << 20

_TOP_KEYS = (
    "name",
    "seed",
    "simulator",
    "parameters",
    "data",
    "surrogate",
    "calibration",
    "refinement",
    "posterior",
    "exact",
    "discrepancy",
    "checks",
    "executor",
    "variants",
    "validation",
)


@dataclass(frozen=True, slots=True)
class SimulatorSpec:
    """Which benchmark the simulator runs and which parameters it holds fixed.

    Attributes
    ----------
    benchmark
        ``"pingpong"`` or ``"stream"``.
    window
        Messages in flight of the streaming benchmark (ignored for ping-pong).
    fixed
        ``(name, value)`` pairs of fixed simulator parameters, in file order.
    regimes
        The protocol regimes of ``[[simulator.regimes]]`` (empty: the default table of
        ``small_max_bytes`` and ``eager_max_bytes``); a calibrated per-regime value holds
        its prior midpoint here.
    regime_priors
        ``(name, low, high)`` of the calibrated per-regime parameters
        (``regime<k>_<field>``), in file order.
    external
        A user's simulator (``callable`` or ``command``) instead of mpiuq's own
        (:mod:`~mpiuq.calibration.external_spec`); ``benchmark`` is then ``"external"``.
    """

    benchmark: str = "pingpong"
    window: int = 64
    fixed: tuple[tuple[str, float | int], ...] = ()
    regimes: tuple[Regime, ...] = ()
    regime_priors: tuple[tuple[str, float, float], ...] = ()
    external: ExternalSpec | None = None

    def base_params(self) -> SimParams:
        """Simulator parameters with the fixed values and the regimes applied on the defaults."""
        values: dict[str, Any] = dict(self.fixed)
        if self.regimes:
            values["regimes"] = self.regimes
        return SimParams.from_mapping(values)

    def thresholds(self) -> tuple[int, ...]:
        """Largest message size of every regime but the last, ascending."""
        if self.external is not None:
            return self.external.regime_max_bytes
        return self.base_params().thresholds()

    def regime_of(self, size_bytes: int) -> str:
        """Name of the regime (protocol, or external regime) of a message size."""
        if self.external is not None:
            return self.external.regime_of(size_bytes)
        return self.base_params().protocol_of(size_bytes)


@dataclass(frozen=True, slots=True)
class ParameterSpec:
    """Calibrated parameters with their uniform prior ranges (eq. 6) and nominal values.

    Attributes
    ----------
    names
        Canonical simulator names, in file order.
    lower, upper
        Prior bounds, in the parameters' own units (see ``UNITS``).
    nominal
        Value used for a parameter outside the group being sampled (eq. 9);
        the prior midpoint unless configured in ``[calibration.nominal]``.
    """

    names: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    nominal: tuple[float, ...]

    @property
    def dim(self) -> int:
        """Number of calibrated parameters."""
        return len(self.names)


@dataclass(frozen=True, slots=True)
class DataSpec:
    """Where the measurements are and how replicas are reduced (eq. 7).

    Attributes
    ----------
    path
        Path of the CSV (``run,msg_size_bytes,value,unit,benchmark``): relative to the
        campaign file in the file, absolute once loaded.
    benchmark
        Benchmark label selected in the CSV, e.g. ``"pingpong_half_rtt"``.
    sizes
        Explicit message sizes in bytes, or None when ``sizes_per_protocol`` is used.
    sizes_per_protocol
        Number of log-spaced sizes per protocol regime, or None.
    observable
        ``"time_us"`` or ``"throughput_MBps"`` (MB/s = bytes / us).
    drop_warmup
        Drop the first iteration of every burst (``run % burst_length == 0``).
    aggregate_bursts
        Replace every burst of ``burst_length`` consecutive runs by its mean.
    burst_length
        Iterations per burst (10 for the SimGrid calibration data).
    sd_floor_rel
        Floor of the replica standard deviation, relative to the mean; 0 = no floor.
    min_size_bytes, max_size_bytes
        Range of sizes considered by ``sizes_per_protocol`` (inclusive).
    label
        Name of the data set in output names and reports (unique within a campaign).
    model
        Simulator benchmark that produces the observable (one of
        :data:`~mpiuq.simulator.benchmark_kinds.BENCHMARKS`).
    window
        Messages per window of the ``stream`` benchmark.
    likelihood
        Error model of the per-size summaries: ``"gaussian"``, ``"student_t"`` or
        ``"lognormal"`` (:mod:`~mpiuq.calibration.noise`).
    summary
        Replica summary: ``"mean"`` (sd with ddof=1), ``"median"`` (sd = 1.4826 MAD) or
        ``"trimmed_mean"`` (winsorized sd / (1 - 2 trim)).
    trim
        Fraction trimmed from each end by ``"trimmed_mean"``.
    nu
        Uniform prior ``(low, high)`` of the Student-t degrees of freedom.
    """

    path: Path
    benchmark: str
    sizes: tuple[int, ...] | None = None
    sizes_per_protocol: int | None = None
    observable: str = "time_us"
    drop_warmup: bool = False
    aggregate_bursts: bool = False
    burst_length: int = 10
    sd_floor_rel: float = 0.0
    min_size_bytes: int = 1
    max_size_bytes: int = 2**62
    label: str = "data"
    model: str = "pingpong"
    window: int = 64
    likelihood: str = "gaussian"
    summary: str = "mean"
    trim: float = 0.2
    nu: tuple[float, float] = (1.0, 30.0)


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
        (:func:`~mpiuq.calibration.dimensions.default_walkers`).
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
        (:mod:`~mpiuq.calibration.direct`); ``"surrogate"``: the refined surrogate's
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


@dataclass(frozen=True, slots=True)
class VariantSpec:
    """A model variant compared with the campaign's model by PSIS-LOO (``[[variants]]``).

    The variant is the campaign with some fixed simulator values changed (a discrete
    parameter such as a protocol threshold ``regime1_max_bytes``, a whole different value
    of a fixed parameter); it is calibrated on the same data (same sizes) and scored on
    the same pointwise log-likelihood.

    Attributes
    ----------
    name
        Label of the variant in the comparison.
    fixed
        ``(name, value)`` simulator values that differ from the campaign's.
    """

    name: str
    fixed: tuple[tuple[str, float | int | str], ...]

    def simulator(self, base: SimulatorSpec) -> SimulatorSpec:
        """The campaign's simulator with this variant's values."""
        from dataclasses import replace

        params = SimParams.from_mapping(dict(self.fixed), base=base.base_params())
        scalars = set(parameter_names())
        fixed = dict(base.fixed) | {
            k: v for k, v in self.fixed if k in scalars and not isinstance(v, str)
        }
        if params.regimes:
            fixed = {
                k: v for k, v in fixed.items() if k not in ("small_max_bytes", "eager_max_bytes")
            }
        return replace(base, fixed=tuple(fixed.items()), regimes=params.regimes)


def load_campaign(path: str | Path) -> Campaign:
    """Read and validate a campaign TOML file.

    Relative data paths are resolved against the campaign file's folder.

    Raises
    ------
    CampaignError
        For any missing, unknown or invalid key (names the key, value and what is allowed).
    OSError
        If the file cannot be read.
    """
    p = Path(path)
    raw = read_toml(p)
    return parse_campaign(raw, base_dir=p.resolve().parent, source=p.resolve())


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; the one reader of campaign and parameter files.

    Raises
    ------
    CampaignError
        If the file is not UTF-8 text or not valid TOML (names the file).
    OSError
        If the file cannot be read.
    """
    size = path.stat().st_size
    if size > MAX_TOML_BYTES:
        raise CampaignError(
            "(file)", str(path), f"a TOML file of at most {MAX_TOML_BYTES} bytes, not {size}"
        )
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise CampaignError(
            "(file)", str(path), "TOML nested less deeply (arrays or tables too deep)"
        ) from None
    except UnicodeDecodeError as exc:
        raise CampaignError(
            "(file)", str(path), f"UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError("(file)", str(path), f"valid TOML ({exc})") from None


@dataclass(frozen=True, slots=True)
class ParameterFile:
    """Simulator settings from a parameter file (``mpiuq simulate --config``).

    Attributes
    ----------
    values
        ``(name, value)`` of simulator parameters, in the file's order.
    benchmark, window
        Benchmark settings of a campaign's ``[simulator]`` table, else None.
    """

    values: tuple[tuple[str, float | int], ...]
    benchmark: str | None = None
    window: int | None = None


def load_parameter_file(path: str | Path) -> ParameterFile:
    """Read simulator settings from a campaign file or a flat parameter table.

    A file with a ``[simulator]`` table is read as a campaign file: its
    ``benchmark``, ``window`` and ``[simulator.fixed]`` values, validated exactly as
    :func:`load_campaign` does (the calibrated ranges and other tables are not read).
    Any other file must be a flat table of ``NAME = VALUE`` simulator parameters.

    Raises
    ------
    CampaignError
        For invalid TOML, unknown names or invalid values (names the key).
    OSError
        If the file cannot be read.
    """
    raw = read_toml(Path(path))
    if "simulator" in raw:
        spec = _parse_simulator(_table(raw, "simulator", required=True))
        if spec.external is not None:
            key = "callable" if spec.external.callable is not None else "command"
            raise CampaignError(
                f"simulator.{key}",
                spec.external.target,
                "a campaign of mpiuq's own simulator (an external simulator's campaign file "
                "holds no mpiuq simulator settings to run)",
            )
        if spec.regime_priors:
            name = spec.regime_priors[0][0]
            raise CampaignError(
                _regime_key(name),
                [spec.regime_priors[0][1], spec.regime_priors[0][2]],
                f"a fixed value to simulate (a range is calibrated: pass --param {name}=VALUE "
                "or replay a campaign's results with --params)",
            )
        settings = spec.fixed
        if spec.regimes:
            from mpiuq.simulator.regimes import flatten

            table = tuple((k, v) for k, v in flatten(spec.regimes).items() if math.isfinite(v))
            settings = tuple(
                kv for kv in spec.fixed if kv[0] not in ("small_max_bytes", "eager_max_bytes")
            )
            settings += table
        return ParameterFile(settings, spec.benchmark, spec.window)
    known = parameter_names()
    values: list[tuple[str, float | int]] = []
    for key, value in raw.items():
        if key not in known:
            raise CampaignError(
                key,
                value,
                f"a simulator parameter, one of {list(known)} (or a campaign file "
                "with a [simulator] table)",
            )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CampaignError(key, value, "a number")
        _check_magnitude(key, key, value)
        values.append((key, value))
    try:
        SimParams.from_mapping(dict(values))
    except ParameterError as exc:
        raise CampaignError(exc.name, exc.value, exc.allowed) from exc
    return ParameterFile(tuple(values))


def parse_campaign(raw: Mapping[str, Any], base_dir: Path, source: Path | None = None) -> Campaign:
    """Validate a campaign given as the parsed TOML mapping.

    Parameters
    ----------
    raw
        The mapping produced by :func:`tomllib.loads`.
    base_dir
        Folder against which a relative ``data.path`` is resolved.
    source
        Path of the campaign file, recorded in the result.
    """
    _check_keys("", raw, _TOP_KEYS)
    name = _parse_name(_require(raw, "name", ""))
    seed = _int(raw, "seed", "", minimum=0, maximum=2**63 - 1)
    simulator = _parse_simulator(_table(raw, "simulator", required=True), base_dir)
    parameters = _parse_parameters(
        _table(raw, "parameters", required=True),
        _table(_table(raw, "calibration"), "nominal", prefix="calibration."),
        simulator,
    )
    data = _parse_datasets(raw, base_dir, simulator)
    surrogate = _parse_surrogate(_table(raw, "surrogate"))
    calibration = _parse_calibration(_table(raw, "calibration"), parameters)
    executor = _parse_executor(_table(raw, "executor"))
    campaign = Campaign(
        name,
        seed,
        simulator,
        parameters,
        data,
        surrogate,
        calibration,
        executor,
        source,
        refinement=_parse_refinement(
            _table(raw, "refinement"), calibration.burn + calibration.steps
        ),
        posterior=_parse_posterior(_table(raw, "posterior"), parameters),
        exact=_parse_exact(_table(raw, "exact")),
        discrepancy=_parse_discrepancy(_table(raw, "discrepancy")),
        checks=_parse_checks(_table(raw, "checks")),
        variants=_parse_variants(raw.get("variants", []), simulator, parameters),
        validation=parse_validation(_table(raw, "validation"), tuple(spec.label for spec in data))
        if "validation" in raw
        else ValidationSpec(),
    )
    from dataclasses import replace

    if "walkers" not in _table(raw, "calibration"):
        campaign = replace(
            campaign, calibration=replace(calibration, walkers=_default_walkers(campaign))
        )
    if "walkers" not in _table(raw, "posterior"):  # the direct sampler's populations too
        campaign = replace(
            campaign,
            posterior=replace(campaign.posterior, walkers=_default_walkers(campaign)),
        )
    elif campaign.posterior.walkers < 2 * parameters.dim:
        raise CampaignError(
            "posterior.walkers",
            campaign.posterior.walkers,
            f"an even number >= {2 * parameters.dim} (2 per calibrated parameter; "
            "omit it for a default that counts the discrepancy and noise terms too)",
        )
    if campaign.variants and campaign.refinement.rounds == 0:
        raise CampaignError(
            "refinement.rounds",
            0,
            ">= 1 with [[variants]] (each variant's surrogate is a local design of its model)",
        )
    if simulator.external is not None and campaign.posterior.exchangeable:
        raise CampaignError(
            "posterior.exchangeable",
            [list(g) for g in campaign.posterior.exchangeable],
            "no groups with an external simulator (their check would spend simulator runs)",
        )
    return campaign


def discrepancy_terms(campaign: Campaign) -> int:
    """Most discrepancy parameters the campaign samples (a bias and/or a spread per regime,
    per data table when there are several: :func:`~mpiuq.calibration.dimensions.discrepancy_dimension`).
    """
    d = campaign.discrepancy
    sim = campaign.simulator
    if sim.external is not None:  # its regimes are named size ranges, not protocols
        if d.model == "none":
            return 0
        n_regimes = 0
        for t in campaign.fitted_tables:
            if t.sizes is None:
                n_regimes += len(sim.external.regime_names)
            else:
                n_regimes += len({sim.regime_of(s) for s in t.sizes})
        return n_regimes * (int(d.bias_rel > 0) + int(d.sd_rel > 0))
    return discrepancy_dimension(
        [(t.sizes, t.min_size_bytes, t.max_size_bytes) for t in campaign.fitted_tables],
        campaign.simulator.base_params(),
        d.model,
        d.bias_rel,
        d.sd_rel,
        d.per_series,
    )


def _default_walkers(campaign: Campaign) -> int:
    """Walkers for every parameter the samplers explore (:mod:`.dimensions`)."""

    dim = (
        campaign.parameters.dim
        + discrepancy_terms(campaign)
        + noise_dimension([t.likelihood for t in campaign.fitted_tables])
    )
    return default_walkers(dim)


# --- sections --------------------------------------------------------------------------------


def _parse_name(name: object) -> str:
    """The campaign name names the folder ``results/<name>``: one plain path component."""
    if (
        not isinstance(name, str)
        or not 0 < len(name) <= MAX_NAME_CHARS
        or name in (".", "..")
        or any(c in name for c in "/\\")
        or any(c.isspace() or not c.isprintable() for c in name)
    ):
        raise CampaignError(
            "name",
            name,
            f"a folder name of 1 to {MAX_NAME_CHARS} printable characters without '/', '\\', "
            "spaces, and not '.' or '..'",
        )
    return name


def _parse_simulator(t: Mapping[str, Any], base_dir: Path | None = None) -> SimulatorSpec:
    from dataclasses import replace

    if "callable" in t or "command" in t:
        external = parse_external(t, base_dir if base_dir is not None else Path("."))
        return SimulatorSpec(benchmark="external", external=external)
    spec = _parse_simulator_scalars({k: v for k, v in t.items() if k != "regimes"})
    if "regimes" not in t:
        return spec
    regimes, priors = _parse_regimes(t["regimes"])
    for name in ("small_max_bytes", "eager_max_bytes"):
        if name in dict(spec.fixed):
            raise CampaignError(
                f"simulator.fixed.{name}",
                dict(spec.fixed)[name],
                "no value with [[simulator.regimes]] (their max_bytes are the thresholds)",
            )
    spec = replace(spec, regimes=regimes, regime_priors=priors)
    try:
        spec.base_params()
    except ParameterError as exc:
        raise CampaignError(_regime_key(exc.name), exc.value, exc.allowed) from exc
    return spec


#: Keys of a ``[[simulator.regimes]]`` table.
_REGIME_KEYS = (
    "name",
    "protocol",
    "max_bytes",
    "segment_bytes",
    "fragment_bytes",
    *CONTINUOUS_SLOTS,
)


def _regime_key(name: str) -> str:
    """``regime<k>_<field>`` -> ``simulator.regimes[k].<field>`` (other names unchanged)."""
    parsed = parse_slot_name(name)
    if parsed is None:
        return f"simulator.{name}" if name == "regimes" else f"simulator.fixed.{name}"
    return f"simulator.regimes[{parsed[0]}].{parsed[1]}"


def _parse_regimes(
    raw: object,
) -> tuple[tuple[Regime, ...], tuple[tuple[str, float, float], ...]]:
    """``[[simulator.regimes]]``: the regime table and the priors of its calibrated values.

    A per-regime value is fixed (a number) or calibrated (``[low, high]``, a uniform prior;
    the parameter is named ``regime<k>_<field>``). Stream protocols need ``segment_us``.
    """
    if not isinstance(raw, list) or not raw or not all(isinstance(x, dict) for x in raw):
        raise CampaignError(
            "simulator.regimes", raw, "one or more [[simulator.regimes]] tables, ordered by size"
        )
    regimes: list[Regime] = []
    priors: list[tuple[str, float, float]] = []
    for k, t in enumerate(raw):
        p = f"simulator.regimes[{k}]."
        _check_keys(p, t, _REGIME_KEYS)
        protocol = _require(t, "protocol", p)
        if protocol not in PROTOCOLS:
            raise CampaignError(f"{p}protocol", protocol, f"one of {list(PROTOCOLS)}")
        last = k == len(raw) - 1
        if last and "max_bytes" in t:
            raise CampaignError(
                f"{p}max_bytes", t["max_bytes"], "no value: the last regime takes every larger size"
            )
        if not last and "max_bytes" not in t:
            raise CampaignError(
                f"{p}max_bytes", "(missing)", "the regime's largest message size in bytes"
            )
        if protocol in STREAM_PROTOCOLS and "segment_us" not in t:
            raise CampaignError(
                f"{p}segment_us",
                "(missing)",
                f"a number (fixed) or [low, high] (calibrated): the {protocol} protocol's host "
                "cost per segment, which no global parameter provides",
            )
        values: dict[str, Any] = {"protocol": protocol}
        for key in ("name", "max_bytes", "segment_bytes", "fragment_bytes"):
            if key in t:
                values[key] = t[key]
        if "name" in t and (not isinstance(t["name"], str) or not t["name"]):
            raise CampaignError(f"{p}name", t["name"], "a non-empty string")
        for key in CONTINUOUS_SLOTS:
            if key not in t:
                continue
            v = t[key]
            if isinstance(v, list):
                if len(v) != 2 or not all(_is_number(x) for x in v) or not 0 <= v[0] < v[1]:
                    raise CampaignError(f"{p}{key}", v, "[low, high] with 0 <= low < high")
                priors.append((f"regime{k}_{key}", float(v[0]), float(v[1])))
                values[key] = (float(v[0]) + float(v[1])) / 2.0
            elif _is_number(v):
                values[key] = float(v)
            else:
                raise CampaignError(f"{p}{key}", v, "a number (fixed) or [low, high] (calibrated)")
        regimes.append(Regime(**values))
    return tuple(regimes), tuple(priors)


def _parse_simulator_scalars(t: Mapping[str, Any]) -> SimulatorSpec:
    _check_keys("simulator.", t, ("benchmark", "window", "fixed", "regimes"))
    benchmark = t.get("benchmark", "pingpong")
    if benchmark not in BENCHMARKS:
        raise CampaignError("simulator.benchmark", benchmark, f"one of {list(BENCHMARKS)}")
    window = _int(t, "window", "simulator.", minimum=1, default=64)
    fixed_t = _table(t, "fixed", prefix="simulator.")
    known = parameter_names()
    fixed: list[tuple[str, float | int]] = []
    for key, value in fixed_t.items():
        if key not in known:
            raise CampaignError(
                f"simulator.fixed.{key}", value, f"a simulator parameter, one of {list(known)}"
            )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CampaignError(f"simulator.fixed.{key}", value, "a number")
        _check_magnitude(f"simulator.fixed.{key}", key, value)
        fixed.append((key, value))
    spec = SimulatorSpec(benchmark, window, tuple(fixed))
    try:
        spec.base_params()
    except ParameterError as exc:
        raise CampaignError(f"simulator.fixed.{exc.name}", exc.value, exc.allowed) from exc
    return spec


def _parse_parameters(
    t: Mapping[str, Any], nominal_t: Mapping[str, Any], simulator: SimulatorSpec
) -> ParameterSpec:
    if not t:
        raise CampaignError("parameters", dict(t), "at least one NAME = [low, high] entry")
    if simulator.external is not None:
        return _parse_external_parameters(t, nominal_t)
    fixed_names = {n for n, _ in simulator.fixed}
    names, lower, upper = [], [], []
    for key, value in t.items():
        full = f"parameters.{key}"
        if key not in CONTINUOUS_PARAMETERS:
            raise CampaignError(
                full,
                value,
                f"a continuous simulator parameter, one of {list(CONTINUOUS_PARAMETERS)}",
            )
        if key in fixed_names:
            raise CampaignError(full, value, "a parameter not also listed in [simulator.fixed]")
        if not isinstance(value, list) or len(value) != 2 or not all(_is_number(v) for v in value):
            raise CampaignError(full, value, "[low, high] with two numbers")
        lo, hi = float(value[0]), float(value[1])
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0.0 or hi <= lo:
            raise CampaignError(full, value, "finite bounds with 0 < low < high")
        _check_magnitude(full, key, lo)
        _check_magnitude(full, key, hi)
        names.append(key)
        lower.append(lo)
        upper.append(hi)
    _check_parameters_used(names, simulator)
    for name, lo, hi in simulator.regime_priors:
        names.append(name)
        lower.append(lo)
        upper.append(hi)
    return _with_nominal(names, lower, upper, nominal_t)


def _parse_external_parameters(t: Mapping[str, Any], nominal_t: Mapping[str, Any]) -> ParameterSpec:
    """Parameters of an external simulator: any names (identifiers), finite bounds."""
    names, lower, upper = [], [], []
    for key, value in t.items():
        full = f"parameters.{key}"
        if not key.isidentifier():
            raise CampaignError(full, value, "a parameter name of letters, digits and '_'")
        if not isinstance(value, list) or len(value) != 2 or not all(_is_number(v) for v in value):
            raise CampaignError(full, value, "[low, high] with two finite numbers")
        lo, hi = float(value[0]), float(value[1])
        if not hi > lo or max(abs(lo), abs(hi)) > 1e300:
            raise CampaignError(full, value, "finite bounds with low < high")
        names.append(key)
        lower.append(lo)
        upper.append(hi)
    return _with_nominal(names, lower, upper, nominal_t)


def _with_nominal(
    names: list[str], lower: list[float], upper: list[float], nominal_t: Mapping[str, Any]
) -> ParameterSpec:
    """The parameters with their nominal values: prior midpoints or ``[calibration.nominal]``."""
    nominal = [(lo + hi) / 2.0 for lo, hi in zip(lower, upper, strict=True)]
    for key, value in nominal_t.items():
        full = f"calibration.nominal.{key}"
        if key not in names:
            raise CampaignError(full, value, f"a calibrated parameter, one of {names}")
        i = names.index(key)
        if not _is_number(value) or not lower[i] <= float(value) <= upper[i]:
            raise CampaignError(full, value, f"a number within the prior [{lower[i]}, {upper[i]}]")
        nominal[i] = float(value)
    return ParameterSpec(tuple(names), tuple(lower), tuple(upper), tuple(nominal))


def _check_parameters_used(names: list[str], simulator: SimulatorSpec) -> None:
    """A calibrated RDMA parameter needs a regime that pins or gets (else it has no effect)."""
    protocols = {r.protocol for r in simulator.base_params().regime_table()}
    rdma = ("post_rdma_delay_us", "rdma_pin_latency_us", "rdma_pin_per_page_ns")
    if protocols & set(RDMA_PROTOCOLS):
        return
    for name in names:
        if name in rdma:
            raise CampaignError(
                f"parameters.{name}",
                name,
                "a parameter some regime uses: no regime of [[simulator.regimes]] uses "
                f"{' or '.join(RDMA_PROTOCOLS)} (remove it or fix it)",
            )


def _parse_data(t: Mapping[str, Any], base_dir: Path) -> DataSpec:
    _check_keys(
        "data.",
        t,
        (
            "path",
            "benchmark",
            "sizes",
            "sizes_per_protocol",
            "observable",
            "drop_warmup",
            "aggregate_bursts",
            "burst_length",
            "sd_floor_rel",
            "min_size_bytes",
            "max_size_bytes",
        ),
    )
    path = _require(t, "path", "data.")
    if not isinstance(path, str) or not path:
        raise CampaignError("data.path", path, "a path string relative to the campaign file")
    resolved = (base_dir / path).resolve()
    benchmark = _require(t, "benchmark", "data.")
    if not isinstance(benchmark, str) or not benchmark:
        raise CampaignError("data.benchmark", benchmark, "the CSV's benchmark label (a string)")
    sizes: tuple[int, ...] | None = None
    per_protocol: int | None = None
    if ("sizes" in t) == ("sizes_per_protocol" in t):
        raise CampaignError(
            "data.sizes",
            t.get("sizes", "(missing)"),
            "exactly one of data.sizes or data.sizes_per_protocol",
        )
    if "sizes" in t:
        raw_sizes = t["sizes"]
        if (
            not isinstance(raw_sizes, list)
            or not raw_sizes
            or not all(
                isinstance(s, int) and not isinstance(s, bool) and 0 < s <= MAX_MESSAGE_BYTES
                for s in raw_sizes
            )
        ):
            raise CampaignError(
                "data.sizes",
                raw_sizes,
                f"a non-empty list of positive integers (bytes) up to {MAX_MESSAGE_BYTES}",
            )
        if len(set(raw_sizes)) != len(raw_sizes):
            raise CampaignError("data.sizes", raw_sizes, "distinct sizes")
        sizes = tuple(sorted(raw_sizes))
    else:
        per_protocol = _int(
            t, "sizes_per_protocol", "data.", minimum=1, maximum=MAX_SIZES_PER_PROTOCOL
        )
    observable = t.get("observable", "time_us")
    if observable not in OBSERVABLES:
        raise CampaignError("data.observable", observable, f"one of {list(OBSERVABLES)}")
    drop_warmup = _bool(t, "drop_warmup", "data.", False)
    aggregate = _bool(t, "aggregate_bursts", "data.", False)
    burst = _int(t, "burst_length", "data.", minimum=1, default=10, maximum=MAX_BURST_LENGTH)
    floor = _float(t, "sd_floor_rel", "data.", 0.0, lo=0.0, hi=1.0)
    if 0.0 < floor < MIN_SD_FLOOR_REL:  # its square underflows: a variance of exactly 0
        raise CampaignError(
            "data.sd_floor_rel", floor, f"0 (no floor) or a number in [{MIN_SD_FLOOR_REL:g}, 1]"
        )
    min_size = _int(t, "min_size_bytes", "data.", minimum=1, default=1, maximum=2**62)
    max_size = _int(t, "max_size_bytes", "data.", minimum=1, default=2**62, maximum=2**62)
    if max_size < min_size:
        raise CampaignError("data.max_size_bytes", max_size, f">= data.min_size_bytes={min_size}")
    return DataSpec(
        resolved,
        benchmark,
        sizes,
        per_protocol,
        observable,
        drop_warmup,
        aggregate,
        burst,
        floor,
        min_size,
        max_size,
    )


#: Simulator benchmark of the benchmark labels of ``../shared/data/benchmarks`` (and of
#: ``mpiuq simulate --csv``): the ``model`` of a data table with that label. A label not
#: listed needs an explicit ``model`` (never a silent default).
SERIES_MODELS: dict[str, str] = {
    "pingpong_half_rtt": "pingpong",
    "pingpong_half_rtt_mean": "pingpong",
    "osu_latency": "pingpong",
    "imb_pingpong": "pingpong",
    "stream_bw": "stream",
    "osu_bw": "stream",
    "stream_bibw": "bidirectional_stream",
    "osu_bibw": "bidirectional_stream",
    "pingpong_send": "pingpong_send",
    "pingpong_send_mean": "pingpong_send",
    "isend": "isend",
    "isend_mean": "isend",
    "recv_arrived": "recv_arrived",
    "recv_arrived_mean": "recv_arrived",
}
#: Likelihoods of a data table (:mod:`~mpiuq.calibration.noise`).
LIKELIHOODS: tuple[str, ...] = ("gaussian", "student_t", "lognormal")
#: Replica summaries of a data table (:mod:`~mpiuq.calibration.observations`).
SUMMARIES: tuple[str, ...] = ("mean", "median", "trimmed_mean")
#: Keys of a data table that :func:`_parse_data_model` reads (the others: :func:`_parse_data`).
_DATA_MODEL_KEYS = ("label", "model", "window", "likelihood", "summary", "trim", "nu")


def _parse_datasets(
    raw: Mapping[str, Any], base_dir: Path, simulator: SimulatorSpec
) -> tuple[DataSpec, ...]:
    """One ``[data]`` table or several ``[[data]]`` tables (keys ``data[k].*``)."""
    t = _require(raw, "data", "")
    if isinstance(t, dict):
        tables: list[tuple[str, Mapping[str, Any]]] = [("data.", t)]
    elif isinstance(t, list) and t and all(isinstance(x, dict) for x in t):
        tables = [(f"data[{k}].", x) for k, x in enumerate(t)]
    else:
        raise CampaignError("data", t, "a [data] table or one or more [[data]] tables")
    specs: list[DataSpec] = []
    if simulator.external is not None:
        from mpiuq.calibration.external_spec import external_tables

        tables = external_tables(tables, simulator.external)
    for prefix, table in tables:
        core = {k: v for k, v in table.items() if k not in _DATA_MODEL_KEYS}
        try:
            spec = _parse_data(core, base_dir)
        except CampaignError as exc:
            raise CampaignError(
                prefix + exc.key.removeprefix("data."), exc.value, exc.allowed
            ) from None
        specs.append(_parse_data_model(table, prefix, simulator, spec))
    labels = [s.label for s in specs]
    for k, label in enumerate(labels):
        if label in labels[:k]:
            raise CampaignError(
                f"data[{k}].label", label, f"a label not used by another data table ({labels[:k]})"
            )
    return tuple(specs)


def _parse_data_model(
    t: Mapping[str, Any], prefix: str, simulator: SimulatorSpec, spec: DataSpec
) -> DataSpec:
    """The keys of a data table that say which simulator benchmark explains it, and how."""
    from dataclasses import replace

    label = t.get("label", spec.benchmark)
    if not isinstance(label, str) or not label or any(c in label for c in ":@ /\\"):
        raise CampaignError(
            f"{prefix}label", label, "a non-empty name without ':', '@', spaces or slashes"
        )
    if simulator.external is not None:
        model = t.get("model", "external")
        if model != "external":
            raise CampaignError(
                f"{prefix}model",
                model,
                "no value: the external simulator [simulator] explains the data",
            )
    elif "model" not in t and spec.benchmark not in SERIES_MODELS:
        raise CampaignError(
            f"{prefix}benchmark",
            spec.benchmark,
            f"a known benchmark label, one of {sorted(SERIES_MODELS)}, or {prefix}model "
            f"naming the simulator benchmark that explains it ({list(BENCHMARKS)})",
        )
    else:
        model = t.get("model", SERIES_MODELS.get(spec.benchmark))
    if model not in BENCHMARKS and model != "external":
        raise CampaignError(
            f"{prefix}model", model, f"a simulator benchmark, one of {list(BENCHMARKS)}"
        )
    window = _int(t, "window", prefix, minimum=1, default=simulator.window)
    likelihood = t.get("likelihood", "gaussian")
    if likelihood not in LIKELIHOODS:
        raise CampaignError(f"{prefix}likelihood", likelihood, f"one of {list(LIKELIHOODS)}")
    summary = t.get("summary", "mean")
    if summary not in SUMMARIES:
        raise CampaignError(f"{prefix}summary", summary, f"one of {list(SUMMARIES)}")
    trim = _float(t, "trim", prefix, 0.2, lo=0.0, hi=0.45)
    nu_raw = t.get("nu", [1.0, 30.0])
    if (
        not isinstance(nu_raw, list)
        or len(nu_raw) != 2
        or not all(_is_number(v) for v in nu_raw)
        or not 0.5 <= float(nu_raw[0]) < float(nu_raw[1]) <= 1000.0
    ):
        raise CampaignError(
            f"{prefix}nu", nu_raw, "[low, high] degrees of freedom with 0.5 <= low < high <= 1000"
        )
    if "nu" in t and likelihood != "student_t":
        raise CampaignError(f"{prefix}nu", nu_raw, "no value unless likelihood = 'student_t'")
    if "window" in t and model not in WINDOWED_BENCHMARKS:
        raise CampaignError(
            f"{prefix}window",
            t["window"],
            f"no value unless model is one of {list(WINDOWED_BENCHMARKS)}",
        )
    return replace(
        spec,
        label=label,
        model=model,
        window=window,
        likelihood=likelihood,
        summary=summary,
        trim=trim,
        nu=(float(nu_raw[0]), float(nu_raw[1])),
    )


def _parse_variants(
    raw: object, simulator: SimulatorSpec, parameters: ParameterSpec
) -> tuple[VariantSpec, ...]:
    """``[[variants]]``: ``name`` and a ``fixed`` table of changed simulator values."""
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise CampaignError("variants", raw, "[[variants]] tables with name and fixed")
    if raw and simulator.external is not None:
        raise CampaignError(
            "variants",
            raw,
            "no [[variants]] with an external simulator (they change mpiuq simulator "
            "values; compare your model variants as separate campaigns)",
        )
    out: list[VariantSpec] = []
    reserved = ["discrepancy", "no discrepancy"]
    for k, t in enumerate(raw):
        p = f"variants[{k}]."
        _check_keys(p, t, ("name", "fixed"))
        name = _require(t, "name", p)
        taken = reserved + [v.name for v in out]
        if not isinstance(name, str) or not name or name in taken:
            raise CampaignError(f"{p}name", name, f"a non-empty name other than {taken}")
        fixed_t = _table(t, "fixed", prefix=p, required=True)
        if not fixed_t:
            raise CampaignError(f"{p}fixed", dict(fixed_t), "at least one NAME = value")
        for key, value in fixed_t.items():
            if key in parameters.names:
                raise CampaignError(
                    f"{p}fixed.{key}", value, "a fixed simulator value, not a calibrated parameter"
                )
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise CampaignError(f"{p}fixed.{key}", value, "a number (or a protocol name)")
        spec = VariantSpec(name, tuple(fixed_t.items()))
        try:
            spec.simulator(simulator).base_params()
        except ParameterError as exc:
            raise CampaignError(f"{p}fixed.{exc.name}", exc.value, exc.allowed) from exc
        out.append(spec)
    return tuple(out)


def _parse_surrogate(t: Mapping[str, Any]) -> SurrogateSpec:
    _check_keys("surrogate.", t, ("level", "order"))
    return SurrogateSpec(
        level=_int(t, "level", "surrogate.", minimum=1, default=4, maximum=8),
        order=_int(t, "order", "surrogate.", minimum=1, default=4, maximum=10),
    )


def _parse_calibration(t: Mapping[str, Any], parameters: ParameterSpec) -> CalibrationSpec:
    keys = (
        "grouping",
        "sobol_threshold",
        "walkers",
        "steps",
        "burn",
        "max_steps",
        "ensembles",
        "target_rhat",
        "target_ess",
        "nominal_source",
        "moves",
        "map_starts",
        "predictive_draws",
        "nominal",
    )
    _check_keys("calibration.", t, keys)
    d = CalibrationSpec()
    grouping = t.get("grouping", d.grouping)
    if grouping not in GROUPINGS:
        raise CampaignError("calibration.grouping", grouping, f"one of {list(GROUPINGS)}")
    p = "calibration."
    nominal_source = t.get("nominal_source", d.nominal_source)
    if nominal_source not in NOMINAL_SOURCES:
        raise CampaignError(
            "calibration.nominal_source", nominal_source, f"one of {list(NOMINAL_SOURCES)}"
        )
    moves = t.get("moves", d.moves)
    if moves not in ("stretch", "de"):
        raise CampaignError("calibration.moves", moves, "one of ['stretch', 'de']")
    walkers = _int(
        t, "walkers", p, minimum=2 * parameters.dim, default=max(d.walkers, 2 * parameters.dim)
    )
    steps = _int(t, "steps", p, minimum=10, default=d.steps)
    burn = _int(t, "burn", p, minimum=0, default=d.burn)
    max_steps = _int(
        t, "max_steps", p, minimum=burn + steps, default=max(d.max_steps, burn + steps)
    )
    return CalibrationSpec(
        grouping=grouping,
        sobol_threshold=_float(t, "sobol_threshold", p, d.sobol_threshold, lo=0.0, hi=1.0),
        walkers=walkers,
        steps=steps,
        burn=burn,
        max_steps=max_steps,
        ensembles=_int(t, "ensembles", p, minimum=2, default=d.ensembles),
        target_rhat=_float(t, "target_rhat", p, d.target_rhat, lo=1.0, hi=2.0),
        target_ess=_float(t, "target_ess", p, d.target_ess, lo=1.0, hi=1e7),
        nominal_source=nominal_source,
        moves=moves,
        map_starts=_int(
            t, "map_starts", p, minimum=1, default=d.map_starts, maximum=MAX_MAP_STARTS
        ),
        predictive_draws=_int(t, "predictive_draws", p, minimum=10, default=d.predictive_draws),
    )


# --- honest-calibration sections (refinement, exact posterior, discrepancy, checks) ----------


def _parse_refinement(t: Mapping[str, Any], min_steps: int) -> RefinementSpec:
    p = "refinement."
    keys = (
        "rounds",
        "level",
        "order",
        "pad",
        "target_error_sd",
        "error_draws",
        "max_steps",
        "target_rhat",
    )
    _check_keys(p, t, keys)
    d = RefinementSpec()
    level = t.get("level")
    order = t.get("order")
    return RefinementSpec(
        rounds=_int(t, "rounds", p, minimum=0, default=d.rounds, maximum=10),
        level=None if level is None else _int(t, "level", p, minimum=1, maximum=8),
        order=None if order is None else _int(t, "order", p, minimum=1, maximum=10),
        pad=_float(t, "pad", p, d.pad, lo=0.0, hi=10.0),
        target_error_sd=_float(t, "target_error_sd", p, d.target_error_sd, lo=1e-6, hi=100.0),
        error_draws=_int(t, "error_draws", p, minimum=10, default=d.error_draws, maximum=10**6),
        max_steps=_int(
            t,
            "max_steps",
            p,
            minimum=min_steps,
            default=max(d.max_steps, min_steps),
            maximum=10**7,
        ),
        target_rhat=_float(t, "target_rhat", p, d.target_rhat, lo=1.0, hi=2.0),
    )


def _parse_posterior(t: Mapping[str, Any], parameters: ParameterSpec) -> PosteriorSpec:
    p = "posterior."
    keys = (
        "sampler",
        "exchangeable",
        "walkers",
        "populations",
        "burn",
        "steps",
        "max_steps",
        "target_rhat",
        "target_ess",
        "variant_target_ess",
        "variant_target_rhat",
        "max_direct_seconds",
    )
    _check_keys(p, t, keys)
    d = PosteriorSpec()
    sampler = t.get("sampler", d.sampler)
    if sampler not in POSTERIOR_SAMPLERS:
        raise CampaignError(f"{p}sampler", sampler, f"one of {list(POSTERIOR_SAMPLERS)}")
    groups = _parse_exchangeable(t.get("exchangeable", []), parameters)
    walkers = _int(t, "walkers", p, minimum=6, default=d.walkers, maximum=100_000)
    need = 2 * parameters.dim + 2 * 3  # model parameters plus at most three regime terms
    if walkers % 2:
        raise CampaignError(f"{p}walkers", walkers, "an even number (red-blue halves)")
    burn = _int(t, "burn", p, minimum=0, default=d.burn, maximum=10**6)
    steps = _int(t, "steps", p, minimum=1, default=d.steps, maximum=10**6)
    max_steps = _int(
        t,
        "max_steps",
        p,
        minimum=burn + steps,
        default=max(d.max_steps, burn + steps),
        maximum=10**7,
    )
    populations = _int(t, "populations", p, minimum=2, default=d.populations, maximum=64)
    chain_bytes = 8 * populations * max_steps * walkers * need
    if chain_bytes > MAX_DIRECT_CHAIN_BYTES:
        raise CampaignError(
            f"{p}max_steps",
            max_steps,
            f"populations x max_steps x walkers x parameters x 8 B <= {MAX_DIRECT_CHAIN_BYTES} "
            f"B of stored chains (here about {chain_bytes} B)",
        )
    return PosteriorSpec(
        sampler=sampler,
        exchangeable=groups,
        walkers=walkers,
        populations=populations,
        burn=burn,
        steps=steps,
        max_steps=max_steps,
        target_rhat=_float(t, "target_rhat", p, d.target_rhat, lo=1.0, hi=2.0),
        target_ess=_float(t, "target_ess", p, d.target_ess, lo=10.0, hi=1e7),
        variant_target_ess=_float(
            t, "variant_target_ess", p, d.variant_target_ess, lo=10.0, hi=1e7
        ),
        variant_target_rhat=_float(
            t, "variant_target_rhat", p, d.variant_target_rhat, lo=1.0, hi=2.0
        ),
        max_direct_seconds=_float(t, "max_direct_seconds", p, d.max_direct_seconds, lo=0.0, hi=1e9),
    )


def _parse_exchangeable(raw: object, parameters: ParameterSpec) -> tuple[tuple[str, ...], ...]:
    """Groups of calibrated parameters with one prior range each, disjoint, >= 2 members."""
    key = "posterior.exchangeable"
    if not isinstance(raw, list) or not all(isinstance(g, list) for g in raw):
        raise CampaignError(key, raw, "a list of lists of calibrated parameter names")
    seen: set[str] = set()
    out = []
    for k, g in enumerate(raw):
        if len(g) < 2 or len(set(g)) != len(g):
            raise CampaignError(f"{key}[{k}]", g, "at least two distinct parameter names")
        for name in g:
            if name not in parameters.names:
                raise CampaignError(f"{key}[{k}]", name, f"one of {list(parameters.names)}")
            if name in seen:
                raise CampaignError(f"{key}[{k}]", name, "a parameter in one group only")
        seen.update(g)
        idx = [parameters.names.index(n) for n in g]
        ranges = {(parameters.lower[i], parameters.upper[i]) for i in idx}
        if len(ranges) != 1:
            raise CampaignError(
                f"{key}[{k}]",
                g,
                f"parameters with the same prior range (got {sorted(ranges)}): only then is "
                "the posterior symmetric",
            )
        out.append(tuple(str(n) for n in g))
    return tuple(out)


def _parse_exact(t: Mapping[str, Any]) -> ExactSpec:
    p = "exact."
    _check_keys(p, t, ("draws", "proposal_draws", "move_steps", "map_starts"))
    d = ExactSpec()
    draws = _int(t, "draws", p, minimum=100, default=d.draws, maximum=10**6)
    return ExactSpec(
        draws=draws,
        proposal_draws=_int(
            t,
            "proposal_draws",
            p,
            minimum=draws,
            default=max(d.proposal_draws, draws),
            maximum=10**7,
        ),
        move_steps=_int(t, "move_steps", p, minimum=0, default=d.move_steps, maximum=10**5),
        map_starts=_int(t, "map_starts", p, minimum=2, default=d.map_starts, maximum=100),
    )


def _parse_discrepancy(t: Mapping[str, Any]) -> DiscrepancySpec:
    from mpiuq.calibration.discrepancy import DISCREPANCY_MODELS

    p = "discrepancy."
    _check_keys(p, t, ("model", "bias_rel", "sd_rel", "compare", "per_series"))
    d = DiscrepancySpec()
    model = t.get("model", d.model)
    if model not in DISCREPANCY_MODELS:
        raise CampaignError("discrepancy.model", model, f"one of {list(DISCREPANCY_MODELS)}")
    bias = _float(t, "bias_rel", p, d.bias_rel, lo=0.0, hi=1.0)
    sd = _float(t, "sd_rel", p, d.sd_rel, lo=0.0, hi=10.0)
    if model == "regime" and bias == 0.0 and sd == 0.0:
        raise CampaignError(
            "discrepancy.sd_rel", sd, "> 0 (or discrepancy.bias_rel > 0) with model = 'regime'"
        )
    return DiscrepancySpec(
        model,
        bias,
        sd,
        _bool(t, "compare", p, d.compare),
        _bool(t, "per_series", p, d.per_series),
    )


def _parse_checks(t: Mapping[str, Any]) -> ChecksSpec:
    p = "checks."
    keys = (
        "max_surrogate_error_sd",
        "max_khat",
        "min_ess",
        "max_grouped_shift_sd",
        "coverage_alpha",
    )
    _check_keys(p, t, keys)
    d = ChecksSpec()
    return ChecksSpec(
        max_surrogate_error_sd=_float(
            t, "max_surrogate_error_sd", p, d.max_surrogate_error_sd, lo=1e-6, hi=1e3
        ),
        max_khat=_float(t, "max_khat", p, d.max_khat, lo=0.0, hi=10.0),
        min_ess=_float(t, "min_ess", p, d.min_ess, lo=1.0, hi=1e7),
        max_grouped_shift_sd=_float(
            t, "max_grouped_shift_sd", p, d.max_grouped_shift_sd, lo=0.0, hi=1e3
        ),
        coverage_alpha=_float(t, "coverage_alpha", p, d.coverage_alpha, lo=0.0, hi=0.5),
    )


def _parse_executor(t: Mapping[str, Any]) -> ExecutorSpec:
    _check_keys("executor.", t, ("workers", "scheduler"))
    workers = _int(t, "workers", "executor.", minimum=0, default=0)
    scheduler = t.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise CampaignError("executor.scheduler", scheduler, "a scheduler address string")
    return ExecutorSpec(workers, scheduler)


# --- helpers ---------------------------------------------------------------------------------


def _check_magnitude(key: str, name: str, value: float | int) -> None:
    try:
        check_parameter_value(name, value)
    except ParameterError as exc:
        raise CampaignError(key, value, exc.allowed) from None


def _check_keys(prefix: str, t: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in t:
        if key not in allowed:
            raise CampaignError(f"{prefix}{key}", t[key], f"one of the keys {list(allowed)}")


def _table(
    t: Mapping[str, Any], key: str, prefix: str = "", required: bool = False
) -> Mapping[str, Any]:
    if key not in t:
        if required:
            raise CampaignError(f"{prefix}{key}", "(missing)", "a TOML table")
        return {}
    value = t[key]
    if not isinstance(value, dict):
        raise CampaignError(f"{prefix}{key}", value, "a TOML table")
    return value


def _require(t: Mapping[str, Any], key: str, prefix: str) -> Any:
    if key not in t:
        raise CampaignError(f"{prefix}{key}", "(missing)", "a value (the key is required)")
    return t[key]


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def _int(
    t: Mapping[str, Any],
    key: str,
    prefix: str,
    minimum: int,
    default: int | None = None,
    maximum: int | None = None,
) -> int:
    value = t.get(key, default) if default is not None else _require(t, key, prefix)
    upper = "" if maximum is None else f" and <= {maximum}"
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        raise CampaignError(f"{prefix}{key}", value, f"an integer >= {minimum}{upper}")
    return value


def _float(
    t: Mapping[str, Any], key: str, prefix: str, default: float, lo: float, hi: float
) -> float:
    value = t.get(key, default)
    if not _is_number(value) or not lo <= float(value) <= hi:
        raise CampaignError(f"{prefix}{key}", value, f"a number in [{lo}, {hi}]")
    return float(value)


def _bool(t: Mapping[str, Any], key: str, prefix: str, default: bool) -> bool:
    value = t.get(key, default)
    if not isinstance(value, bool):
        raise CampaignError(f"{prefix}{key}", value, "true or false")
    return value
