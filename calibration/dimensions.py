"""How many parameters a campaign's samplers explore, known before any data are read.

Simulator parameters, discrepancy terms (a bias and/or a spread per protocol regime of
every data series: one regime set with one series, one per series and regime with
several, :func:`~mpiuq.calibration.discrepancy.regime_key`) and Student-t degrees of
freedom (one per such series). A table with ``sizes_per_protocol`` may reach every
regime, so the count is an upper bound; the walkers' default follows it
(:func:`default_walkers`) so that a campaign with default settings is never refused for
having too few walkers.
"""

from __future__ import annotations

from collections.abc import Sequence

from mpiuq.simulator.parameters import SimParams

#: Fewest walkers per ensemble by default.
MIN_DEFAULT_WALKERS = 32


def discrepancy_dimension(
    table_sizes: Sequence[tuple[int, ...] | None],
    base: SimParams,
    model: str,
    bias_rel: float,
    sd_rel: float,
) -> int:
    """Most discrepancy terms of a campaign.

    Parameters
    ----------
    table_sizes
        Explicit sizes of every data table (None: ``sizes_per_protocol``, every regime).
    base
        The campaign's simulator parameters (its regime table).
    model, bias_rel, sd_rel
        The ``[discrepancy]`` table.

    Examples
    --------
    >>> base = SimParams.from_mapping({"small_max_bytes": 100, "eager_max_bytes": 1000})
    >>> discrepancy_dimension([None, (1, 50)], base, "regime", 0.0, 0.2)
    4
    """
    if model == "none":
        return 0
    per_regime = int(bias_rel > 0) + int(sd_rel > 0)
    n_all = len(base.regime_table())
    counts = [
        n_all if sizes is None else len({base.protocol_of(int(s)) for s in sizes})
        for sizes in table_sizes
    ]
    return per_regime * sum(counts)


def noise_dimension(likelihoods: Sequence[str]) -> int:
    """Student-t degrees-of-freedom parameters: one per Student-t data table."""
    return sum(1 for like in likelihoods if like == "student_t")


def default_walkers(dim: int) -> int:
    """Walkers per ensemble when ``calibration.walkers`` is not given: ``max(32, 2 dim + 2)``
    (emcee needs at least ``2 dim``; two more keep the ensemble off that edge)."""
    return max(MIN_DEFAULT_WALKERS, 2 * dim + 2)
