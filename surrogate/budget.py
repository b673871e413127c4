"""Resource budget: memory and work estimated from the settings and checked before allocating.

A setting inside its valid type can still ask for the impossible: a sparse grid of level 9
in 20 dimensions, a chaos of order 10 on 300,000 points, 10^12 predictive draws.  Every
such size is known in closed form before anything is built, so the layers estimate it
and compare it with one :class:`Budget`; a request over budget raises
:class:`~mpiuq.surrogate.errors.BudgetError` with the estimate and the limit in the
message, instead of hanging or ending in a ``MemoryError`` minutes later.

The limits (defaults; each overridable by an environment variable):

``memory_bytes``
    half of this machine's physical memory (``MPIUQ_MEMORY_LIMIT_GB``, in GiB);
``model_work``
    10^11 work units of a model evaluated over a design (``MPIUQ_MAX_MODEL_WORK``); the
    MPI simulator counts engine operations plus matching-queue scan steps, about
    10^11 in ten to twenty minutes on one core;
``surrogate_evaluations``
    10^9 surrogate evaluations at single points by the MCMC, MAP search and predictive
    draws (``MPIUQ_MAX_SURROGATE_EVALUATIONS``), about three hours for a
    330-term, 18-output chaos.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from mpiuq.surrogate.errors import BudgetError, SurrogateInputError

ENV_MEMORY_GB = "MPIUQ_MEMORY_LIMIT_GB"
ENV_MODEL_WORK = "MPIUQ_MAX_MODEL_WORK"
ENV_SURROGATE_EVALUATIONS = "MPIUQ_MAX_SURROGATE_EVALUATIONS"

#: Share of the physical memory the default budget allows.
DEFAULT_MEMORY_FRACTION = 0.5
DEFAULT_MODEL_WORK = 1e11
DEFAULT_SURROGATE_EVALUATIONS = 1e9

#: Bytes of a float64.
F8 = 8
#: Peak memory of chaospy's sparse-grid construction per node and dimension, bytes
#: (measured: 7-D level 7, 95,441 nodes, ~40 MB; a factor 3 of margin).
SPARSE_GRID_BYTES_PER_COORDINATE = 128


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits on what one command may allocate and compute.

    Attributes
    ----------
    memory_bytes
        Largest estimated peak memory, bytes.
    model_work
        Largest work of model evaluations over a design (model-defined units).
    surrogate_evaluations
        Largest number of surrogate evaluations at single points.
    memory_source
        Where ``memory_bytes`` comes from, for messages.
    """

    memory_bytes: float
    model_work: float
    surrogate_evaluations: float
    memory_source: str = ""


def machine_memory_bytes() -> int:
    """Physical memory of this machine in bytes (8 GiB if the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 8 << 30


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise SurrogateInputError(
            f"environment variable {name}={text!r} is invalid: expected a number > 0"
        )
    return value


def default_budget() -> Budget:
    """The budget of this machine, with the environment's overrides (read at each call)."""
    ram = machine_memory_bytes()
    if os.environ.get(ENV_MEMORY_GB, "").strip():
        memory = _env_number(ENV_MEMORY_GB, 0.0) * 2**30
        source = f"{ENV_MEMORY_GB}={os.environ[ENV_MEMORY_GB].strip()}"
    else:
        memory = DEFAULT_MEMORY_FRACTION * ram
        source = f"half of this machine's {format_bytes(ram)}; set {ENV_MEMORY_GB} to change it"
    return Budget(
        memory_bytes=memory,
        model_work=_env_number(ENV_MODEL_WORK, DEFAULT_MODEL_WORK),
        surrogate_evaluations=_env_number(ENV_SURROGATE_EVALUATIONS, DEFAULT_SURROGATE_EVALUATIONS),
        memory_source=source,
    )


def format_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KiB"`` (binary units)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:.3g} PiB"  # pragma: no cover - loop always returns


def check_memory(what: str, needed_bytes: float, detail: str, budget: Budget | None = None) -> None:
    """Raise :class:`BudgetError` if ``needed_bytes`` exceeds the memory budget.

    Parameters
    ----------
    what
        The request, e.g. ``"a level-9 sparse grid in 12 dimensions"``.
    needed_bytes
        Estimated peak memory, bytes.
    detail
        How the estimate was made or what to change, for the message.
    budget
        Default: :func:`default_budget`.
    """
    b = default_budget() if budget is None else budget
    if needed_bytes > b.memory_bytes:
        raise BudgetError(
            f"{what} needs about {format_bytes(needed_bytes)} of memory ({detail}), more "
            f"than the budget of {format_bytes(b.memory_bytes)} ({b.memory_source})",
            "memory",
            float(needed_bytes),
            float(b.memory_bytes),
        )


def check_model_work(what: str, needed: float, detail: str, budget: Budget | None = None) -> None:
    """Raise :class:`BudgetError` if ``needed`` model work units exceed the budget."""
    b = default_budget() if budget is None else budget
    if needed > b.model_work:
        raise BudgetError(
            f"{what} needs about {needed:.3g} units of model work ({detail}), more than the "
            f"budget of {b.model_work:.3g} (set {ENV_MODEL_WORK} to change it)",
            "model work",
            float(needed),
            float(b.model_work),
        )


def check_surrogate_evaluations(
    what: str, needed: float, detail: str, budget: Budget | None = None
) -> None:
    """Raise :class:`BudgetError` if ``needed`` surrogate evaluations exceed the budget."""
    b = default_budget() if budget is None else budget
    if needed > b.surrogate_evaluations:
        raise BudgetError(
            f"{what} needs up to {needed:.3g} surrogate evaluations ({detail}), more than the "
            f"budget of {b.surrogate_evaluations:.3g} (set {ENV_SURROGATE_EVALUATIONS} to "
            "change it)",
            "surrogate evaluations",
            float(needed),
            float(b.surrogate_evaluations),
        )


# --- closed-form sizes -----------------------------------------------------------------------


def sparse_grid_size(dim: int, level: int) -> int:
    """Number of nodes of the Clenshaw-Curtis Smolyak grid of :func:`sparse_grid_unit`.

    The nested 1-D rules have 1, 3, 5, 9, ... ``2^l + 1`` nodes, so level ``l`` adds
    ``1, 2, 2, 4, 8, ... 2^(l-1)`` new nodes; the sparse grid holds every product of new
    nodes whose levels sum to at most ``level``.

    Examples
    --------
    >>> sparse_grid_size(7, 4), sparse_grid_size(7, 3), sparse_grid_size(2, 1)
    (2465, 589, 5)
    """
    new = [1, 2] + [2 ** (lev - 1) for lev in range(2, level + 1)]
    counts = [1] + [0] * level  # counts[s]: nodes whose levels sum to exactly s
    for _ in range(dim):
        counts = [sum(counts[s - lev] * new[lev] for lev in range(s + 1)) for s in range(level + 1)]
    return sum(counts)


def sparse_grid_bytes(dim: int, level: int) -> float:
    """Estimated peak memory of building the sparse grid, bytes."""
    return float(sparse_grid_size(dim, level)) * dim * SPARSE_GRID_BYTES_PER_COORDINATE


def pce_fit_bytes(n_points: int, n_terms: int, n_outputs: int, dim: int) -> float:
    """Estimated peak memory of :func:`~mpiuq.surrogate.chaos.pce.fit_pce`, bytes.

    The design matrix and its scaled copy, the SVD factors (``U`` like the matrix, ``W``
    square in the terms), the basis workspace, the outputs and their residuals.
    """
    n, t = float(n_points), float(n_terms)
    return F8 * (5 * n * t + 2 * t * t + 6 * n * n_outputs) + 64.0 * t * dim
