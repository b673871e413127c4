"""numba behind one module: the simulator's compiled loops, through numba's public API.

Every loop is ``numba.njit(cache=True, ...)`` (:func:`njit`). numba keeps a loop's
machine code on disk -- in ``__pycache__`` beside its source file, or under
``$NUMBA_CACHE_DIR`` -- keyed on the loop's bytecode, argument types, the CPU, numba's
version and the SHA-256 of the loop's own source file. The install compiles them
(:mod:`mpiuq.simulator.precompile`, run by the build backend), so a command loads them.

**Sources.** The loops inline functions of other files and freeze the integer codes
of ``codes.py``: numba's key does not see those files. So the cached loops of every
compiled-source folder are dropped when the digest of :data:`COMPILED_SOURCES` (with
the loops' :data:`DEFAULT_OPTIONS`) differs from the one recorded beside them
(:func:`drop_stale_caches`, once per process, before the first loop is made): an edit
anywhere in them recompiles every loop once.

**Reference counts.** numba counts references to every array a compiled function
holds, with atomic instructions; :func:`~mpiuq.simulator.runtime.borrow.borrowed` lets a
loop's body work on its argument bundles without them (see there).

**Compilations.** :func:`on_compile` tells the command line (the only code that
prints) when a loop misses the cache and compiles, and how long it took.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from mpiuq.simulator.runtime.numba_import import import_numba
from mpiuq.simulator.runtime.sources import COMPILED_SOURCES, digest_of

import_numba()  # numba without its optional SciPy/PyYAML probes (see that module)

import numba  # noqa: E402  (after the probes are hidden)
from numba import objmode  # noqa: E402
from numba.core import event  # noqa: E402
from numba.extending import intrinsic, overload  # noqa: E402

__all__ = [
    "COMPILED_SOURCES",
    "LOOPS",
    "drop_stale_caches",
    "intrinsic",
    "last_compile_s",
    "njit",
    "objmode",
    "on_compile",
    "overload",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The ``simulator`` folder as it is imported (not resolved: numba places a loop's cache
#: beside the path its module was imported from).
SIMULATOR_DIR = Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Options every loop is compiled with unless it says otherwise (part of the caches' stamp).
DEFAULT_OPTIONS: dict[str, Any] = {"nogil": True}

#: Every loop made by :func:`njit` in this process (numba dispatchers, in import order).
LOOPS: list[Any] = []

#: Name of the file beside the cached loops that records the digest they were made with.
STAMP_NAME = "mpiuq-loops-sources.sha256"
#: Name of the file beside it recording each loop's last compile time (JSON, seconds).
TIMES_NAME = "mpiuq-loops-compile-s.json"

_lock = threading.Lock()
_checked: list[bool] = []


def _numba_cache_dir() -> str:
    """numba's cache folder setting (``NUMBA_CACHE_DIR``; empty: beside the sources)."""
    return str(getattr(numba.config, "CACHE_DIR", "") or "")


def source_folders(root: Path = SIMULATOR_DIR) -> list[Path]:
    """The folders holding :data:`COMPILED_SOURCES` (each has its loops' cache files)."""
    return sorted({p.parent for pattern in COMPILED_SOURCES for p in root.glob(pattern)})


def cache_folders(root: Path = SIMULATOR_DIR) -> list[Path]:
    """Where numba keeps the loops of :func:`source_folders`: ``$NUMBA_CACHE_DIR``'s
    folder of each source folder if numba's cache folder is set, else its ``__pycache__``."""
    base = _numba_cache_dir()
    if not base:
        return [folder / "__pycache__" for folder in source_folders(root)]
    # numba names a source folder's cache folder after its name and a SHA-1 of its path
    return [
        Path(base) / f"{folder.name}_{hashlib.sha1(str(folder).encode()).hexdigest()}"
        for folder in source_folders(root)
    ]


def _stamp_file(root: Path) -> Path:
    """The file recording the digest the cached loops were compiled with."""
    base = _numba_cache_dir()
    if not base:
        return root / "__pycache__" / STAMP_NAME
    return Path(base) / f"{hashlib.sha1(str(root).encode()).hexdigest()}-{STAMP_NAME}"


def stamp_of(root: Path = SIMULATOR_DIR) -> str:
    """What the cached loops must have been compiled from: the digest of
    :data:`COMPILED_SOURCES` and the default options."""
    return f"{digest_of(COMPILED_SOURCES, root)} {sorted(DEFAULT_OPTIONS.items())!r}"


def drop_stale_caches(root: Path = SIMULATOR_DIR) -> bool:
    """Delete the cached loops (``*.nbi``, ``*.nbc``) of the compiled-source folders if
    they were compiled from other sources than today's (the digest beside them differs
    or is missing), and record today's digest. Returns whether any were dropped.

    A folder that cannot be written (a read-only install) is left as it is: its
    sources do not change either.
    """
    digest = stamp_of(root)
    stamp = _stamp_file(root)
    with suppress(OSError):
        if stamp.read_text(encoding="ascii").strip() == digest:
            return False
    dropped = False
    for folder in cache_folders(root):
        for pattern in ("*.nbi", "*.nbc"):
            for path in folder.glob(pattern):
                with suppress(OSError):
                    path.unlink()
                    dropped = True
    with suppress(OSError):
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(digest + "\n", encoding="ascii")
        os.replace(tmp, stamp)
    return dropped


def last_compile_s(loop: str, root: Path = SIMULATOR_DIR) -> float | None:
    """Seconds ``loop`` took when it was last compiled with these caches (``None``: unknown)."""
    try:
        times = json.loads(_stamp_file(root).with_name(TIMES_NAME).read_text(encoding="utf-8"))
        value = times.get(loop)
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) else None


def _record_compile_s(loop: str, seconds: float, root: Path = SIMULATOR_DIR) -> None:
    """Record that ``loop`` took ``seconds`` to compile (for the next estimate)."""
    path = _stamp_file(root).with_name(TIMES_NAME)
    with _lock, suppress(OSError, ValueError):
        try:
            times = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            times = {}
        if not isinstance(times, dict):
            times = {}
        times[loop] = round(seconds, 1)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(times, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)


def njit(**options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, nogil=True, **options)``, listed in :data:`LOOPS`.

    Only numba's documented options: every loop keeps numba's reference counting.
    Loops whose bodies pass bundles of arrays to inlined helpers (the event loop, the
    lowering kernels, the flow network's) take them through
    :func:`~mpiuq.simulator.runtime.borrow.borrowed` on entry, so that those counts compile to
    nothing (with the counts, a warm replay of ti_lulesh_512r took 5.3-5.7 s of CPU
    against 0.6-0.7 s).

    Loops release the GIL (``nogil``): models replayed in threads run at once, and a
    command's main thread, waiting for its worker, reacts to Ctrl-C while a loop runs
    (:mod:`mpiuq.runtime.interrupt`). The first call in a process drops cached loops compiled
    from other sources (:func:`drop_stale_caches`) before any loop is made.
    """
    options = DEFAULT_OPTIONS | options
    if not _checked:
        with _lock:
            if not _checked:
                drop_stale_caches()
                _checked.append(True)

    def decorate(func: F) -> F:
        dispatcher = numba.njit(cache=True, **options)(func)
        LOOPS.append(dispatcher)
        return dispatcher  # type: ignore[no-any-return]

    return decorate


#: Callbacks of the :func:`on_compile` blocks open now.
_compile_callbacks: list[Callable[[str, float | None], None]] = []


class _CompileListener(event.Listener):  # type: ignore[misc]  # numba is untyped
    """Tells the open :func:`on_compile` callbacks when numba compiles a loop (a cache miss).

    Only the outermost compilation of a thread is reported (a loop compiles the loops it
    calls inside its own compilation).
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def on_start(self, ev: event.Event) -> None:
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        if depth == 0:
            self._local.start = time.perf_counter()
            name = _loop_name(ev)
            for callback in list(_compile_callbacks):
                callback(name, None)

    def on_end(self, ev: event.Event) -> None:
        self._local.depth = getattr(self._local, "depth", 1) - 1
        if self._local.depth == 0:
            LAST_COMPILE_END[0] = time.monotonic()
            took = time.perf_counter() - getattr(self._local, "start", time.perf_counter())
            name = _loop_name(ev)
            if _is_loop(ev):
                _record_compile_s(name, took)
            for callback in list(_compile_callbacks):
                callback(name, took)


#: ``time.monotonic()`` when the last outermost compilation ended (numba writes the loop's
#: cache entry right after: an interrupt lets that write finish, :mod:`mpiuq.runtime.interrupt`).
LAST_COMPILE_END = [float("-inf")]


def _is_loop(ev: event.Event) -> bool:
    """Whether a ``numba:compile`` event is about one of :data:`LOOPS`."""
    data = ev.data if isinstance(ev.data, dict) else {}
    return any(data.get("dispatcher") is loop for loop in LOOPS)


def _loop_name(ev: event.Event) -> str:
    """``module.qualname`` of the loop a ``numba:compile`` event is about."""
    data = ev.data if isinstance(ev.data, dict) else {}
    func = getattr(data.get("dispatcher"), "py_func", None)
    if func is None:
        return "a compiled loop"
    module = getattr(func, "__module__", None) or "?"  # None for a function made by exec
    return f"{module.removeprefix('mpiuq.simulator.')}.{func.__qualname__}"


event.register("numba:compile", _CompileListener())


@contextmanager
def on_compile(callback: Callable[[str, float | None], None]) -> Iterator[None]:
    """Call ``callback(loop, None)`` when a loop starts compiling inside the block (a
    cache miss), and ``callback(loop, seconds)`` when it is compiled (and cached).

    Loading a loop from the on-disk cache is not a compilation: with every loop cached
    the callback is never called.
    """
    _compile_callbacks.append(callback)
    try:
        yield
    finally:
        _compile_callbacks.remove(callback)
