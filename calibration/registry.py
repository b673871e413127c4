"""A registry of one extension point's named entries (likelihood families, ensemble moves).

Entries keep their registration order (a likelihood family's code is its position); a
name is registered once; looking up an unknown name raises
:class:`~mpiuq.calibration.errors.SamplerError` listing the registered ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from mpiuq.calibration.errors import SamplerError


class Named(Protocol):
    """An entry: anything with a ``name``."""

    @property
    def name(self) -> str:
        """The entry's name (its value in a campaign file)."""
        ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Named entries of one extension point.

    Parameters
    ----------
    what
        What the entries are, for messages (``"likelihood"``, ``"moves"``).
    entries
        The built-in entries, in order.
    unknown
        The message for an unknown name, given the name and the registered names.
    """

    def __init__(
        self, what: str, entries: Iterable[T], unknown: Callable[[str, list[str]], str]
    ) -> None:
        self._what = what
        self._unknown = unknown
        self._entries: dict[str, T] = {e.name: e for e in entries}

    def register(self, entry: T) -> T:
        """Add an entry; returns it.

        Raises
        ------
        SamplerError
            If another entry already has its name.
        """
        known = self._entries.get(entry.name)
        if known is not None and known is not entry:
            raise SamplerError(
                f"{self._what} {entry.name!r} is already registered: expected a new name, "
                f"not one of {list(self._entries)}"
            )
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove an entry (a test's temporary one); unknown names are ignored."""
        self._entries.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """The registered names, in order."""
        return tuple(self._entries)

    def entries(self) -> tuple[T, ...]:
        """The registered entries, in order."""
        return tuple(self._entries.values())

    def get(self, name: str) -> T:
        """The entry called ``name``.

        Raises
        ------
        SamplerError
            If no entry has that name (lists the registered ones).
        """
        try:
            return self._entries[name]
        except KeyError:
            raise SamplerError(self._unknown(name, list(self._entries))) from None
