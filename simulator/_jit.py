"""numba compilation for the simulator's compiled loops: on-disk caches that expire with
any compiled source, and compilation without reference counting.

**Caches.** numba's ``cache=True`` keys a function's cache on its own source file
only. The kernel is split over several modules whose small functions are inlined
into the loops that call them, and whose integer codes are frozen into them: with
the stock rule, editing ``kernel/protocols.py`` or ``codes.py`` would leave the
event loop's cached machine code in use, silently stale. :func:`njit` ties every
cache to a digest of all :data:`COMPILED_SOURCES`, so any change there recompiles
every compiled loop (once; about 30 s). The TI parser's loops, which inline each
other's functions across ``trace/ti_*.py`` and freeze the operation codes, are tied
the same way to :data:`PARSER_SOURCES` (:func:`parser_njit`).

**No reference counting.** Inside a compiled function, passing an array to an
inlined helper or unpacking a tuple of arrays updates the array's reference count
with an atomic instruction; in the event loop those updates were a tenth of the
run time. A function compiled with numba's (private, stable since 0.4x) ``_nrt=False``
option emits none; it must then neither allocate arrays nor return new ones, which
the loops compiled with ``nrt=False`` do not (their callers allocate).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from numba.core import event

from mpiuq.simulator._numba_startup import cached_njit

F = TypeVar("F", bound=Callable[..., Any])

_HERE = Path(__file__).resolve().parent

#: Source files compiled into the loops (by inlining or as frozen constants), relative
#: to the ``simulator`` folder; a glob per package.
COMPILED_SOURCES: tuple[str, ...] = (
    "_jit.py",
    "_prefetch.py",
    "_program_check.py",
    "_lowering_kernel.py",
    "codes.py",
    "parameters.py",
    "trace/ir.py",
    "kernel/**/*.py",
    "networks/*.py",
    "topologies/routing.py",
)


#: Source files compiled into the TI parser's loops (``trace/ti_*.py`` inline each
#: other's functions; the operation codes are frozen into them).
PARSER_SOURCES: tuple[str, ...] = ("codes.py", "trace/ir.py", "trace/ti_*.py")


@cache
def digest_of(patterns: tuple[str, ...], root: Path = _HERE) -> str:
    """SHA-256 of the contents of every file matching ``patterns`` under ``root``
    (by default the ``simulator`` folder), in name order."""
    h = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def sources_digest() -> str:
    """SHA-256 of the contents of every file of :data:`COMPILED_SOURCES`, in name order."""
    return digest_of(COMPILED_SOURCES)


def tie_cache(cache: Any, digest: str) -> None:
    """Make a loop's on-disk ``cache`` expire when ``digest`` (of its sources) changes.

    numba stores a stamp of the function's own file in the cache index and discards
    the index when the stamp differs; the stamp is extended with ``digest``.
    Leaves numba's own rule in place if its (private) cache layout ever changes.
    """
    cache_file = getattr(cache, "_cache_file", None)
    stamp = getattr(cache_file, "_source_stamp", None)
    if cache_file is not None and stamp is not None:
        cache_file._source_stamp = (stamp, digest)


def _tie_cache_to_sources(cache: Any) -> None:
    """:func:`tie_cache` to :data:`COMPILED_SOURCES`."""
    tie_cache(cache, sources_digest())


def _tie_cache_to_parser_sources(cache: Any) -> None:
    """:func:`tie_cache` to :data:`PARSER_SOURCES`."""
    tie_cache(cache, digest_of(PARSER_SOURCES))


def njit(*, nrt: bool = True, **options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)`` with the cache tied to every compiled source.

    ``nrt=False`` compiles without reference counting (see the module docstring).
    """
    if not nrt:
        options["_nrt"] = False
    return cached_njit(_tie_cache_to_sources, **options)


def parser_njit(**options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)`` for the TI parser's loops, the cache tied to
    every file of :data:`PARSER_SOURCES` (not to the kernel's sources)."""
    return cached_njit(_tie_cache_to_parser_sources, **options)


def njit_no_refcount(**options: Any) -> Callable[[F], F]:
    """``njit(nrt=False, **options)``: a cached loop without reference counting."""
    return njit(nrt=False, **options)


class _CompileListener(event.Listener):
    """Calls ``callback()`` when numba starts compiling a function (a cache miss)."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback

    def on_start(self, event: event.Event) -> None:
        self.callback()

    def on_end(self, event: event.Event) -> None:
        pass


@contextmanager
def on_compile(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback()`` whenever a loop is compiled inside the block.

    Loading a loop from the on-disk cache is not a compilation: on a machine whose
    cache is warm the callback is never called. The command line uses it to say that
    a first run compiles (the edge prints; this module does not).
    """
    with event.install_listener("numba:compile", _CompileListener(callback)):
        yield
