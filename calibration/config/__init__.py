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
dotted key, the value and what is allowed. The validator is split by table: the typed
readers (:mod:`.readers`), the specs (:mod:`.model_specs`, :mod:`.run_specs`), the tables
(:mod:`.simulator_table`, :mod:`.data_tables`, :mod:`.sections`) and the file as a whole
(:mod:`.campaign_file`); this package re-exports their public names.
"""

from mpiuq.calibration.config.campaign_file import (
    _TOP_KEYS,
    MAX_NAME_CHARS,
    MAX_TOML_BYTES,
    ParameterFile,
    discrepancy_terms,
    load_campaign,
    load_parameter_file,
    parse_campaign,
    read_toml,
)
from mpiuq.calibration.config.data_tables import (
    _DATA_MODEL_KEYS,
    OBSERVABLES,
    SERIES_MODELS,
    SUMMARIES,
    data_model_keys,
)
from mpiuq.calibration.config.model_specs import DataSpec, ParameterSpec, SimulatorSpec, VariantSpec
from mpiuq.calibration.config.run_specs import (
    POSTERIOR_SAMPLERS,
    CalibrationSpec,
    Campaign,
    ChecksSpec,
    DiscrepancySpec,
    ExactSpec,
    ExecutorSpec,
    PosteriorSpec,
    RefinementSpec,
    SurrogateSpec,
)
from mpiuq.calibration.config.sections import GROUPINGS, NOMINAL_SOURCES
from mpiuq.calibration.config.simulator_table import _REGIME_KEYS

__all__ = [
    "GROUPINGS",
    "MAX_NAME_CHARS",
    "MAX_TOML_BYTES",
    "NOMINAL_SOURCES",
    "OBSERVABLES",
    "POSTERIOR_SAMPLERS",
    "SERIES_MODELS",
    "SUMMARIES",
    "_DATA_MODEL_KEYS",
    "_REGIME_KEYS",
    "_TOP_KEYS",
    "CalibrationSpec",
    "Campaign",
    "ChecksSpec",
    "DataSpec",
    "DiscrepancySpec",
    "ExactSpec",
    "ExecutorSpec",
    "ParameterFile",
    "ParameterSpec",
    "PosteriorSpec",
    "RefinementSpec",
    "SimulatorSpec",
    "SurrogateSpec",
    "VariantSpec",
    "data_model_keys",
    "discrepancy_terms",
    "load_campaign",
    "load_parameter_file",
    "parse_campaign",
    "read_toml",
]
