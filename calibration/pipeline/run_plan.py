"""How a campaign around an external simulator spends ``max_simulator_runs``.

Every run of a user's simulator is counted; the stages share the budget in this order:

1. **design**: the global sparse grid (``[surrogate] level``);
2. **refinement**: per round of ``[refinement]``, a local sparse grid (its ``level``) and
   ``error_draws`` checks of the surrogate at posterior draws (with ``rounds = 0``, one
   check);
3. **exact**: the simulator's likelihood at ``[exact] proposal_draws`` draws of the
   surrogate posterior (importance weights);
4. **comparison** (``[discrepancy] compare`` with a discrepancy model): the same check and
   importance weights for the model without discrepancy;
5. **moves**: whatever is left pays for resample-move steps on the simulator's posterior
   (``[exact] draws`` runs per step, at most ``move_steps`` steps).

With ``[posterior] sampler = "direct"`` the design is followed by MCMC on the simulator
itself instead of stages 2-5: every proposal is a run, so the plan counts the runs up to
the sampler's first convergence check (``walkers x populations x (burn + steps)``, per
model sampled); the runs after it are counted as they happen
(:class:`~mpiuq.calibration.errors.RunBudgetError` when the budget runs out).

Stages 1-4 must fit: :func:`check_run_plan` refuses a campaign whose budget cannot pay for
them before anything runs, with the breakdown in the message. Refinement rounds that stop
early leave their runs to the moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpiuq.calibration.config import Campaign, discrepancy_terms
from mpiuq.calibration.errors import CampaignError
from mpiuq.surrogate.budget import sparse_grid_size


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Simulator runs of every stage but the moves (upper bounds).

    Attributes
    ----------
    design
        Points of the global design.
    round_design, round_check
        Local design points and surrogate checks of one refinement round.
    rounds
        Refinement rounds (0: one check of the global surrogate).
    importance
        Surrogate posterior draws weighted by the simulator (main model).
    compare
        Runs of the comparison model (check and importance weights; 0 without).
    direct
        Runs of the direct sampler up to its first convergence check, all models sampled
        (0 on the surrogate path; then refinement, importance and comparison are 0).
    budget
        ``max_simulator_runs`` (None: no limit).
    """

    design: int
    round_design: int
    round_check: int
    rounds: int
    importance: int
    compare: int
    budget: int | None
    direct: int = 0

    @property
    def refinement(self) -> int:
        """Runs of all refinement rounds."""
        if self.rounds == 0:
            return self.round_check
        return self.rounds * (self.round_design + self.round_check)

    @property
    def required(self) -> int:
        """Runs of the design, refinement, importance weights and comparison (or of the
        direct sampler's first convergence check)."""
        if self.direct:
            return self.design + self.direct
        return self.design + self.refinement + self.importance + self.compare

    def describe(self) -> str:
        """The breakdown, for messages."""
        if self.direct:
            return f"design {self.design} + direct sampler {self.direct} = {self.required}"
        rounds = (
            f"refinement check {self.round_check}"
            if self.rounds == 0
            else f"refinement {self.rounds} x ({self.round_design} + {self.round_check})"
        )
        text = f"design {self.design} + {rounds} + importance {self.importance}"
        if self.compare:
            text += f" + comparison {self.compare}"
        return f"{text} = {self.required}"


def run_plan(campaign: Campaign) -> RunPlan:
    """The run plan of a campaign from its settings alone."""
    dim = campaign.parameters.dim
    r, e = campaign.refinement, campaign.exact
    ext = campaign.simulator.external
    level = r.level if r.level is not None else campaign.surrogate.level
    compare = campaign.discrepancy.model != "none" and campaign.discrepancy.compare
    if campaign.posterior.sampler == "direct":
        p = campaign.posterior
        first_check = p.walkers * p.populations * (p.burn + p.steps)
        return RunPlan(
            design=sparse_grid_size(dim, campaign.surrogate.level),
            round_design=0,
            round_check=0,
            rounds=0,
            importance=0,
            compare=0,
            budget=ext.max_simulator_runs if ext is not None else None,
            direct=first_check * (2 if compare else 1),
        )
    return RunPlan(
        design=sparse_grid_size(dim, campaign.surrogate.level),
        round_design=sparse_grid_size(dim, level),
        round_check=r.error_draws,
        rounds=r.rounds,
        importance=e.proposal_draws,
        compare=(r.error_draws + e.proposal_draws) if compare else 0,
        budget=ext.max_simulator_runs if ext is not None else None,
    )


def check_run_plan(campaign: Campaign) -> None:
    """Refuse a campaign whose run budget cannot pay for its stages (moves excepted).

    Raises
    ------
    CampaignError
        Naming ``simulator.max_simulator_runs``, the breakdown and the keys to change.
    """
    from mpiuq.calibration.errors import SamplerError
    from mpiuq.calibration.sampling.exact import MOVE_POPULATIONS
    from mpiuq.calibration.sampling.population import check_population

    dim = campaign.parameters.dim + discrepancy_terms(campaign)
    try:  # the resample-move populations of the exact stage, checked before any run
        check_population(campaign.exact.draws // MOVE_POPULATIONS, dim)
    except SamplerError as exc:
        raise CampaignError(
            "exact.draws",
            campaign.exact.draws,
            f"{MOVE_POPULATIONS} resample-move populations large enough ({exc})",
        ) from None
    plan = run_plan(campaign)
    if plan.budget is not None and plan.required > plan.budget:
        raise CampaignError(
            "simulator.max_simulator_runs",
            plan.budget,
            f"at least {plan.required} runs for {plan.describe()} ("
            + (
                "lower posterior.walkers, populations, burn or steps, or set "
                "posterior.sampler = 'surrogate'"
                if plan.direct
                else "lower surrogate.level, refinement.level, refinement.rounds, "
                "refinement.error_draws or exact.proposal_draws, or set "
                "discrepancy.compare = false"
            )
            + ")",
        )
