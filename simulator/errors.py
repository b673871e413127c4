"""Typed errors of the simulator layer.

Every error names the offending value and what was expected, so that a user
reading a traceback from a campaign or a replay knows what to change.
"""

from __future__ import annotations


class SimulatorError(Exception):
    """Base class of all errors raised by :mod:`mpiuq.simulator`."""


class SettingError(SimulatorError, ValueError):
    """A simulator setting (benchmark, message size, network model, window...) is invalid."""


class ParameterError(SimulatorError, ValueError):
    """A simulator parameter is unknown, non-finite or outside its allowed range."""

    def __init__(self, name: str, value: object, allowed: str) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f"parameter {name}={value!r} is invalid: expected {allowed}")


class ProgramError(SimulatorError, ValueError):
    """An operation stream handed to the engine is malformed.

    Carries the rank and the operation index within that rank when known.
    """

    def __init__(self, message: str, rank: int | None = None, op_index: int | None = None) -> None:
        self.rank = rank
        self.op_index = op_index
        where = ""
        if rank is not None:
            where = (
                f" (rank {rank}" + (f", operation {op_index}" if op_index is not None else "") + ")"
            )
        super().__init__(message + where)


class DeadlockError(SimulatorError, RuntimeError):
    """The simulation cannot progress: some rank waits on a request that can never complete.

    Attributes
    ----------
    blocked : list of tuple
        ``(rank, op_index, description)`` for every rank that was still blocked.
    """

    def __init__(self, blocked: list[tuple[int, int, str]], time_s: float) -> None:
        self.blocked = blocked
        self.time_s = time_s
        shown = "; ".join(f"rank {r} at operation {i}: {d}" for r, i, d in blocked[:8])
        more = f" (and {len(blocked) - 8} more)" if len(blocked) > 8 else ""
        super().__init__(
            f"deadlock at simulated time {time_s:.9g} s: {len(blocked)} rank(s) blocked forever: "
            f"{shown}{more}"
        )
