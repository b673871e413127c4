"""The sampling sections of a campaign (``[surrogate]``, ``[calibration]``, ``[refinement]``,
``[posterior]``, ``[exact]``, ``[discrepancy]``, ``[checks]``, ``[executor]``) and the
``[[variants]]`` tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpiuq.calibration.config.model_specs import ParameterSpec, SimulatorSpec, VariantSpec
from mpiuq.calibration.config.readers import (
    check_keys,
    read_int,
    read_table,
    require,
)
from mpiuq.calibration.config.run_specs import (
    MAX_DIRECT_CHAIN_BYTES,
    POSTERIOR_SAMPLERS,
    CalibrationSpec,
    ChecksSpec,
    DiscrepancySpec,
    ExactSpec,
    ExecutorSpec,
    PosteriorSpec,
    RefinementSpec,
    SurrogateSpec,
)
from mpiuq.calibration.config.schema import (
    BoolKey,
    ChoiceKey,
    FloatKey,
    IntKey,
    Key,
    key_names,
    read_keys,
)
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.discrepancy import DISCREPANCY_MODELS
from mpiuq.calibration.sampling.moves import move_names
from mpiuq.simulator.errors import ParameterError

GROUPINGS: tuple[str, ...] = ("sobol", "joint")


NOMINAL_SOURCES: tuple[str, ...] = ("config", "map")


#: Most starts of the MAP optimisation (``calibration.map_starts``).
MAX_MAP_STARTS = 100


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
        check_keys(p, t, ("name", "fixed"))
        name = require(t, "name", p)
        taken = reserved + [v.name for v in out]
        if not isinstance(name, str) or not name or name in taken:
            raise CampaignError(f"{p}name", name, f"a non-empty name other than {taken}")
        fixed_t = read_table(t, "fixed", prefix=p, required=True)
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


#: ``[surrogate]``: sparse-grid level and chaos order.
SURROGATE_KEYS: tuple[Key, ...] = (IntKey("level", 1, 8), IntKey("order", 1, 10))

#: ``[calibration]`` (and its ``nominal`` table, read with the parameters).
CALIBRATION_KEYS: tuple[Key, ...] = (
    ChoiceKey("grouping", GROUPINGS),
    FloatKey("sobol_threshold", 0.0, 1.0),
    IntKey(
        "walkers",
        lambda v: 2 * v["dim"],
        default=lambda v: max(CalibrationSpec().walkers, 2 * v["dim"]),
    ),
    IntKey("steps", 10),
    IntKey("burn", 0),
    IntKey(
        "max_steps",
        lambda v: v["burn"] + v["steps"],
        default=lambda v: max(CalibrationSpec().max_steps, v["burn"] + v["steps"]),
    ),
    IntKey("ensembles", 2),
    FloatKey("target_rhat", 1.0, 2.0),
    FloatKey("target_ess", 1.0, 1e7),
    ChoiceKey("nominal_source", NOMINAL_SOURCES),
    ChoiceKey("moves", move_names),
    IntKey("map_starts", 1, MAX_MAP_STARTS),
    IntKey("predictive_draws", 10),
)

#: ``[refinement]``: local surrogate refinement around the posterior.
REFINEMENT_KEYS: tuple[Key, ...] = (
    IntKey("rounds", 0, 10),
    IntKey("level", 1, 8, optional=True),
    IntKey("order", 1, 10, optional=True),
    FloatKey("pad", 0.0, 10.0),
    FloatKey("target_error_sd", 1e-6, 100.0),
    IntKey("error_draws", 10, 10**6),
    IntKey(
        "max_steps",
        lambda v: v["min_steps"],
        10**7,
        default=lambda v: max(RefinementSpec().max_steps, v["min_steps"]),
    ),
    FloatKey("target_rhat", 1.0, 2.0),
)

#: ``[posterior]``, but for ``exchangeable`` (groups of parameters, read on their own).
POSTERIOR_KEYS: tuple[Key, ...] = (
    ChoiceKey("sampler", POSTERIOR_SAMPLERS),
    IntKey("walkers", 6, 100_000),
    IntKey("populations", 2, 64),
    IntKey("burn", 0, 10**6),
    IntKey("steps", 1, 10**6),
    IntKey(
        "max_steps",
        lambda v: v["burn"] + v["steps"],
        10**7,
        default=lambda v: max(PosteriorSpec().max_steps, v["burn"] + v["steps"]),
    ),
    FloatKey("target_rhat", 1.0, 2.0),
    FloatKey("target_ess", 10.0, 1e7),
    FloatKey("variant_target_ess", 10.0, 1e7),
    FloatKey("variant_target_rhat", 1.0, 2.0),
    FloatKey("max_direct_seconds", 0.0, 1e9),
)

#: ``[exact]``: importance weights and resample-move of the surrogate path.
EXACT_KEYS: tuple[Key, ...] = (
    IntKey("draws", 100, 10**6),
    IntKey(
        "proposal_draws",
        lambda v: v["draws"],
        10**7,
        default=lambda v: max(ExactSpec().proposal_draws, v["draws"]),
    ),
    IntKey("move_steps", 0, 10**5),
    IntKey("map_starts", 2, 100),
)

#: ``[discrepancy]``: per-regime model discrepancy and the model comparison.
DISCREPANCY_KEYS: tuple[Key, ...] = (
    ChoiceKey("model", DISCREPANCY_MODELS),
    FloatKey("bias_rel", 0.0, 1.0),
    FloatKey("sd_rel", 0.0, 10.0),
    BoolKey("compare"),
    BoolKey("per_series"),
)

#: ``[checks]``: thresholds of the honesty checks.
CHECKS_KEYS: tuple[Key, ...] = (
    FloatKey("max_surrogate_error_sd", 1e-6, 1e3),
    FloatKey("max_khat", 0.0, 10.0),
    FloatKey("min_ess", 1.0, 1e7),
    FloatKey("max_grouped_shift_sd", 0.0, 1e3),
    FloatKey("coverage_alpha", 0.0, 0.5),
)


def _parse_surrogate(t: Mapping[str, Any]) -> SurrogateSpec:
    check_keys("surrogate.", t, key_names(SURROGATE_KEYS))
    return SurrogateSpec(**read_keys(t, "surrogate.", SURROGATE_KEYS, SurrogateSpec()))


def _parse_calibration(t: Mapping[str, Any], parameters: ParameterSpec) -> CalibrationSpec:
    p = "calibration."
    check_keys(p, t, (*key_names(CALIBRATION_KEYS), "nominal"))
    context = {"dim": parameters.dim}
    return CalibrationSpec(**read_keys(t, p, CALIBRATION_KEYS, CalibrationSpec(), context))


def _parse_refinement(t: Mapping[str, Any], min_steps: int) -> RefinementSpec:
    p = "refinement."
    check_keys(p, t, key_names(REFINEMENT_KEYS))
    context = {"min_steps": min_steps}
    return RefinementSpec(**read_keys(t, p, REFINEMENT_KEYS, RefinementSpec(), context))


def _parse_posterior(t: Mapping[str, Any], parameters: ParameterSpec) -> PosteriorSpec:
    p = "posterior."
    names = key_names(POSTERIOR_KEYS)
    check_keys(p, t, (names[0], "exchangeable", *names[1:]))
    groups = _parse_exchangeable(t.get("exchangeable", []), parameters)
    values = read_keys(t, p, POSTERIOR_KEYS, PosteriorSpec())
    walkers, populations, max_steps = values["walkers"], values["populations"], values["max_steps"]
    if walkers % 2:
        raise CampaignError(f"{p}walkers", walkers, "an even number (red-blue halves)")
    need = 2 * parameters.dim + 2 * 3  # model parameters plus at most three regime terms
    chain_bytes = 8 * populations * max_steps * walkers * need
    if chain_bytes > MAX_DIRECT_CHAIN_BYTES:
        raise CampaignError(
            f"{p}max_steps",
            max_steps,
            f"populations x max_steps x walkers x parameters x 8 B <= {MAX_DIRECT_CHAIN_BYTES} "
            f"B of stored chains (here about {chain_bytes} B)",
        )
    return PosteriorSpec(exchangeable=groups, **values)


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
    check_keys("exact.", t, key_names(EXACT_KEYS))
    return ExactSpec(**read_keys(t, "exact.", EXACT_KEYS, ExactSpec()))


def _parse_discrepancy(t: Mapping[str, Any]) -> DiscrepancySpec:
    p = "discrepancy."
    check_keys(p, t, key_names(DISCREPANCY_KEYS))
    values = read_keys(t, p, DISCREPANCY_KEYS, DiscrepancySpec())
    if values["model"] == "regime" and values["bias_rel"] == 0.0 and values["sd_rel"] == 0.0:
        raise CampaignError(
            "discrepancy.sd_rel",
            values["sd_rel"],
            "> 0 (or discrepancy.bias_rel > 0) with model = 'regime'",
        )
    return DiscrepancySpec(**values)


def _parse_checks(t: Mapping[str, Any]) -> ChecksSpec:
    check_keys("checks.", t, key_names(CHECKS_KEYS))
    return ChecksSpec(**read_keys(t, "checks.", CHECKS_KEYS, ChecksSpec()))


def _parse_executor(t: Mapping[str, Any]) -> ExecutorSpec:
    check_keys("executor.", t, ("workers", "scheduler"))
    workers = read_int(t, "workers", "executor.", minimum=0, default=0)
    scheduler = t.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise CampaignError("executor.scheduler", scheduler, "a scheduler address string")
    return ExecutorSpec(workers, scheduler)
