"""Memory and work of a campaign or a benchmark run, estimated from its settings before it starts.

Every size a campaign builds is known in closed form from the campaign file: the sparse
grids' node counts, the chaos' term counts, the benchmark program's operations, the
samplers' chains, the simulator runs of refinement, exact posterior and predictive.  :func:`check_campaign_budget` compares each
stage with the :class:`~mpiuq.surrogate.budget.Budget` and refuses a campaign that
cannot finish (``ensembles = 2**31``, ``max_steps = 10**18``, ``predictive_draws =
10**12``, ``level = 8, order = 10``, ``window = 10**9``...) with the estimate and the
keys in the message; :func:`check_benchmark_budget` does the same for ``mpiuq simulate``.
The estimates are upper bounds of the peak of each stage, not exact figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpiuq.calibration.config import Campaign, discrepancy_terms
from mpiuq.calibration.config.dimensions import noise_dimension
from mpiuq.calibration.errors import CampaignError
from mpiuq.simulator.benchmarks.kinds import WINDOWED_BENCHMARKS
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
from mpiuq.surrogate.chaos.basis import n_terms

#: Memory of one engine operation while a benchmark program is built (Python tuples and
#: lists of the program builder; measured 360-1100 B), bytes.
BUILDER_BYTES_PER_OP = 1200
#: Memory of one operation of a built program (32-byte row, request slots, queues), bytes.
PROGRAM_BYTES_PER_OP = 64
#: Copies of the chains held at once while sampling: emcee's backend and its growth copy,
#: the stacked post-burn chains, the finished groups' samples.
CHAIN_COPIES = 4
#: Arrays of the exact posterior's and predictive's size held at once (draws, outputs,
#: log-likelihoods, noise, quantile copies).
PREDICTIVE_COPIES = 5
#: Initial walker positions are the best of this many prior draws per walker.
INITIAL_OVERSAMPLE = 10
#: Prior draws of the MAP search before sampling (``estimates.map_from_prior``).
MAP_PRIOR_DRAWS = 4000
#: Simulator parameter sets per start of the mode search, per parameter (L-BFGS-B, at most
#: 200 iterations with line searches, one finite-difference batch of dim + 1 each).
MODE_SEARCH_POINTS = 500


def benchmark_program_ops(benchmark: str, window: int) -> int:
    """Engine operations of a benchmark program (one warm-up and one timed repetition).

    Ping-pong: per repetition two blocking sends and two receives, each a post and a wait;
    stream: per repetition ``window`` nonblocking sends and receives, two waitalls and a
    blocking acknowledgement each way; bidirectional stream: ``window`` nonblocking sends
    and receives on each rank and four waitalls; plus the two timing marks.

    Examples
    --------
    >>> benchmark_program_ops("pingpong", 64), benchmark_program_ops("stream", 64)
    (18, 270)
    >>> benchmark_program_ops("bidirectional_stream", 64)
    522
    """
    if benchmark == "bidirectional_stream":
        return 2 * (4 * window + 4) + 2
    per_repetition = 8 if benchmark == "pingpong" else 2 * window + 6
    return 2 * per_repetition + 2


def benchmark_work(benchmark: str, window: int) -> int:
    """Work units of one run of a benchmark program for one parameter set and size.

    The operations plus an allowance for searching the matching queues, which hold up
    to ``window`` messages of the stream benchmark (quadratic in the window: measured
    0.14 s at a window of 1,000 and 73 s at 100,000).
    """
    ops = benchmark_program_ops(benchmark, window)
    return ops + (window * window if benchmark in WINDOWED_BENCHMARKS else 0)


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
    """Most outputs the campaign can have: over its data tables, the explicit sizes, or
    ``sizes_per_protocol`` sizes in every protocol regime."""
    n_regimes = len(campaign.simulator.thresholds()) + 1
    total = 0
    for d in campaign.fitted_tables:
        if d.sizes is not None:
            total += len(d.sizes)
        else:
            total += n_regimes * (d.sizes_per_protocol or 1)
    return total


@dataclass(frozen=True, slots=True)
class CampaignCost:
    """Upper bounds of what a campaign computes, from its settings alone.

    Attributes
    ----------
    n_design, n_terms
        Global design points and chaos terms.
    n_local, n_local_terms
        Points and terms of a refinement round's local design and chaos.
    variants
        Likelihood variants made exact (2 when a discrepancy model is compared).
    grouped_runs
        Sampler runs of the grouped MCMC (at most one group per parameter).
    simulator_points
        Parameter sets the simulator evaluates (design, refinement rounds and their error
        checks, importance weights, resample-move steps, predictive draws, mode search).
    surrogate_points
        Surrogate evaluations (grouped and refinement MCMC, starts, proposal weights).
    chain_values
        Values of the largest sampler run's chains (ensembles x walkers x steps).
    """

    dim: int
    n_outputs: int
    n_design: int
    n_terms: int
    n_local: int
    n_local_terms: int
    variants: int
    grouped_runs: int
    simulator_points: float
    surrogate_points: float
    chain_values: float


def campaign_cost(campaign: Campaign) -> CampaignCost:
    """Closed-form upper bounds of a campaign's sizes and evaluation counts.

    The pipeline of :func:`~mpiuq.calibration.pipeline.campaign.run_campaign`: a global design and
    chaos; grouped MCMC on it (at most one group per parameter); per variant, refinement
    rounds (a local design, a joint MCMC, simulator error checks), importance weights of
    the proposal draws, resample-move steps and the predictive on the simulator; a
    multi-start mode search on the simulator.
    """
    c, r, e = campaign.calibration, campaign.refinement, campaign.exact
    dim = campaign.parameters.dim
    n_out = max_outputs(campaign)
    disc = campaign.discrepancy
    dim_disc = discrepancy_terms(campaign)
    dim_all = dim + dim_disc + noise_dimension([t.likelihood for t in campaign.fitted_tables])
    variants = 2 if dim_disc and disc.compare else 1
    level = r.level if r.level is not None else campaign.surrogate.level
    order = r.order if r.order is not None else campaign.surrogate.order
    n_design = sparse_grid_size(dim, campaign.surrogate.level)
    n_local = sparse_grid_size(dim, level) + r.rounds * r.error_draws
    rounds = max(r.rounds, 1)
    grouped_runs = 1 if c.grouping == "joint" else min(dim_all, n_out)
    walkers_steps = float(c.ensembles) * c.walkers
    chain_values = walkers_steps * c.max_steps
    refine_values = walkers_steps * min(c.max_steps, r.max_steps)
    per_variant_sim = (
        r.rounds * sparse_grid_size(dim, level)
        + rounds * r.error_draws
        + e.proposal_draws
        + float(e.draws) * e.move_steps
        + c.predictive_draws
    )
    simulator_points = (
        n_design + variants * per_variant_sim + e.map_starts * MODE_SEARCH_POINTS * (dim_all + 1)
    )
    surrogate_points = (
        chain_values * grouped_runs
        + variants * rounds * refine_values
        + walkers_steps * INITIAL_OVERSAMPLE * (grouped_runs + variants * rounds)
        + MAP_PRIOR_DRAWS
        + variants * e.proposal_draws
    )
    return CampaignCost(
        dim=dim_all,
        n_outputs=n_out,
        n_design=n_design,
        n_terms=n_terms(dim, campaign.surrogate.order),
        n_local=n_local,
        n_local_terms=n_terms(dim, order),
        variants=variants,
        grouped_runs=grouped_runs,
        simulator_points=float(simulator_points),
        surrogate_points=float(surrogate_points),
        chain_values=chain_values,
    )


def check_campaign_budget(campaign: Campaign, budget: Budget | None = None) -> None:
    """Check a campaign's design, surrogates, sampling, exact posterior and predictive.

    Raises
    ------
    CampaignError
        If the surrogate order needs more terms than the design has points, or the
        walkers are too few for the parameters and discrepancy terms sampled together.
    BudgetError
        If a stage needs more memory or work than the budget (the message names the
        stage, the keys behind the estimate and the limit).
    """
    b = default_budget() if budget is None else budget
    dim = campaign.parameters.dim
    level, order = campaign.surrogate.level, campaign.surrogate.order
    cost = campaign_cost(campaign)
    if cost.n_design <= cost.n_terms:
        fit = max((k for k in range(order) if n_terms(dim, k) < cost.n_design), default=0)
        raise CampaignError(
            "surrogate.order",
            order,
            f"at most {fit} for surrogate.level = {level}: a total-order-{order} chaos in "
            f"{dim} dimensions has {cost.n_terms} terms but the level-{level} design has only "
            f"{cost.n_design} points (least squares with LOO errors needs more points than terms)",
        )
    walkers = campaign.calibration.walkers
    if walkers < 2 * cost.dim:
        raise CampaignError(
            "calibration.walkers",
            walkers,
            f">= 2 x (parameters + discrepancy and noise terms) = 2 x ({dim} + "
            f"{cost.dim - dim}) = {2 * cost.dim} (the ensembles sample the discrepancy and "
            f"noise terms too; leave it out for the default max(32, 2 x {cost.dim} + 2))",
        )
    grid = f"surrogate.level = {level} in {dim} dimensions: {cost.n_design} design points"
    check_memory("the campaign's design", sparse_grid_bytes(dim, level), grid, b)
    check_memory(
        "the campaign's surrogate fit",
        pce_fit_bytes(cost.n_design, cost.n_terms, cost.n_outputs, dim),
        f"{grid} x {cost.n_terms} terms of surrogate.order = {order}",
        b,
    )
    check_memory(
        "the campaign's local surrogates",
        pce_fit_bytes(cost.n_local, cost.n_local_terms, cost.n_outputs, dim),
        f"{cost.n_local} points (refinement level and error_draws) x {cost.n_local_terms} terms",
        b,
    )
    sim = campaign.simulator
    if sim.external is not None:  # the user's simulator: its runs are budgeted by count
        from mpiuq.calibration.pipeline.run_plan import check_run_plan

        check_run_plan(campaign)
        _check_sampling(campaign, cost, b)
        return
    per_set = 0.0
    # the simulator's benchmark and every data table's model, at every output
    for model, window in [
        (sim.benchmark, sim.window),
        *((d.model, d.window) for d in campaign.datasets),
    ]:
        check_benchmark_budget(model, window, cost.n_outputs, 1, b)
        per_set = max(per_set, float(benchmark_work(model, window)))
    work = cost.simulator_points * cost.n_outputs * per_set
    check_model_work(
        "the campaign's simulator runs",
        work,
        f"up to {cost.simulator_points:.3g} parameter sets (design, refinement, exact.draws x "
        f"exact.move_steps, calibration.predictive_draws...) x {cost.n_outputs} sizes",
        b,
    )
    _check_sampling(campaign, cost, b)


def _check_sampling(campaign: Campaign, cost: CampaignCost, b: Budget) -> None:
    c, e = campaign.calibration, campaign.exact
    keys = (
        f"calibration.ensembles = {c.ensembles} x walkers = {c.walkers} x max_steps = {c.max_steps}"
    )
    check_memory(
        "the campaign's MCMC",
        F8 * cost.chain_values * (cost.dim + 1) * CHAIN_COPIES,
        f"chains of {keys}",
        b,
    )
    rows = float(c.predictive_draws) + e.draws + e.proposal_draws
    check_memory(
        "the campaign's exact posterior and predictive",
        F8 * PREDICTIVE_COPIES * rows * (cost.n_outputs + cost.dim),
        f"calibration.predictive_draws = {c.predictive_draws}, exact.draws = {e.draws}, "
        f"exact.proposal_draws = {e.proposal_draws} x {cost.n_outputs} outputs",
        b,
    )
    check_surrogate_evaluations(
        "the campaign's MCMC",
        cost.surrogate_points,
        f"{keys} x up to {cost.grouped_runs} sampling runs, plus the refinement rounds",
        b,
    )
