"""The refined surrogate posterior: the proposal that the simulator then corrects.

:func:`refined_proposal` runs the rounds of :mod:`~mpiuq.calibration.sampling.refinement` (local
box, local design, local chaos, joint MCMC on it, simulator check at fresh posterior
draws) and returns the last round's surrogate, its posterior draws and the check.
Without a model (a fixed design), the global surrogate's joint posterior is the answer
and its error is only known through LOO.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.sampling.grouping import joint_grouping
from mpiuq.calibration.sampling.posterior import Posterior, Problem, sample_posterior
from mpiuq.calibration.sampling.refinement import (
    SurrogateCheck,
    local_box,
    local_design,
    pressed_faces,
    surrogate_check,
)
from mpiuq.calibration.sampling.sampler import SamplerProgress, SamplerSettings
from mpiuq.surrogate.chaos.pce import PolynomialChaos, fit_pce
from mpiuq.surrogate.design.box import ParameterBox

FloatArray = npt.NDArray[np.float64]
BatchModel = Callable[[FloatArray], FloatArray]


@dataclass(frozen=True, slots=True)
class RefinementRound:
    """One round: its box, design size, and the surrogate check at its posterior draws."""

    lower: FloatArray
    upper: FloatArray
    n_design: int
    check: SurrogateCheck
    pressed: tuple[str, ...]
    converged: bool


@dataclass(frozen=True, slots=True)
class Proposal:
    """The final surrogate posterior (joint) and how the surrogate compares at it.

    Attributes
    ----------
    problem
        The likelihood problem of the final surrogate (prior box = the local box for the
        model parameters).
    surrogate
        The final (local) chaos.
    posterior
        Its joint posterior samples.
    check
        Surrogate vs simulator at the final posterior's draws (LOO-based without a model).
    rounds
        The refinement rounds (empty without refinement).
    checked_by
        ``"simulator"`` or ``"loo"`` (no model to call).
    """

    problem: Problem
    surrogate: PolynomialChaos
    posterior: Posterior
    check: SurrogateCheck
    rounds: tuple[RefinementRound, ...]
    checked_by: str

    @property
    def draws(self) -> FloatArray:
        """Flat posterior draws, shape (n, dim)."""
        d = self.posterior.draws
        return d.reshape(-1, d.shape[-1])


def evenly(x: FloatArray, n: int) -> FloatArray:
    """At most ``n`` rows of ``x``, evenly spaced."""
    if x.shape[0] <= n:
        return x
    return x[np.linspace(0, x.shape[0] - 1, n).round().astype(int)]


def with_surrogate(problem: Problem, pce: PolynomialChaos) -> Problem:
    """``problem`` on the chaos ``pce``: its box as the model parameters' prior, its LOO error."""
    nm = problem.n_model
    lower = problem.lower.copy()
    upper = problem.upper.copy()
    lower[:nm], upper[:nm] = pce.box.lower, pce.box.upper
    nominal = np.clip(problem.nominal, lower, upper)
    return replace(
        problem,
        predictor=pce,
        lower=lower,
        upper=upper,
        nominal=nominal,
        loo_rmse=np.asarray(pce.loo_rmse, dtype=np.float64),
    )


def _unrefined(
    problem: Problem,
    surrogate: PolynomialChaos,
    post: Posterior,
    model: BatchModel | None,
    error_draws: int,
    data_sd: FloatArray,
) -> Proposal:
    """The proposal without refinement rounds: the surrogate's posterior, its error
    checked on the simulator at ``error_draws`` posterior draws (its LOO error without a
    model)."""
    if model is None:
        loo = np.asarray(surrogate.loo_rmse, dtype=np.float64)
        check = surrogate_check(np.zeros((1, loo.size)), loo[None, :], data_sd)
        return Proposal(problem, surrogate, post, check, (), "loo")
    flat = post.draws.reshape(-1, post.draws.shape[-1])
    pick = evenly(flat, error_draws)[:, : problem.n_model]
    check = surrogate_check(surrogate.predict(pick), model(pick), data_sd)
    return Proposal(problem, surrogate, post, check, (), "simulator")


def refined_proposal(
    problem: Problem,
    global_surrogate: PolynomialChaos,
    start_draws: FloatArray,
    model: BatchModel | None,
    settings: SamplerSettings,
    seed: np.random.SeedSequence,
    rounds: int,
    level: int,
    order: int,
    pad: float,
    target_error_sd: float,
    error_draws: int,
    on_progress: Callable[[int, SamplerProgress], None] | None = None,
    box_given: bool = False,
) -> Proposal:
    """Refine the surrogate around the posterior and sample the final joint posterior.

    Parameters
    ----------
    problem
        Likelihood problem over the whole prior (the global surrogate as predictor).
    global_surrogate
        The chaos over the prior box.
    start_draws
        Posterior draws (full vectors) that place the first local box (e.g. the grouped
        posterior's).
    model
        Batch model ``f(X) -> Y`` over the model parameters, or None for a fixed design.
    settings, seed
        Sampler settings; one child seed per round.
    rounds, level, order, pad, target_error_sd, error_draws
        The ``[refinement]`` table.
    on_progress
        Receives ``(round, progress)`` of every sampling block.
    box_given
        With ``rounds = 0``: sample on ``global_surrogate`` within its own box (a local
        chaos from an earlier refinement) rather than over ``problem``'s prior.
    """
    nm = problem.n_model
    data_sd = np.sqrt(problem.data_var)
    children = seed.spawn(max(rounds, 1))
    joint = joint_grouping(problem.data_mean.size, len(problem.names))

    def sample(p: Problem, k: int) -> Posterior:
        def report(_g: int, prog: SamplerProgress) -> None:
            if on_progress is not None:
                on_progress(k, prog)

        return sample_posterior(p, joint, settings, children[k], on_progress=report)

    if model is None or rounds == 0:
        p0 = with_surrogate(problem, global_surrogate) if box_given else problem
        return _unrefined(p0, global_surrogate, sample(p0, 0), model, error_draws, data_sd)

    prior_lo, prior_hi = problem.lower[:nm], problem.upper[:nm]
    names = problem.model_names
    draws = np.atleast_2d(start_draws)[:, :nm]
    widen: npt.NDArray[np.bool_] | None = None
    seen_x = np.empty((0, nm))
    seen_y = np.empty((0, problem.data_mean.size))
    history: list[RefinementRound] = []
    result: Proposal | None = None
    pressed_before = False
    for k in range(rounds):
        lo, hi = local_box(draws, prior_lo, prior_hi, pad, widen)
        box = ParameterBox(names, lo, hi)
        grid = local_design(box, level)
        inside = np.asarray(box.contains(seen_x), dtype=bool) if seen_x.size else np.zeros(0, bool)
        x = np.concatenate([grid, seen_x[inside]])
        y = np.concatenate([np.asarray(model(grid), dtype=np.float64), seen_y[inside]])
        pce = fit_pce(x, y, box, order, output_names=global_surrogate.output_names)
        pk = with_surrogate(problem, pce)
        post = sample(pk, k)
        flat = post.draws.reshape(-1, post.draws.shape[-1])
        pick = evenly(flat, error_draws)[:, :nm]
        y_sim = np.asarray(model(pick), dtype=np.float64)
        check = surrogate_check(pce.predict(pick), y_sim, data_sd)
        seen_x = np.concatenate([seen_x, pick])
        seen_y = np.concatenate([seen_y, y_sim])
        widen = pressed_faces(flat[:, :nm], lo, hi, prior_lo, prior_hi)
        pressed = tuple(names[j] for j in range(nm) if widen[j].any())
        history.append(RefinementRound(lo, hi, x.shape[0], check, pressed, post.converged))
        # the proposal is the round whose surrogate the simulator found best at its own
        # posterior draws (a later round can be worse: a box around a wider posterior)
        if result is None or check.worst_sd < result.check.worst_sd or pressed_before:
            result = Proposal(pk, pce, post, check, (), "simulator")
        pressed_before = bool(pressed)
        if check.worst_sd <= target_error_sd and not pressed:
            break
        draws = flat[:, :nm]
    if result is None:  # pragma: no cover - rounds >= 1 here
        raise SamplerError(f"refinement rounds={rounds} is invalid: expected >= 1")
    return replace(result, rounds=tuple(history))
