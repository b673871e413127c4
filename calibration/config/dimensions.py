"""How many parameters a campaign's samplers explore, known before any data are read.

Simulator parameters, discrepancy terms (a bias and/or a spread per protocol regime of
every data series: one regime set with one series, one per series and regime with
several, :func:`~mpiuq.calibration.model.discrepancy.regime_key`) and Student-t degrees of
freedom (one per such series). A table with ``sizes_per_protocol`` may reach every
regime, so the count is an upper bound; the walkers' default follows it
(:func:`default_walkers`) so that a campaign with default settings is never refused for
having too few walkers.
"""

from __future__ import annotations

from collections.abc import Sequence

from mpiuq.calibration.model.families.registry import likelihood_family
from mpiuq.simulator.parameters import SimParams

#: Fewest walkers per ensemble by default.
MIN_DEFAULT_WALKERS = 32


def discrepancy_dimension(
    tables: Sequence[tuple[tuple[int, ...] | None, int, int]],
    base: SimParams,
    model: str,
    bias_rel: float,
    sd_rel: float,
    per_series: bool = True,
) -> int:
    """Most discrepancy terms of a campaign.

    Parameters
    ----------
    tables
        Per data table: its explicit sizes (None: ``sizes_per_protocol``) and its
        ``min_size_bytes`` and ``max_size_bytes`` (the regimes a selection can reach).
    base
        The campaign's simulator parameters (its regime table).
    model, bias_rel, sd_rel, per_series
        The ``[discrepancy]`` table (``per_series = False``: one term per regime, shared
        by the tables).

    Examples
    --------
    >>> base = SimParams.from_mapping({"small_max_bytes": 100, "eager_max_bytes": 1000})
    >>> discrepancy_dimension([(None, 1, 2**62), ((1, 50), 1, 2**62)], base, "regime", 0.0, 0.2)
    4
    >>> discrepancy_dimension([(None, 1, 2**62), (None, 1, 500)], base, "regime", 0.0, 0.2)
    5
    >>> tables = [(None, 1, 2**62), (None, 1, 500)]
    >>> discrepancy_dimension(tables, base, "regime", 0.0, 0.2, per_series=False)
    3
    """
    if model == "none":
        return 0
    per_regime = int(bias_rel > 0) + int(sd_rel > 0)
    regimes = [
        reachable_regimes(base, lo, hi)
        if sizes is None
        else {base.protocol_of(int(s)) for s in sizes}
        for sizes, lo, hi in tables
    ]
    if not per_series and len(tables) > 1:  # shared by the tables: each regime once
        return per_regime * len(set().union(*regimes))
    return per_regime * sum(len(r) for r in regimes)


def reachable_regimes(base: SimParams, min_bytes: int, max_bytes: int) -> set[str]:
    """Regimes of the sizes in ``[min_bytes, max_bytes]``."""
    edges = [min_bytes, max_bytes]
    for t in base.thresholds():
        if min_bytes <= t < max_bytes:
            edges += [t, t + 1]
    return {base.protocol_of(int(s)) for s in edges}


def noise_dimension(likelihoods: Sequence[str]) -> int:
    """Shape parameters of the likelihood families: one per data table whose family has
    one (Student-t's degrees of freedom)."""
    return sum(1 for like in likelihoods if likelihood_family(like).shape is not None)


def default_walkers(dim: int) -> int:
    """Walkers per ensemble when ``calibration.walkers`` is not given: ``max(32, 2 dim + 2)``
    (emcee needs at least ``2 dim``; two more keep the ensemble off that edge)."""
    return max(MIN_DEFAULT_WALKERS, 2 * dim + 2)
