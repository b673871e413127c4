"""Start-up of numba in a command: loading cached loops without numba's compiler.

A command whose compiled loops are all in numba's on-disk cache should pay only for
loading them. numba by default prepares its whole compiler first (all its typing and
lowering implementations), compiles its runtime's functions with LLVM in every
process, imports its own implementation modules to rebuild the environments of the
functions it inlined, and probes SciPy's BLAS on its first compilation; each costs
more than loading a loop. :func:`cached_njit` (on which
:func:`mpiuq.simulator._jit.njit` builds) loads without the first three, and
:func:`skip_blas_probe` (called by the command line) skips the last.

Nothing here changes compiled code, so this module is not one of the sources the
caches are tied to (:data:`mpiuq.simulator._jit.COMPILED_SOURCES`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import llvmlite.binding as ll
import numba as nb
from numba.core import config, environment, event
from numba.core.caching import FunctionCache
from numba.core.runtime import _nrt_python, nrtdynmod, rtsys  # type: ignore[attr-defined]


class _LightLoadCache(FunctionCache):  # type: ignore[misc]  # numba is untyped
    """numba's on-disk function cache, loading without initialising the compiler.

    Before it loads a cached loop, numba's cache "refreshes" the target context: it
    imports all of numba's typing and lowering implementations (NumPy, lists, sets,
    dictionaries, random numbers...) and installs their registries, which only a
    compilation uses: 0.1-0.25 s of every command's start-up, longer than loading the
    loops themselves. Loading and linking a cached loop needs only the runtime's
    symbols (NRT), which this cache initialises (:func:`initialize_runtime`); a compilation (a cache miss) still
    refreshes the contexts itself before it starts. numba's C helpers and exception
    symbols are installed when the target context is made, before any load.

    Neither are numba's own implementation modules imported to rebuild the empty
    environments of the functions inlined from them (see :func:`_environments_lazily`).
    """

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        """Load the cached overload of ``sig`` (``None`` if there is none)."""
        initialize_runtime(target_context, self._cache_path)
        with self._guard_against_spurious_io_errors(), _environments_lazily():
            return self._load_overload(sig, target_context)


def _runtime_file(target_context: Any, folder: str) -> str:
    """Where numba's runtime functions compiled for this numba and CPU are kept."""
    key = repr((nb.__version__, ll.llvm_version_info, target_context.codegen().magic_tuple()))
    return os.path.join(folder, f"mpiuq-nrt-{hashlib.sha256(key.encode()).hexdigest()[:20]}.nbo")


def _compile_runtime(target_context: Any, path: str) -> Any:
    """numba's runtime functions compiled (as ``nrtdynmod.compile_nrt_functions``) and
    their object code written to ``path`` (if it can be)."""
    module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(module)
    library.finalize()
    with contextlib.suppress(OSError):  # a read-only cache: compiled again next time
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(library.serialize_using_object_code(), fh)
        os.replace(tmp, path)
    return library


def initialize_runtime(target_context: Any, folder: str) -> None:
    """``rtsys.initialize(target_context)``, its compiled part kept as object code.

    numba's runtime (NRT) has a few functions that LLVM compiles in every process
    before the first loop runs (20-60 ms of a command's start-up). They are compiled
    once per numba version and CPU and kept in ``folder`` (a loop's cache folder), as
    numba keeps the loops; the runtime's C functions are registered as numba does.
    Falls back to ``rtsys.initialize`` if numba's (private) runtime layout changes.
    Call with numba's compiler lock held (cache loads hold it).
    """
    if rtsys._init:
        return
    if not hasattr(type(rtsys), "library") or not hasattr(nrtdynmod, "create_nrt_module"):
        rtsys.initialize(target_context)
        return
    if config.NRT_STATS:  # type: ignore[attr-defined]
        _nrt_python.memsys_enable_stats()
    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else f"NRT_{name}", address)
    path = _runtime_file(target_context, folder)
    library = None
    if os.path.isfile(path):
        try:
            with open(path, "rb") as fh:
                library = target_context.codegen().unserialize_library(pickle.load(fh))
        except Exception:  # damaged or foreign: compiled again below
            library = None
    if library is None:
        library = _compile_runtime(target_context, path)
    rtsys._library = library
    rtsys._init = True


_rebuild_env = environment._rebuild_env


def _rebuild_env_lazily(modname: str, consts: list[Any], env_name: str) -> Any:
    """numba's ``_rebuild_env``, without importing numba's module of an empty environment.

    A cached loop's functions each carry an environment: their module's globals and
    their constant Python objects. Unpickling one imports its module to find the
    globals, and the NumPy array functions numba inlines into the loops live in
    ``numba.np.arrayobj``, whose import (with its own imports) costs 40-60 ms of a
    command. Compiled (nopython) code reads only an environment's constants, never its
    globals; so an environment without constants of a numba module not yet imported
    gets a globals dictionary naming the module only. Any other is rebuilt by numba.
    """
    if consts or not modname.startswith("numba.") or modname in sys.modules:
        return _rebuild_env(modname, consts, env_name)
    env = environment.lookup_environment(env_name)
    if env is None:
        env = environment.Environment({"__name__": modname})
        env.env_name = env_name
        environment.Environment._memo[env_name] = env
    return env


@contextmanager
def _environments_lazily() -> Iterator[None]:
    """Unpickle environments with :func:`_rebuild_env_lazily` inside the block.

    Cached loops are loaded under numba's compiler lock, so no other thread unpickles
    environments meanwhile.
    """
    environment._rebuild_env = _rebuild_env_lazily
    try:
        yield
    finally:
        environment._rebuild_env = _rebuild_env


class _LazyCache:
    """A dispatcher's on-disk cache, made on its first use (a load or a compilation).

    Making numba's cache stats the function's source file, makes the cache folder and
    tries writing a file in it: 0.2-0.3 ms per loop, about 40 ms for the 140 loops a
    command defines, of which it runs a handful. Attribute reads go to the cache, an
    :class:`_LightLoadCache` handed to ``on_create`` when made.
    """

    def __init__(self, py_func: Callable[..., Any], on_create: Callable[[Any], None]) -> None:
        self._py_func = py_func
        self._on_create = on_create
        self._made: Any = None

    def _cache(self) -> Any:
        if self._made is None:
            cache = FunctionCache(self._py_func)
            if hasattr(cache, "_guard_against_spurious_io_errors"):
                cache.__class__ = _LightLoadCache  # else numba's own loading stays
            self._on_create(cache)
            self._made = cache
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache(), name)


def _nothing(cache: Any) -> None:
    """The default ``on_cache`` of :func:`cached_njit`."""


F = TypeVar("F", bound=Callable[..., Any])


def cached_njit(on_cache: Callable[[Any], None] = _nothing, **options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)``, the cache made on first use and loading lightly.

    The cache is an :class:`_LightLoadCache`, made by :class:`_LazyCache` when the loop
    first runs or is compiled into another, then handed to ``on_cache`` (e.g. to tie
    it to more sources than the loop's own module).
    """

    def decorate(func: F) -> F:
        dispatcher = nb.njit(**options)(func)
        dispatcher._cache = _LazyCache(dispatcher.py_func, on_cache)
        return dispatcher  # type: ignore[no-any-return]

    return decorate


#: The module numba's NumPy support imports to probe for SciPy's BLAS.
_BLAS_PROBE = "scipy.linalg.cython_blas"


def _import_numpy_support_without_probe() -> None:
    """Import numba's NumPy implementations with SciPy's BLAS hidden (see below)."""
    if "numba.np.arraymath" in sys.modules or _BLAS_PROBE in sys.modules:
        return
    sys.modules[_BLAS_PROBE] = None  # type: ignore[assignment]  # the import raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules[_BLAS_PROBE]


class _SkipProbeOnCompile(event.Listener):  # type: ignore[misc]  # numba is untyped
    """Imports numba's NumPy implementations without the BLAS probe before a compilation."""

    def on_start(self, event: event.Event) -> None:
        _import_numpy_support_without_probe()

    def on_end(self, event: event.Event) -> None:
        pass


_probe_skipper: list[_SkipProbeOnCompile] = []


def skip_blas_probe() -> None:
    """Let numba's NumPy implementations load without its probe for SciPy's BLAS.

    On its first compilation in a process, numba imports its NumPy implementations,
    and with them SciPy's linear algebra to see whether ``np.dot`` can call BLAS:
    0.15-0.2 s of a command's start-up. The simulator's loops call no BLAS. After this
    call, the first compilation in the process imports them with the probe's module
    hidden, so numba's ``np.correlate`` and ``np.convolve`` (the only users of its
    answer) use its own loops; ``np.dot`` and ``np.linalg`` still find BLAS when
    compiled. Loading cached loops imports neither (see :class:`_LightLoadCache`), so
    nothing is imported here: a run whose loops are all cached pays for neither.
    Does nothing more once called, or once numba's NumPy support or BLAS is loaded.
    """
    if _probe_skipper or "numba.np.arraymath" in sys.modules or _BLAS_PROBE in sys.modules:
        return
    _probe_skipper.append(_SkipProbeOnCompile())
    event.register("numba:compile", _probe_skipper[0])
