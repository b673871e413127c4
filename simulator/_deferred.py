"""Compiled loops that import numba only when they must: deferred dispatchers.

A command whose loops were compiled ahead of time (:mod:`mpiuq.simulator._aot`) runs
them from that extension module and never imports numba (0.25-0.45 s and 65 MiB of a
command's start-up). So the decorators of :mod:`mpiuq.simulator._jit` do not make
numba dispatchers when a module is imported: they make a :class:`Deferred`, which

* called from Python, runs the ahead-of-time compiled loop when there is one for
  the argument types (:func:`mpiuq.simulator._aot.aot_function`), else makes the
  numba dispatcher (importing numba, :func:`materialize`) and calls it;
* inside compiled code, is typed as its dispatcher: numba asks ``typeof`` of a
  global, which :func:`materialize` registers for :class:`Deferred`, and inlines by
  its ``targetoptions`` and ``py_func`` as it does a dispatcher's.

Other numba objects the loops use (intrinsics, overloads) are made the same way,
by :func:`deferred_object` and :func:`when_numba`. Both paths run the same compiled
code (the ahead-of-time module is built from the same dispatchers), so results are
bit-identical; ``tests/test_aot.py`` checks it.

This module imports neither numba nor NumPy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mpiuq.simulator._aot import aot_function

#: Hooks run once numba is imported, before any loop compiles or loads (in order).
_hooks: list[Callable[[], None]] = []

#: Whether :func:`materialize` has run (numba is imported and the hooks have run).
_state: dict[str, Any] = {"ready": False, "recorder": None}

_lock = threading.RLock()

#: Every :class:`DeferredObject` (made by :func:`materialize`).
_objects: list[DeferredObject] = []


def numba_ready() -> bool:
    """Whether numba has been imported for the loops (:func:`materialize` has run)."""
    return bool(_state["ready"])


def when_numba(hook: Callable[[], None]) -> None:
    """Run ``hook()`` once numba is imported for the loops (now, if it already is; a hook
    registered again before then still runs once)."""
    with _lock:
        if _state["ready"]:
            hook()
        elif hook not in _hooks:  # a caller registering on every call runs it once
            _hooks.append(hook)


def materialize() -> None:
    """Import numba for the loops: register how it types a :class:`Deferred`, run the
    :func:`when_numba` hooks. Idempotent and thread-safe."""
    if _state["ready"]:
        return
    with _lock:
        if _state["ready"]:
            return
        from mpiuq.simulator._numba_import import import_numba

        import_numba()
        from numba.extending import typeof_impl

        @typeof_impl.register(Deferred)
        def _typeof_deferred(val: Deferred, c: Any) -> Any:
            return typeof_impl(val.real, c)

        @typeof_impl.register(DeferredObject)
        def _typeof_deferred_object(val: DeferredObject, c: Any) -> Any:
            # intrinsics and other registered globals are typed by the typing context
            from numba.core.registry import cpu_target

            return cpu_target.typing_context.resolve_value_type(val.real)

        _state["ready"] = True
        while _hooks:
            _hooks.pop(0)()
        # made now, before any compilation: numba's typing context picks up the
        # globals they register (intrinsics) only when it refreshes, as one starts
        for obj in _objects:
            obj.real  # noqa: B018


class DeferredObject:
    """A numba object (an intrinsic, say) made by ``factory()`` once numba is imported.

    ``eager``: made as soon as numba is imported (an intrinsic registers itself with
    numba's typing, which picks it up only before a compilation starts); otherwise on
    first use.
    """

    def __init__(self, factory: Callable[[], Any], name: str, *, eager: bool = True) -> None:
        self._factory = factory
        self._real: Any = None
        self.__name__ = name
        if eager:
            _objects.append(self)
            if _state["ready"]:  # numba is imported: made now, before a compilation types it
                self.real  # noqa: B018

    @property
    def real(self) -> Any:
        """The numba object (imports numba on first use)."""
        if self._real is None:
            materialize()
            with _lock:
                if self._real is None:
                    self._real = self._factory()
        return self._real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real(*args, **kwargs)


def deferred_object(factory: Callable[[], Any], name: str) -> Any:
    """A :class:`DeferredObject`: ``factory()`` (which imports numba) is called on first use."""
    return DeferredObject(factory, name)


class Deferred(DeferredObject):
    """A compiled loop whose numba dispatcher is made on first need.

    Parameters
    ----------
    py_func : callable
        The loop's Python function.
    make : callable
        ``make(py_func)``: the numba dispatcher (imports numba).
    targetoptions : dict
        The options the dispatcher is compiled with (numba's inliner reads ``inline``).
    """

    def __init__(
        self,
        py_func: Callable[..., Any],
        make: Callable[[Callable[..., Any]], Any],
        targetoptions: dict[str, Any],
    ) -> None:
        super().__init__(lambda: make(py_func), py_func.__name__, eager=False)
        self.py_func = py_func
        self.targetoptions = dict(targetoptions)
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        #: The name of the loop in an ahead-of-time module (module path and name).
        self.key = f"{py_func.__module__}:{py_func.__qualname__}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            compiled = aot_function(self.key, args)
            if compiled is not None:
                return compiled(*args)
        real = self.real
        recorder = _state["recorder"]
        if recorder is not None:
            recorder(self, args, kwargs)
        return real(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # dispatcher attributes (signatures, overloads, ...): numba's dispatcher's
        if name.startswith("__") or name in ("_real", "_factory", "py_func", "targetoptions"):
            raise AttributeError(name)
        return getattr(self.real, name)

    def __repr__(self) -> str:
        made = "made" if self._real is not None else "not made"
        return f"<Deferred loop {self.key} ({made})>"


def record_calls(
    recorder: Callable[[Deferred, tuple[Any, ...], dict[str, Any]], None] | None,
) -> None:
    """Call ``recorder(loop, args, kwargs)`` on every call of a loop from Python that runs
    its numba dispatcher (``None``: stop). The ahead-of-time build uses it to learn the
    argument types each loop is called with."""
    _state["recorder"] = recorder
