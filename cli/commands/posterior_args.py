"""Command-line options of the commands that run the simulator at calibrated parameters.

``--params results/X`` names a campaign; by default its **posterior draws** are used
(``--draws N``, picked with ``--seed``), ``--estimate median|mean|map`` asks for one
point estimate instead. ``--param NAME=VALUE`` overrides a value in every draw.
``--workers N`` / ``--scheduler ADDR`` say where the draws run.

Why 64 draws by default: the 5% and 95% quantiles of 64 draws have a Monte-Carlo
standard error of about 0.26 posterior sd (normal case: ``sqrt(0.05 * 0.95 / 64) /
pdf(1.645)``), the mean one of 0.125 sd, so a 90% interval is placed to a quarter of its
half-width; quadrupling the draws only halves that, at four times the cost.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.calibration.reporting.calibrated import (
    ESTIMATES,
    PosteriorDraws,
    load_calibrated,
    load_posterior_draws,
)
from mpiuq.commands.arguments import parse_assignments, seed_argument
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.parameters import SimParams

#: Posterior draws replayed by default (see the module docstring).
DEFAULT_DRAWS = 64

#: Most draws accepted on the command line.
MAX_DRAWS = 100_000


def add_posterior_arguments(
    p: argparse.ArgumentParser, *, executor: bool = True, seed: bool = True
) -> None:
    """Add ``--params``, ``--draws``, ``--estimate`` (and ``--seed``, ``--workers``,
    ``--scheduler``) to ``p``."""
    p.add_argument(
        "--params",
        type=Path,
        default=None,
        metavar="CAMPAIGN",
        help="calibrated parameters: a campaign result directory (results/<campaign>) "
        "or its summary.json; its posterior draws are used unless --estimate is given",
    )
    p.add_argument(
        "--draws",
        type=_draw_count,
        default=None,
        metavar="N",
        help=f"posterior draws to run (default {DEFAULT_DRAWS}: 90%% intervals to about a "
        "quarter of their half-width)",
    )
    p.add_argument(
        "--estimate",
        choices=ESTIMATES,
        default=None,
        help="run one posterior point estimate instead of draws (median; mean; map only "
        "where the campaign found a unique mode)",
    )
    if seed:
        p.add_argument(
            "--seed", type=seed_argument, default=0, help="seed of the pick of draws (default 0)"
        )
    if executor:
        p.add_argument(
            "--workers",
            type=_draw_count,
            default=None,
            help="local worker processes for the draws (default: in process)",
        )
        p.add_argument(
            "--scheduler",
            default=None,
            help="Dask: 'local' (LocalCluster of --workers) or a scheduler tcp://HOST:PORT",
        )


def _draw_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 1 <= n <= MAX_DRAWS:
        raise argparse.ArgumentTypeError(f"{n} is out of range: expected 1..{MAX_DRAWS}")
    return n


@dataclass(frozen=True)
class ParameterSets:
    """The parameter sets a command runs, and where they came from.

    Attributes
    ----------
    sets
        One :class:`SimParams` per draw (one only for a point estimate or no campaign).
    calibration
        JSON-ready description: campaign, file read, estimate or draws and seed.
    draws
        The posterior draws read (with their discrepancy and noise parameters), if any.
    """

    sets: tuple[SimParams, ...]
    calibration: dict[str, Any]
    draws: PosteriorDraws | None = None

    @property
    def is_draws(self) -> bool:
        """Whether the sets are posterior draws (intervals make sense)."""
        return bool(self.calibration.get("draws"))

    def label(self) -> str:
        """One line saying which calibration was used (for tables and figures)."""
        c = self.calibration
        adjusted = f" ({c['adjusted']})" if c.get("adjusted") else ""
        return self._source_label() + adjusted

    def _source_label(self) -> str:
        c = self.calibration
        if c.get("draws"):
            return (
                f"{c['draws']} posterior draws of {c['campaign'] or c['source']} "
                f"({Path(c['source']).name}, seed {c['seed']})"
            )
        if c.get("estimate"):
            return f"posterior {c['estimate']} of {c['campaign'] or c['source']}"
        return "default parameters (Table 1)"


def parameter_sets(args: argparse.Namespace) -> ParameterSets:
    """The parameter sets of ``--params/--draws/--estimate/--seed/--param``.

    Without ``--params``: the defaults (one set). With ``--estimate``: that estimate.
    Otherwise ``--draws`` (default :data:`DEFAULT_DRAWS`) posterior draws.

    Raises
    ------
    ParameterError
        If ``--draws`` is combined with ``--estimate`` or given without ``--params``.
    CalibratedParametersError
        If the campaign's files cannot provide the parameters.
    """
    overrides = parse_assignments(args.param)
    if args.params is None:
        if args.draws is not None or args.estimate is not None:
            which = "--draws" if args.draws is not None else "--estimate"
            raise ParameterError(which, "given", "--params results/<campaign> with it")
        return ParameterSets((_params(overrides),), {"source": None})
    if args.estimate is not None:
        if args.draws is not None:
            raise ParameterError("--draws", args.draws, "either --draws or --estimate, not both")
        point = load_calibrated(args.params, args.estimate)
        return ParameterSets(
            (point.params(overrides),),
            {"campaign": point.campaign, "source": str(point.source), "estimate": args.estimate},
        )
    n = DEFAULT_DRAWS if args.draws is None else args.draws
    summary = load_calibrated(args.params)  # the campaign's name; a clear error first
    draws = load_posterior_draws(summary.source.parent, n, seed=args.seed)
    sets = tuple(draws.params(k, overrides) for k in range(n))
    return ParameterSets(
        sets,
        {
            "campaign": summary.campaign,
            "source": str(draws.source),
            "draws": n,
            "seed": args.seed,
            "overrides": overrides,
        },
        draws,
    )


def _params(values: dict[str, float]) -> SimParams:
    try:
        return SimParams.from_mapping(values)
    except TypeError as exc:  # pragma: no cover - from_mapping validates names first
        raise ParameterError("params", values, "valid parameter values") from exc
