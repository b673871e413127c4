"""Typed errors of the SimGrid platform and hostfile readers."""

from __future__ import annotations

from mpiuq.simulator.errors import SimulatorError


class PlatformError(SimulatorError, ValueError):
    """A platform file or hostfile is malformed, or uses an element mpiuq does not replay.

    Attributes
    ----------
    file : str
        Path of the offending file.
    line : int or None
        1-based line of the offending element or entry.
    element : str or None
        The element (``<cluster>``, ``<link>``...) or hostfile entry at fault.
    reason : str
        What is wrong and what was expected.
    """

    def __init__(
        self, file: str, reason: str, *, line: int | None = None, element: str | None = None
    ) -> None:
        self.file = file
        self.line = line
        self.element = element
        self.reason = reason
        where = file if line is None else f"{file}, line {line}"
        if element is not None:
            where += f", {element}"
        super().__init__(f"{where}: {reason}")
