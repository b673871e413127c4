"""Named entries of one extension point, in registration order.

Every extension point of the simulator (network models, benchmark kinds, trace
formats, ...) keeps its entries in one :class:`Registry`: the entry's name is its
key, its position its integer code (for the compiled loops, which dispatch on
integers), and the names, choices and documentation tables shown elsewhere are read
from it instead of being repeated. See ``docs/extending-simulator.md``.

Imports neither numba nor NumPy (the command line reads the choices at start-up).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar, overload

from mpiuq.simulator.errors import SettingError

__all__ = ["Named", "NamesView", "Registry"]

#: A valid entry name: lower case, digits, ``-`` and ``_``, starting with a letter.
NAME_RULE = re.compile(r"[a-z][a-z0-9_-]*\Z")


class Named(Protocol):
    """What a registry entry has: its name and a one-line description."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


E = TypeVar("E", bound=Named)


class Registry(Generic[E]):
    """The entries of one extension point, by name, in registration order.

    Parameters
    ----------
    what
        What an entry is, for messages (``"network model"``).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, E] = {}

    def register(self, entry: E) -> E:
        """Add ``entry`` (returned, so a module can write ``X = REGISTRY.register(...)``).

        Raises
        ------
        SettingError
            If the name is not lower-case ``[a-z][a-z0-9_-]*`` or is registered already.
        """
        name = entry.name
        if not isinstance(name, str) or not NAME_RULE.match(name):
            raise SettingError(
                f"{self.what} name {name!r} is invalid: expected lower-case letters, digits, "
                "'-' or '_', starting with a letter"
            )
        if name in self._entries:
            raise SettingError(f"{self.what} {name!r} is registered already")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> E:
        """Remove and return the entry named ``name`` (codes of later entries shift: only
        for entries registered after everything compiled from the codes, e.g. in tests).

        Raises
        ------
        SettingError
            If no entry has that name.
        """
        entry = self.get(name)
        del self._entries[name]
        return entry

    def get(self, name: str) -> E:
        """The entry named ``name``.

        Raises
        ------
        SettingError
            If no entry has that name (the message lists the known ones).
        """
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise SettingError(
                f"{self.what} {name!r} is unknown: expected one of {list(self._entries)}"
            ) from None

    def code(self, name: str) -> int:
        """Integer code of ``name``: its registration position."""
        self.get(name)
        return list(self._entries).index(name)

    def names(self) -> tuple[str, ...]:
        """Names of the entries, in registration (code) order."""
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[E]:
        return iter(tuple(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def table(self) -> str:
        """A Markdown table of the entries: name and description (for the docs)."""
        rows = [f"| `{e.name}` | {e.description} |" for e in self]
        return "\n".join([f"| {self.what} | description |", "|---|---|", *rows])

    def names_view(self, keep: Callable[[E], bool] | None = None) -> NamesView:
        """A live, read-only sequence of the names of the entries ``keep`` accepts (all
        by default): entries registered later appear in it (for choices and checks)."""
        return NamesView(lambda: tuple(e.name for e in self if keep is None or keep(e)))


class NamesView(Sequence[str]):
    """A read-only sequence of names computed on every access (see
    :meth:`Registry.names_view`); compares equal to the tuple of its names."""

    def __init__(self, names: Callable[[], tuple[str, ...]]) -> None:
        self._names = names

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __hash__(self) -> int:
        return hash(self._names())

    def __repr__(self) -> str:
        return repr(self._names())
