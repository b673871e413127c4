"""A campaign file as a whole: reading the TOML, the top-level keys, the cross-table rules
and the default walker counts (the tables: :mod:`.simulator_table`, :mod:`.data_tables`,
:mod:`.sections`); and the parameter files of ``mpiuq simulate --config``.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.data_tables import _parse_datasets
from mpiuq.calibration.config.dimensions import (
    default_walkers,
    discrepancy_dimension,
    noise_dimension,
)
from mpiuq.calibration.config.readers import (
    check_keys,
    check_magnitude,
    read_int,
    read_table,
    require,
)
from mpiuq.calibration.config.run_specs import Campaign
from mpiuq.calibration.config.sections import (
    _parse_calibration,
    _parse_checks,
    _parse_discrepancy,
    _parse_exact,
    _parse_executor,
    _parse_posterior,
    _parse_refinement,
    _parse_surrogate,
    _parse_variants,
)
from mpiuq.calibration.config.simulator_table import (
    _parse_parameters,
    _parse_simulator,
    _regime_key,
)
from mpiuq.calibration.config.validation_spec import ValidationSpec, parse_validation
from mpiuq.calibration.errors import CampaignError
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import SimParams, parameter_names

#: Longest campaign name (it names the results folder).
MAX_NAME_CHARS = 100


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
        spec = _parse_simulator(read_table(raw, "simulator", required=True))
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
        check_magnitude(key, key, value)
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
    check_keys("", raw, _TOP_KEYS)
    name = _parse_name(require(raw, "name", ""))
    seed = read_int(raw, "seed", "", minimum=0, maximum=2**63 - 1)
    simulator = _parse_simulator(read_table(raw, "simulator", required=True), base_dir)
    parameters = _parse_parameters(
        read_table(raw, "parameters", required=True),
        read_table(read_table(raw, "calibration"), "nominal", prefix="calibration."),
        simulator,
    )
    data = _parse_datasets(raw, base_dir, simulator)
    surrogate = _parse_surrogate(read_table(raw, "surrogate"))
    calibration = _parse_calibration(read_table(raw, "calibration"), parameters)
    executor = _parse_executor(read_table(raw, "executor"))
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
            read_table(raw, "refinement"), calibration.burn + calibration.steps
        ),
        posterior=_parse_posterior(read_table(raw, "posterior"), parameters),
        exact=_parse_exact(read_table(raw, "exact")),
        discrepancy=_parse_discrepancy(read_table(raw, "discrepancy")),
        checks=_parse_checks(read_table(raw, "checks")),
        variants=_parse_variants(raw.get("variants", []), simulator, parameters),
        validation=parse_validation(read_table(raw, "validation"), tuple(spec.label for spec in data))
        if "validation" in raw
        else ValidationSpec(),
    )
    from dataclasses import replace

    if "walkers" not in read_table(raw, "calibration"):
        campaign = replace(
            campaign, calibration=replace(calibration, walkers=_default_walkers(campaign))
        )
    if "walkers" not in read_table(raw, "posterior"):  # the direct sampler's populations too
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
    per data table when there are several: :func:`~mpiuq.calibration.config.dimensions.discrepancy_dimension`).
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
