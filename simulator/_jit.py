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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from mpiuq.simulator._deferred import Deferred, when_numba
from mpiuq.simulator._sources import (
    PARSER_SOURCES,
    digest_of,
    sources_digest,
)

F = TypeVar("F", bound=Callable[..., Any])


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


def _deferred_njit(on_cache: Callable[[Any], None], options: dict[str, Any]) -> Callable[[F], F]:
    """A decorator making a :class:`~mpiuq.simulator._deferred.Deferred` loop whose
    dispatcher is ``cached_njit(on_cache, **options)`` (numba is imported on first need)."""

    def make(func: Callable[..., Any]) -> Any:
        from mpiuq.simulator._numba_startup import cached_njit

        return cached_njit(on_cache, **options)(func)

    def decorate(func: F) -> F:
        return Deferred(func, make, options)  # type: ignore[return-value]

    return decorate


def njit(*, nrt: bool = True, **options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)`` with the cache tied to every compiled source.

    ``nrt=False`` compiles without reference counting (see the module docstring). The
    loop is a :class:`~mpiuq.simulator._deferred.Deferred`: numba is imported when it is
    first needed, not when the loop's module is.
    """
    if not nrt:
        options["_nrt"] = False
    return _deferred_njit(_tie_cache_to_sources, options)


def parser_njit(**options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)`` for the TI parser's loops, the cache tied to
    every file of :data:`PARSER_SOURCES` (not to the kernel's sources)."""
    return _deferred_njit(_tie_cache_to_parser_sources, options)


def njit_no_refcount(**options: Any) -> Callable[[F], F]:
    """``njit(nrt=False, **options)``: a cached loop without reference counting."""
    return njit(nrt=False, **options)


#: Callbacks of the :func:`on_compile` blocks open now.
_compile_callbacks: list[Callable[[], None]] = []


def _listen_for_compilations() -> None:
    """Register one numba listener calling the open :func:`on_compile` callbacks."""
    from numba.core import event

    class _CompileListener(event.Listener):  # type: ignore[misc]  # numba is untyped
        """Calls the callbacks when numba starts compiling a function (a cache miss)."""

        def on_start(self, event: event.Event) -> None:
            for callback in list(_compile_callbacks):
                callback()

        def on_end(self, event: event.Event) -> None:
            pass

    event.register("numba:compile", _CompileListener())


when_numba(_listen_for_compilations)


@contextmanager
def on_compile(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback()`` whenever a loop is compiled inside the block.

    Loading a loop from the on-disk cache is not a compilation: on a machine whose
    cache is warm the callback is never called; nor is numba imported for it. The
    command line uses it to say that a first run compiles (the edge prints; this
    module does not).
    """
    _compile_callbacks.append(callback)
    try:
        yield
    finally:
        _compile_callbacks.remove(callback)
