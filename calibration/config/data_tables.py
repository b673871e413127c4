"""The ``[data]`` table or ``[[data]]`` tables: measured series, sizes, observable, replica
summary and likelihood family (from the registry of families).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES
from mpiuq.calibration.config.model_specs import DataSpec, SimulatorSpec
from mpiuq.calibration.config.readers import (
    check_keys,
    is_number,
    read_bool,
    read_float,
    read_int,
    require,
)
from mpiuq.calibration.data.benchmark_csv import BENCHMARK_LABELS
from mpiuq.calibration.errors import CampaignError
from mpiuq.calibration.model.families.family import LikelihoodFamily
from mpiuq.calibration.model.families.registry import (
    likelihood_family,
    likelihood_names,
    shape_parameters,
)
from mpiuq.simulator.benchmarks.kinds import BENCHMARKS, WINDOWED_BENCHMARKS

OBSERVABLES: tuple[str, ...] = ("time_us", "throughput_MBps")


#: Smallest non-zero ``data.sd_floor_rel``: a relative spread of 1e-300 squares to a
#: variance of 0 (18 observations of the issue's reproducer), a likelihood of infinite
#: weight; a millionth of the value is already far below any timer's resolution.
MIN_SD_FLOOR_REL = 1e-6


#: Most sizes per protocol regime (``data.sizes_per_protocol``).
MAX_SIZES_PER_PROTOCOL = 1000


#: Longest burst of back-to-back iterations (``data.burst_length``; runs go up to 10^9).
MAX_BURST_LENGTH = 10**9


def _parse_data(t: Mapping[str, Any], base_dir: Path) -> DataSpec:
    check_keys(
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
    path = require(t, "path", "data.")
    if not isinstance(path, str) or not path:
        raise CampaignError("data.path", path, "a path string relative to the campaign file")
    resolved = (base_dir / path).resolve()
    benchmark = require(t, "benchmark", "data.")
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
        per_protocol = read_int(
            t, "sizes_per_protocol", "data.", minimum=1, maximum=MAX_SIZES_PER_PROTOCOL
        )
    observable = t.get("observable", "time_us")
    if observable not in OBSERVABLES:
        raise CampaignError("data.observable", observable, f"one of {list(OBSERVABLES)}")
    drop_warmup = read_bool(t, "drop_warmup", "data.", False)
    aggregate = read_bool(t, "aggregate_bursts", "data.", False)
    burst = read_int(t, "burst_length", "data.", minimum=1, default=10, maximum=MAX_BURST_LENGTH)
    floor = read_float(t, "sd_floor_rel", "data.", 0.0, lo=0.0, hi=1.0)
    if 0.0 < floor < MIN_SD_FLOOR_REL:  # its square underflows: a variance of exactly 0
        raise CampaignError(
            "data.sd_floor_rel", floor, f"0 (no floor) or a number in [{MIN_SD_FLOOR_REL:g}, 1]"
        )
    min_size = read_int(t, "min_size_bytes", "data.", minimum=1, default=1, maximum=2**62)
    max_size = read_int(t, "max_size_bytes", "data.", minimum=1, default=2**62, maximum=2**62)
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
#: ``mpiuq simulate --csv``): the ``model`` of a data table with that label. The label each
#: benchmark kind writes (``BENCHMARK_LABELS``) names that kind; the others listed are the
#: measured series' aliases. A label not listed needs an explicit ``model`` (never a
#: silent default).
SERIES_MODELS: dict[str, str] = {
    **{label: kind for kind, (label, _unit) in BENCHMARK_LABELS.items()},
    "pingpong_half_rtt_mean": "pingpong",
    "osu_latency": "pingpong",
    "imb_pingpong": "pingpong",
    "osu_bw": "stream",
    "osu_bibw": "bidirectional_stream",
    "pingpong_send_mean": "pingpong_send",
    "isend_mean": "isend",
    "recv_arrived_mean": "recv_arrived",
}


#: Replica summaries of a data table (:mod:`~mpiuq.calibration.data.observations`).
SUMMARIES: tuple[str, ...] = ("mean", "median", "trimmed_mean")


#: Keys of a data table that :func:`_parse_data_model` reads (the others: :func:`_parse_data`),
#: with the shape-parameter keys of the registered likelihood families (``nu``).
_DATA_MODEL_KEYS = ("label", "model", "window", "likelihood", "summary", "trim")


def data_model_keys() -> tuple[str, ...]:
    """:data:`_DATA_MODEL_KEYS` and the registered families' shape keys (``nu``)."""
    return _DATA_MODEL_KEYS + tuple(dict.fromkeys(s.name for s, _ in shape_parameters()))


def _parse_datasets(
    raw: Mapping[str, Any], base_dir: Path, simulator: SimulatorSpec
) -> tuple[DataSpec, ...]:
    """One ``[data]`` table or several ``[[data]]`` tables (keys ``data[k].*``)."""
    t = require(raw, "data", "")
    if isinstance(t, dict):
        tables: list[tuple[str, Mapping[str, Any]]] = [("data.", t)]
    elif isinstance(t, list) and t and all(isinstance(x, dict) for x in t):
        tables = [(f"data[{k}].", x) for k, x in enumerate(t)]
    else:
        raise CampaignError("data", t, "a [data] table or one or more [[data]] tables")
    specs: list[DataSpec] = []
    if simulator.external is not None:
        from mpiuq.calibration.config.external_spec import external_tables

        tables = external_tables(tables, simulator.external)
    for prefix, table in tables:
        model_keys = data_model_keys()
        core = {k: v for k, v in table.items() if k not in model_keys}
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
    window = read_int(t, "window", prefix, minimum=1, default=simulator.window)
    likelihood = t.get("likelihood", "gaussian")
    if not isinstance(likelihood, str) or likelihood not in likelihood_names():
        raise CampaignError(f"{prefix}likelihood", likelihood, f"one of {list(likelihood_names())}")
    summary = t.get("summary", "mean")
    if summary not in SUMMARIES:
        raise CampaignError(f"{prefix}summary", summary, f"one of {list(SUMMARIES)}")
    trim = read_float(t, "trim", prefix, 0.2, lo=0.0, hi=0.45)
    nu = _parse_shape_prior(t, prefix, likelihood_family(likelihood))
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
        nu=nu,
    )


#: Prior of a data table's shape parameter when its family has none (unused).
_NO_SHAPE_PRIOR = (1.0, 30.0)


def _parse_shape_prior(
    t: Mapping[str, Any], prefix: str, family: LikelihoodFamily
) -> tuple[float, float]:
    """The prior ``[low, high]`` of the family's shape parameter (Student-t's ``nu``); a
    shape key of another family is refused."""
    for shape, owner in shape_parameters():
        if shape.name not in t and shape is not family.shape:
            continue
        raw = t.get(shape.name, list(shape.default))
        if (
            not isinstance(raw, list)
            or len(raw) != 2
            or not all(is_number(v) for v in raw)
            or not shape.lowest <= float(raw[0]) < float(raw[1]) <= shape.highest
        ):
            raise CampaignError(
                f"{prefix}{shape.name}",
                raw,
                f"[low, high] {shape.meaning} with {shape.lowest:g} <= low < high <= "
                f"{shape.highest:g}",
            )
        if shape.name in t and (family.shape is None or family.shape.name != shape.name):
            raise CampaignError(
                f"{prefix}{shape.name}", raw, f"no value unless likelihood = {owner!r}"
            )
    if family.shape is None:
        return _NO_SHAPE_PRIOR
    raw = t.get(family.shape.name, list(family.shape.default))
    return (float(raw[0]), float(raw[1]))
