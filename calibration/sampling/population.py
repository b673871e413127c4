"""Differential-evolution MCMC of several independent populations, one batch per half-step.

Why not emcee itself. emcee's ``EnsembleSampler`` (``vectorize=True``) calls the
log-density once per half-ensemble and move, one ensemble at a time. The benchmark
simulator costs about 1 ms per call plus 0.06 ms per parameter set, so four independent
ensembles of 32 walkers would pay the call overhead eight times per step for 16 points
each. Here the same moves run for all populations at once, so one simulator batch carries
every population's proposals (all walkers of one half of every population), and the
populations stay independent: a walker's proposal uses only walkers of its own
population. The moves are those of emcee's ``DEMove`` and ter Braak & Vrugt's snooker
update:

* **differential evolution** (ter Braak 2006): ``x' = x + g (x_a - x_b)`` with ``a != b``
  two walkers of the other half of the same population, ``g = 2.38 / sqrt(2 d)`` with a
  1e-5 relative jitter (as emcee), and ``g = 1`` for 10% of the proposals (jumps between
  modes);
* **snooker** (ter Braak & Vrugt 2008, eq. 4): ``x' = x + g (P z_1 - P z_2)`` along the line
  from a third walker ``z`` through ``x`` (``P``: orthogonal projection on that line,
  ``g ~ U(1.2, 2.2)``), accepted with the factor ``(|x' - z| / |x - z|)^(d - 1)``.

The red-blue scheme (Goodman & Weare 2010; emcee) makes each half-step a valid Metropolis
kernel: walkers of one half move with proposals built from the other half, which is held
fixed; the split is redrawn every step. A proposal never uses the walker itself, and a pair
``(a, b)`` or triple ``(z, z_1, z_2)`` never repeats a walker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import SamplerError
from mpiuq.calibration.sampling.sampler import ChainDiagnostics, diagnose

FloatArray = npt.NDArray[np.float64]
#: Batch log-density: (n, dim) -> (n,); ``-inf`` outside the support, NaN where the model
#: failed (counted, never accepted).
LogDensity = Callable[[FloatArray], FloatArray]
#: Batch log-density of proposals that carry values drawn with them: (n, dim) ->
#: (log-density (n,), carried values (n, a)). The carried values (e.g. the discrepancy
#: spreads drawn from their conditional, :mod:`~mpiuq.calibration.sampling.spreads`) move with
#: their walker when the proposal is accepted and are stored in the chain after the
#: positions; proposals are built from the positions only.
AugmentedDensity = Callable[[FloatArray], tuple[FloatArray, FloatArray]]


def evaluate(
    log_density: LogDensity | AugmentedDensity, x: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Log-density and carried values (none, shape (n, 0), for a plain log-density)."""
    out = log_density(x)
    if isinstance(out, tuple):
        lp, aux = out
        return np.asarray(lp, dtype=np.float64), np.asarray(aux, dtype=np.float64)
    return np.asarray(out, dtype=np.float64), np.zeros((x.shape[0], 0))


#: Fraction of proposals that are differential-evolution jumps with ``g = 1``.
MODE_JUMP_FRACTION = 0.1


@dataclass(frozen=True, slots=True)
class PopulationSettings:
    """Settings of :func:`run_populations`.

    Attributes
    ----------
    walkers
        Walkers per population (even, >= 2 * dim and >= 6).
    populations
        Independent populations (>= 2): the chains of R-hat.
    burn
        Least number of steps discarded from every population; at every convergence check
        the first half of the steps run so far is discarded if that is more (warm-up = half
        the run, as in Stan and Gelman et al.), so a slow transient from the start positions
        never stays in the draws.
    steps
        Steps between convergence checks.
    max_steps
        Step cap, burn included.
    target_rhat, target_ess
        Convergence: max R-hat <= target_rhat and min(bulk, tail ESS) >= target_ess.
    snooker
        Fraction of snooker proposals (the rest are differential evolution).
    """

    walkers: int = 32
    populations: int = 4
    burn: int = 200
    steps: int = 250
    max_steps: int = 6000
    target_rhat: float = 1.01
    target_ess: float = 1000.0
    snooker: float = 0.1


def check_population(walkers: int, dim: int) -> None:
    """Refuse a population too small for differential evolution in ``dim`` dimensions.

    Each half of a population must span the space (``walkers >= 2 * dim``) and offer three
    distinct walkers to the snooker update (``walkers >= 6``); red-blue halves need an even
    count.

    Raises
    ------
    SamplerError
        With the population size, the dimension and what was expected.

    Examples
    --------
    >>> check_population(4, 10)
    Traceback (most recent call last):
    ...
    mpiuq.calibration.errors.SamplerError: a population of 4 walkers is too small for 10 parameters: expected an even number >= 20 (2 per parameter, and at least 6)
    """
    need = max(2 * dim, 6)
    if walkers < need or walkers % 2:
        raise SamplerError(
            f"a population of {walkers} walkers is too small for {dim} parameters: expected "
            f"an even number >= {need + need % 2} (2 per parameter, and at least 6)"
        )


@dataclass(frozen=True, slots=True)
class PopulationRun:
    """State after a block of steps.

    Attributes
    ----------
    chain
        Post-burn positions, shape (populations, n_steps, walkers, dim + a), the ``a``
        carried values of an :data:`AugmentedDensity` after the ``dim`` positions.
    log_density
        Their log-densities, shape (populations, n_steps, walkers).
    diagnostics
        R-hat across populations, bulk/tail ESS per parameter (:func:`~.sampler.diagnose`).
    steps_done
        Steps run, burn included.
    burn
        Steps discarded (the larger of ``settings.burn`` and half of ``steps_done``).
    evaluations
        Log-density evaluations so far (start positions included).
    nonfinite
        Evaluations inside the support that returned NaN or +inf (model failures).
    done
        Converged or at the step cap.
    """

    chain: FloatArray
    log_density: FloatArray
    diagnostics: ChainDiagnostics
    steps_done: int
    burn: int
    evaluations: int
    nonfinite: int
    done: bool

    def draw_rows(self, n: int) -> npt.NDArray[np.int64]:
        """Rows of ``chain.reshape(-1, ...)`` for ``n`` posterior draws (all rows if fewer).

        See :func:`spread_rows`: every walker of every population contributes in turn, at
        evenly spaced steps, so the draws are as independent as the chain allows.
        """
        populations, steps, walkers = self.chain.shape[:3]
        return spread_rows(populations, steps, walkers, n)


def spread_rows(populations: int, steps: int, walkers: int, n: int) -> npt.NDArray[np.int64]:
    """Flat row indices of ``n`` draws from a chain of shape (populations, steps, walkers).

    Draw ``j`` sits at step ``floor((j + 1/2) steps / n)`` of chain ``j mod (populations
    walkers)``: the steps are evenly spaced and the walkers taken in rotation, so one walker
    is revisited only every ``populations * walkers`` draws (``populations * walkers *
    steps / n`` steps apart). Evenly spaced rows of the flattened chain would instead
    follow the few walkers the spacing lands on (a spacing of a whole number of steps
    picks one walker per population): far fewer independent draws than the chain's ESS.
    """
    total = populations * steps * walkers
    if n >= total:
        return np.arange(total, dtype=np.int64)
    j = np.arange(n, dtype=np.int64)
    step = ((2 * j + 1) * steps) // (2 * n)
    population, walker = np.divmod(j % (populations * walkers), walkers)
    return (population * steps + step) * walkers + walker


def _distinct(
    rng: np.random.Generator, m: int, shape: tuple[int, ...], k: int
) -> list[npt.NDArray[np.int64]]:
    """``k`` index arrays in ``[0, m)`` that differ pairwise element by element (k <= 3)."""
    first = rng.integers(0, m, size=shape)
    out = [first]
    if k >= 2:
        out.append((first + 1 + rng.integers(0, m - 1, size=shape)) % m)
    if k >= 3:
        # the third avoids both: draw among the m - 2 others in cyclic order after `first`
        lo, hi = np.minimum(out[0], out[1]), np.maximum(out[0], out[1])
        r = rng.integers(0, m - 2, size=shape)
        third = r + (r >= lo)
        third = third + (third >= hi)
        out.append(third)
    return out


def propose(
    own: FloatArray, other: FloatArray, snooker: float, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Proposals for walkers ``own`` (P, m1, d) from ``other`` (P, m2, d) of the same
    population, and the log proposal factors (snooker Jacobian; 0 for DE)."""
    p, m1, d = own.shape
    m2 = other.shape[1]
    pop = np.arange(p)[:, None]
    a, b, c = _distinct(rng, m2, (p, m1), 3)
    xa, xb, xz = other[pop, a], other[pop, b], other[pop, c]
    g = 2.38 / math.sqrt(2.0 * d) * (1.0 + 1e-5 * rng.standard_normal((p, m1)))
    g = np.where(rng.random((p, m1)) < MODE_JUMP_FRACTION, 1.0, g)
    de = own + g[..., None] * (xa - xb)
    # snooker: z = xz, z1 = xa, z2 = xb (three distinct walkers of the other half)
    delta = own - xz
    norm = np.linalg.norm(delta, axis=-1)
    e = delta / np.maximum(norm, 1e-300)[..., None]
    proj = np.sum(e * (xa - xb), axis=-1)
    gs = rng.uniform(1.2, 2.2, size=(p, m1))
    sn = own + (gs * proj)[..., None] * e
    new_norm = np.linalg.norm(sn - xz, axis=-1)
    with np.errstate(divide="ignore"):
        factor = (d - 1) * (np.log(new_norm) - np.log(np.maximum(norm, 1e-300)))
    use_sn = (rng.random((p, m1)) < snooker) & (norm > 0)
    prop = np.where(use_sn[..., None], sn, de)
    return prop, np.where(use_sn, factor, 0.0)


def iter_populations(
    log_density: LogDensity | AugmentedDensity,
    start: npt.ArrayLike,
    settings: PopulationSettings,
    rng: np.random.Generator,
) -> Iterator[PopulationRun]:
    """Run the populations in blocks until converged or at the step cap.

    Parameters
    ----------
    log_density
        Batch log-density (n, dim) -> (n,), or an :data:`AugmentedDensity`.
    start
        Start positions, shape (populations, walkers, dim), all of finite log-density.
    settings
        Population sizes, blocks, caps and targets.
    rng
        All randomness (splits, proposals, acceptance).

    Yields
    ------
    PopulationRun
        After each block; the last one has ``done=True``.

    Raises
    ------
    SamplerError
        If a population is too small for the dimension (:func:`check_population`), there
        are fewer than two populations, the block settings are inconsistent, or a start
        position has no finite log-density.
    """
    s = settings
    x = np.array(start, dtype=np.float64)
    if x.ndim != 3:
        raise SamplerError(
            f"start of shape {x.shape} is invalid: expected (populations, walkers, dim)"
        )
    p, w, d = x.shape
    check_population(w, d)
    if p < 2:
        raise SamplerError(f"populations={p} is invalid: expected >= 2 (R-hat across populations)")
    if s.steps < 1 or s.burn < 0 or s.max_steps < s.burn + s.steps:
        raise SamplerError(
            f"steps={s.steps}, burn={s.burn}, max_steps={s.max_steps} are invalid: expected "
            "steps >= 1, burn >= 0, max_steps >= burn + steps"
        )
    lp_flat, aux_flat = evaluate(log_density, x.reshape(-1, d))
    lp = lp_flat.reshape(p, w)
    aux = aux_flat.reshape(p, w, -1)
    evaluations = p * w
    if not np.all(np.isfinite(lp)):
        bad = int(np.sum(~np.isfinite(lp)))
        raise SamplerError(
            f"{bad} of {p * w} start positions have a non-finite log-density: expected all "
            "finite (start from posterior draws inside the support)"
        )
    nonfinite = 0
    chain = np.empty((p, s.max_steps, w, d + aux.shape[-1]))
    logs = np.empty((p, s.max_steps, w))
    accepted = np.zeros(p)
    step = 0
    while True:
        block = s.burn + s.steps if step == 0 else min(s.steps, s.max_steps - step)
        for _ in range(block):
            split = rng.permutation(w)
            halves = (split[: w // 2], split[w // 2 :])
            for own_i, other_i in (halves, halves[::-1]):
                own = x[:, own_i]
                prop, factor = propose(own, x[:, other_i], s.snooker, rng)
                new_flat, new_aux = evaluate(log_density, prop.reshape(-1, d))
                new = new_flat.reshape(p, own_i.size)
                evaluations += new.size
                failed = np.isnan(new) | (new == np.inf)
                nonfinite += int(failed.sum())
                new = np.where(failed, -np.inf, new)
                log_u = np.log(rng.random(new.shape))
                with np.errstate(invalid="ignore"):
                    accept = log_u < new - lp[:, own_i] + factor
                rows, cols = np.nonzero(accept)
                x[rows, own_i[cols]] = prop[rows, cols]
                lp[rows, own_i[cols]] = new[rows, cols]
                aux[rows, own_i[cols]] = new_aux.reshape(p, own_i.size, -1)[rows, cols]
                accepted += accept.sum(axis=1)
            chain[:, step, :, :d] = x
            chain[:, step, :, d:] = aux
            logs[:, step] = lp
            step += 1
        burn = max(s.burn, step // 2)
        post = chain[:, burn:step]
        acc = accepted / (step * w)
        diag = diagnose(post, acc, s.target_rhat, s.target_ess)
        done = diag.converged or step >= s.max_steps
        yield PopulationRun(
            post, logs[:, burn:step], diag, step, burn, evaluations, nonfinite, done
        )
        if done:
            return


def run_populations(
    log_density: LogDensity | AugmentedDensity,
    start: npt.ArrayLike,
    settings: PopulationSettings,
    rng: np.random.Generator,
    on_block: Callable[[PopulationRun], None] | None = None,
) -> PopulationRun:
    """Drive :func:`iter_populations` to the end and return the last state."""
    last: PopulationRun | None = None
    for run in iter_populations(log_density, start, settings, rng):
        if on_block is not None:
            on_block(run)
        last = run
    if last is None:  # pragma: no cover - the generator always yields
        raise SamplerError("the population sampler produced no samples")
    return last
