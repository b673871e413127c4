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
import fcntl
import hashlib
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import llvmlite.binding as ll
import numba as nb
from numba.core import config, environment, event
from numba.core.caching import FunctionCache
from numba.core.compiler_lock import global_compiler_lock
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


#: The runtime's object code as kept on disk (pickled), once this process has it, and
#: the cache folders known to hold it.
_runtime_kept: dict[str, Any] = {"blob": None, "folders": set()}


def _write_runtime(blob: bytes, path: str) -> None:
    """Write the runtime's pickled object code to ``path`` (if it can be: a read-only
    cache compiles it again next time)."""
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)


def _compile_runtime(target_context: Any, path: str) -> Any:
    """numba's runtime functions compiled (as ``nrtdynmod.compile_nrt_functions``) and
    their object code written to ``path`` (if it can be)."""
    module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(module)
    library.finalize()
    blob = pickle.dumps(library.serialize_using_object_code())
    _runtime_kept["blob"] = blob
    _write_runtime(blob, path)
    return library


def _keep_runtime(target_context: Any, folder: str) -> None:
    """Write the runtime this process loaded or compiled into the cache ``folder`` of
    another loop, if that folder lacks it.

    The runtime is kept in the folder of the first loop a process loads; a later
    process whose first loop lives in another folder (a second replay reads its trace
    from the trace cache, without the parser's loops) would otherwise compile it again.
    """
    if folder in _runtime_kept["folders"] or _runtime_kept["blob"] is None:
        return
    _runtime_kept["folders"].add(folder)
    path = _runtime_file(target_context, folder)
    if not os.path.isfile(path):
        _write_runtime(_runtime_kept["blob"], path)


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
        _keep_runtime(target_context, folder)
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
                blob = fh.read()
            library = target_context.codegen().unserialize_library(pickle.loads(blob))
            _runtime_kept["blob"] = blob
        except Exception:  # damaged or foreign: compiled again below
            library = None
    if library is None:
        library = _compile_runtime(target_context, path)
    _runtime_kept["folders"].add(folder)
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


#: Seconds a process waits for another one compiling the same loop before it compiles
#: the loop itself (a first compilation of the event loop takes 1-3 minutes of CPU).
COMPILE_WAIT_S = 900.0

#: Lock files this process holds (a loop compiled while compiling itself, or inlined).
_held_locks: set[str] = set()


@contextmanager
def _compiling_alone(cache: Any) -> Iterator[None]:
    """Hold the loop's lock file (next to its cache index) inside the block.

    Processes that start on an empty numba cache at once (a pool of campaign workers,
    test workers) would each compile the same loops: minutes of CPU each. Holding an
    exclusive ``flock`` on ``<index>.lock`` while a loop is loaded or compiled makes the
    others wait, then load it from the cache. Waits at most :data:`COMPILE_WAIT_S`; a
    cache folder that cannot hold the lock file (read-only) or a file system without
    locks leaves the loop to compile as without the lock. The lock goes with the
    process that holds it (an ``flock`` is released when its process ends).
    """
    try:
        path = os.path.join(cache._cache_path, f"{cache._cache_file._index_name}.lock")
    except AttributeError:  # numba's (private) cache layout changed
        path = ""
    fd = -1
    if path and path not in _held_locks:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    if fd < 0:
        yield
        return
    try:
        deadline = time.monotonic() + COMPILE_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:  # another process holds it: compiling the loop
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            except OSError:  # no locks on this file system
                break
        _held_locks.add(path)
        try:
            yield
        finally:
            _held_locks.discard(path)
    finally:
        os.close(fd)  # releases the lock


def _compile_alone(dispatcher: Any) -> None:
    """Make ``dispatcher.compile`` (a cache load, else a compilation) hold the loop's lock
    file (:func:`_compiling_alone`) inside numba's compiler lock."""
    compile_ = dispatcher.compile

    def compile_alone(sig: Any) -> Any:
        with global_compiler_lock, _compiling_alone(dispatcher._cache):
            return compile_(sig)

    dispatcher.compile = compile_alone


def cached_njit(on_cache: Callable[[Any], None] = _nothing, **options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, **options)``, the cache made on first use and loading lightly.

    The cache is an :class:`_LightLoadCache`, made by :class:`_LazyCache` when the loop
    first runs or is compiled into another, then handed to ``on_cache`` (e.g. to tie
    it to more sources than the loop's own module). Processes sharing a numba cache
    compile each loop once between them (:func:`_compiling_alone`).
    """

    def decorate(func: F) -> F:
        dispatcher = nb.njit(**options)(func)
        dispatcher._cache = _LazyCache(dispatcher.py_func, on_cache)
        _compile_alone(dispatcher)
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
