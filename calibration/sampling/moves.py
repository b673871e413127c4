"""The registry of the ensemble sampler's moves (``[calibration] moves``).

One entry (:class:`MoveStrategy`) per name: a one-line description and a factory of the
emcee moves it stands for, the way emcee's own ``moves`` are strategy objects. The
campaign validator, the sampler (:func:`~mpiuq.calibration.sampling.sampler.make_moves`) and the
campaign-key reference read the names from here; a new move is one entry (a built-in one
in :data:`_MOVES`, a user's through :func:`register_move`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import emcee

from mpiuq.calibration.registry import Registry

#: emcee's ``moves`` argument: weighted moves, or None for its default stretch move.
EmceeMoves = list[tuple["emcee.moves.Move", float]] | None


@dataclass(frozen=True, slots=True)
class MoveStrategy:
    """One named choice of emcee moves.

    Attributes
    ----------
    name
        Its ``[calibration] moves`` value.
    summary
        One line for the reference tables.
    make
        Builds the emcee moves (fresh objects for every sampler).
    """

    name: str
    summary: str
    make: Callable[[], EmceeMoves]


def _stretch() -> EmceeMoves:
    return None


def _de() -> EmceeMoves:
    import emcee

    return [(emcee.moves.DEMove(), 1.0)]


#: The registered moves (``"de"``'s reason to exist and the snooker move's absence:
#: :class:`~mpiuq.calibration.sampling.sampler.SamplerSettings`).
_MOVES: Registry[MoveStrategy] = Registry(
    "moves",
    (
        MoveStrategy("stretch", "emcee's default affine-invariant stretch move", _stretch),
        MoveStrategy("de", "emcee's differential-evolution move (DEMove)", _de),
    ),
    lambda name, known: f"moves={name!r} is invalid: expected one of {known}",
)


def register_move(move: MoveStrategy) -> MoveStrategy:
    """Add a move to the registry; returns it.

    Raises
    ------
    SamplerError
        If another move already has its name.
    """
    return _MOVES.register(move)


def move_names() -> tuple[str, ...]:
    """Names of the registered moves."""
    return _MOVES.names()


def move_strategy(name: str) -> MoveStrategy:
    """The registered move called ``name``.

    Raises
    ------
    SamplerError
        If no move has that name (lists the registered ones).
    """
    return _MOVES.get(name)
