"""The ``[simulator]`` table (benchmark, fixed values, protocol regimes, or an external
simulator) and the ``[parameters]`` table of calibrated ranges.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.external_spec import parse_external
from mpiuq.calibration.config.model_specs import ParameterSpec, SimulatorSpec
from mpiuq.calibration.config.readers import (
    check_keys,
    check_magnitude,
    is_number,
    read_int,
    read_table,
    require,
)
from mpiuq.calibration.errors import CampaignError
from mpiuq.simulator.benchmarks.kinds import BENCHMARKS
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS, parameter_names
from mpiuq.simulator.regimes import (
    CONTINUOUS_SLOTS,
    PROTOCOLS,
    RDMA_PROTOCOLS,
    STREAM_PROTOCOLS,
    Regime,
    parse_slot_name,
)


def _parse_simulator(t: Mapping[str, Any], base_dir: Path | None = None) -> SimulatorSpec:

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
        check_keys(p, t, _REGIME_KEYS)
        protocol = require(t, "protocol", p)
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
                if len(v) != 2 or not all(is_number(x) for x in v) or not 0 <= v[0] < v[1]:
                    raise CampaignError(f"{p}{key}", v, "[low, high] with 0 <= low < high")
                priors.append((f"regime{k}_{key}", float(v[0]), float(v[1])))
                values[key] = (float(v[0]) + float(v[1])) / 2.0
            elif is_number(v):
                values[key] = float(v)
            else:
                raise CampaignError(f"{p}{key}", v, "a number (fixed) or [low, high] (calibrated)")
        regimes.append(Regime(**values))
    return tuple(regimes), tuple(priors)


def _parse_simulator_scalars(t: Mapping[str, Any]) -> SimulatorSpec:
    check_keys("simulator.", t, ("benchmark", "window", "fixed", "regimes"))
    benchmark = t.get("benchmark", "pingpong")
    if benchmark not in BENCHMARKS:
        raise CampaignError("simulator.benchmark", benchmark, f"one of {list(BENCHMARKS)}")
    window = read_int(t, "window", "simulator.", minimum=1, default=64)
    fixed_t = read_table(t, "fixed", prefix="simulator.")
    known = parameter_names()
    fixed: list[tuple[str, float | int]] = []
    for key, value in fixed_t.items():
        if key not in known:
            raise CampaignError(
                f"simulator.fixed.{key}", value, f"a simulator parameter, one of {list(known)}"
            )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CampaignError(f"simulator.fixed.{key}", value, "a number")
        check_magnitude(f"simulator.fixed.{key}", key, value)
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
        if not isinstance(value, list) or len(value) != 2 or not all(is_number(v) for v in value):
            raise CampaignError(full, value, "[low, high] with two numbers")
        lo, hi = float(value[0]), float(value[1])
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0.0 or hi <= lo:
            raise CampaignError(full, value, "finite bounds with 0 < low < high")
        check_magnitude(full, key, lo)
        check_magnitude(full, key, hi)
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
        if not isinstance(value, list) or len(value) != 2 or not all(is_number(v) for v in value):
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
        if not is_number(value) or not lower[i] <= float(value) <= upper[i]:
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
