"""Memory and work of a campaign or a benchmark run, estimated from its settings before it starts.

Every size a campaign builds is known in closed form from the campaign file: the sparse
grid's node count, the chaos' term count, the benchmark program's operations, the
samplers' chains, the predictive draws.  :func:`check_campaign_budget` compares each
stage with the :class:`~mpiuq.surrogate.budget.Budget` and refuses a campaign that
cannot finish (``ensembles = 2**31``, ``max_steps = 10**18``, ``predictive_draws =
10**12``, ``level = 8, order = 10``, ``window = 10**9``...) with the estimate and the
keys in the message; :func:`check_benchmark_budget` does the same for ``mpiuq simulate``.
The estimates are upper bounds of the peak of each stage, not exact figures.
"""

from __future__ import annotations

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.errors import CampaignError
from mpiuq.surrogate.basis import n_terms
from mpiuq.surrogate.budget import (
    F8,
    Budget,
    check_memory,
    check_model_work,
    check_surrogate_evaluations,
    default_budget,
    pce_fit_bytes,
    sparse_grid_bytes,
    sparse_grid_size,
)

#: Memory of one engine operation while a benchmark program is built (Python tuples and
#: lists of the program builder; measured 360-1100 B), bytes.
BUILDER_BYTES_PER_OP = 1200
#: Memory of one operation of a built program (32-byte row, request slots, queues), bytes.
PROGRAM_BYTES_PER_OP = 64
#: Copies of the chains held at once while sampling: emcee's backend and its growth copy,
#: the stacked post-burn chains, the finished groups' samples.
CHAIN_COPIES = 4
#: Arrays of the predictive's size held at once (draws, noise, outputs, quantile copies).
PREDICTIVE_COPIES = 5
#: Initial walker positions are the best of this many prior draws per walker.
INITIAL_OVERSAMPLE = 10
#: Prior draws of the MAP search before sampling (``estimates.map_from_prior``).
MAP_PRIOR_DRAWS = 4000
#: Posterior draws kept per chain (``posterior.sample_posterior``).
DRAWS_PER_CHAIN = 1000


def benchmark_program_ops(benchmark: str, window: int) -> int:
    """Engine operations of a benchmark program (one warm-up and one timed repetition).

    Ping-pong: per repetition two blocking sends and two receives, each a post and a wait;
    stream: per repetition ``window`` nonblocking sends and receives, two waitalls and a
    blocking acknowledgement each way; plus the two timing marks.

    Examples
    --------
    >>> benchmark_program_ops("pingpong", 64), benchmark_program_ops("stream", 64)
    (18, 270)
    """
    per_repetition = 8 if benchmark == "pingpong" else 2 * window + 6
    return 2 * per_repetition + 2


def benchmark_work(benchmark: str, window: int) -> int:
    """Work units of one run of a benchmark program for one parameter set and size.

    The operations plus an allowance for searching the matching queues, which hold up
    to ``window`` messages of the stream benchmark (quadratic in the window: measured
    0.14 s at a window of 1,000 and 73 s at 100,000).
    """
    ops = benchmark_program_ops(benchmark, window)
    return ops + (window * window if benchmark == "stream" else 0)


def check_benchmark_budget(
    benchmark: str, window: int, n_sizes: int, n_sets: int = 1, budget: Budget | None = None
) -> None:
    """Refuse benchmark runs that cannot finish within the budget.

    Parameters
    ----------
    benchmark, window
        The benchmark program.
    n_sizes
        Message sizes (one program each).
    n_sets
        Parameter sets evaluated at every size.

    Raises
    ------
    BudgetError
        With the estimate and what to change.
    """
    b = default_budget() if budget is None else budget
    ops = benchmark_program_ops(benchmark, window)
    what = f"the {benchmark} benchmark with window {window}"
    check_memory(
        what,
        ops * (BUILDER_BYTES_PER_OP + PROGRAM_BYTES_PER_OP * min(n_sizes, 256)),
        f"{ops} engine operations per program, {n_sizes} programs",
        b,
    )
    work = float(n_sets) * n_sizes * benchmark_work(benchmark, window)
    check_model_work(
        what,
        work,
        f"{n_sets} parameter sets x {n_sizes} sizes x {benchmark_work(benchmark, window)} per run",
        b,
    )


def max_outputs(campaign: Campaign) -> int:
    """Most outputs the campaign can have: its sizes, or three regimes of sizes per protocol."""
    d = campaign.data
    if d.sizes is not None:
        return len(d.sizes)
    return 3 * (d.sizes_per_protocol or 1)


def check_campaign_budget(campaign: Campaign, budget: Budget | None = None) -> None:
    """Check a campaign's design, surrogate, sampling and predictive against the budget.

    Raises
    ------
    CampaignError
        If the surrogate order needs more terms than the design has points.
    BudgetError
        If a stage needs more memory or work than the budget (the message names the
        stage, the keys behind the estimate and the limit).
    """
    b = default_budget() if budget is None else budget
    dim = campaign.parameters.dim
    level, order = campaign.surrogate.level, campaign.surrogate.order
    n_out = max_outputs(campaign)
    n_design = sparse_grid_size(dim, level)
    terms = n_terms(dim, order)
    if n_design <= terms:
        fit = max((k for k in range(order) if n_terms(dim, k) < n_design), default=0)
        raise CampaignError(
            "surrogate.order",
            order,
            f"at most {fit} for surrogate.level = {level}: a total-order-{order} chaos in "
            f"{dim} dimensions has {terms} terms but the level-{level} design has only "
            f"{n_design} points (least squares with LOO errors needs more points than terms)",
        )
    grid = f"surrogate.level = {level} in {dim} dimensions: {n_design} design points"
    check_memory("the campaign's design", sparse_grid_bytes(dim, level), grid, b)
    sim = campaign.simulator
    check_benchmark_budget(sim.benchmark, sim.window, n_out, n_design, b)
    check_memory(
        "the campaign's surrogate fit",
        pce_fit_bytes(n_design, terms, n_out, dim),
        f"{grid} x {terms} terms of surrogate.order = {order}",
        b,
    )
    _check_sampling(campaign, n_out, b)


def _check_sampling(campaign: Campaign, n_out: int, b: Budget) -> None:
    c = campaign.calibration
    dim = campaign.parameters.dim
    joint_only = c.grouping == "joint"
    runs = 1 if joint_only else min(dim, n_out) + (1 if c.compare_joint else 0)
    keys = (
        f"calibration.ensembles = {c.ensembles} x walkers = {c.walkers} x max_steps = "
        f"{c.max_steps} x up to {runs} sampling run(s)"
    )
    chain_values = float(c.ensembles) * c.walkers * c.max_steps
    copies = CHAIN_COPIES + (1 if c.compare_joint and not joint_only else 0)
    check_memory(
        "the campaign's MCMC", F8 * chain_values * (dim + 1) * copies, f"chains of {keys}", b
    )
    draws = float(c.ensembles) * DRAWS_PER_CHAIN
    check_memory(
        "the campaign's posterior predictive",
        F8 * PREDICTIVE_COPIES * (c.predictive_draws + draws) * (n_out + dim),
        f"calibration.predictive_draws = {c.predictive_draws} prior draws and {draws:.0f} "
        f"posterior draws x {n_out} outputs",
        b,
    )
    evaluations = (
        chain_values * runs
        + float(c.ensembles) * c.walkers * INITIAL_OVERSAMPLE * runs
        + MAP_PRIOR_DRAWS
        + c.predictive_draws
        + draws * (1 + runs)
    )
    check_surrogate_evaluations(
        "the campaign's MCMC and predictive",
        evaluations,
        f"{keys}, plus calibration.predictive_draws = {c.predictive_draws}",
        b,
    )
