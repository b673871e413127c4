"""The loops compiled ahead of time: finding, checking and calling them without numba.

``mpiuq kernels build`` (:mod:`mpiuq.kernels_build`) compiles the loops a
command calls from Python into one CPython extension module, with numba's ahead-of-time
compiler, for the argument types it saw them called with. A later command imports
that module (a few milliseconds) instead of numba and its on-disk cache (0.25-0.45 s
and about 65 MiB).

The module lives in :func:`aot_folder` under a name that digests everything its
machine code depends on: the compiled sources (:data:`mpiuq.simulator._sources.COMPILED_SOURCES`),
the NumPy and Python versions, the numba installation and the CPU (it is compiled for
this CPU's instruction set). Any change, and the module is not found: the loops run
from numba's cache as before until it is built again.

An extension function unboxes its arguments as the types it was compiled for and does
not check them (a wrong type crashes the process). So a loop is run from the module
only when the :func:`fingerprint` of its arguments -- array dtypes, dimensions,
layouts, flags, named-tuple classes and fields -- is one the build recorded for the
export (the table beside the module); any other call runs numba's dispatcher.

``MPIUQ_AOT=off`` in the environment turns the module off (numba only).

This module imports neither numba nor (before a loop is called) NumPy.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mpiuq.simulator.errors import SimulatorError


class AotBuildError(SimulatorError, RuntimeError):
    """The ahead-of-time module could not be built (numba's pycc or a C compiler missing,
    or one of the build's runs failed)."""


#: Version of the module's layout (its name, exports and table); part of its key.
AOT_FORMAT = 1

#: Environment variable that turns the ahead-of-time module off (``off``, ``0``, ``no``).
AOT_ENV = "MPIUQ_AOT"

_lock = threading.Lock()
_loaded: dict[str, Any] = {"done": False, "module": None, "table": {}, "path": None}


#: Environment variable naming the folder of the module (default: see :func:`aot_folder`).
AOT_DIR_ENV = "MPIUQ_AOT_DIR"


def aot_folder() -> Path:
    """``$MPIUQ_AOT_DIR`` if set, else ``$NUMBA_CACHE_DIR/mpiuq-aot`` if numba's cache
    folder is set, else ``~/.cache/mpiuq/aot``."""
    explicit = os.environ.get(AOT_DIR_ENV)
    if explicit:
        return Path(explicit)
    numba_cache = os.environ.get("NUMBA_CACHE_DIR")
    if numba_cache:
        return Path(numba_cache) / "mpiuq-aot"
    return Path.home() / ".cache" / "mpiuq" / "aot"


def aot_enabled() -> bool:
    """Whether ahead-of-time loops may be used (``MPIUQ_AOT`` is not ``off``/``0``/``no``)."""
    return os.environ.get(AOT_ENV, "").strip().lower() not in ("off", "0", "no", "false")


def _cpu_key() -> str:
    """The CPU's model name and instruction-set flags (Linux), else its architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            model = flags = ""
            for line in fh:
                if not model and line.startswith("model name"):
                    model = line
                elif not flags and line.startswith(("flags", "Features")):
                    flags = line
                if model and flags:
                    break
        return f"{platform.machine()}|{model.strip()}|{flags.strip()}"
    except OSError:
        return f"{platform.machine()}|{platform.processor()}"


def _package_key(name: str, version_file: str) -> str:
    """Where package ``name`` is installed and when its ``version_file`` changed (an
    upgrade rewrites it), without importing the package."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return f"no-{name}"
    try:
        return f"{spec.origin}|{Path(spec.origin).with_name(version_file).stat().st_mtime_ns}"
    except OSError:
        return spec.origin


def module_name() -> str:
    """The extension module's name for the current sources, NumPy, Python, numba and CPU."""
    from mpiuq.simulator._sources import PARSER_SOURCES, digest_of, sources_digest

    h = hashlib.sha256()
    for part in (
        str(AOT_FORMAT),
        sources_digest(),
        digest_of(PARSER_SOURCES),
        _package_key("numpy", "version.py"),
        sys.implementation.cache_tag or "",
        _package_key("numba", "_version.py"),
        _cpu_key(),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return f"mpiuq_loops_{h.hexdigest()[:20]}"


def module_path(name: str | None = None) -> Path:
    """Path of the extension module (``name`` by default :func:`module_name`)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return aot_folder() / f"{name or module_name()}{suffix}"


def table_path(name: str | None = None) -> Path:
    """Path of the module's export table (JSON): loop -> [[fingerprint, export], ...]."""
    return aot_folder() / f"{name or module_name()}.json"


def _load() -> None:
    """Import the module and its table once per process (nothing if either is missing)."""
    with _lock:
        if _loaded["done"]:
            return
        try:
            _load_module()
        finally:
            # only now: a thread that finds it done reads a loaded module (or none)
            _loaded["done"] = True


def _load_module() -> None:
    """:func:`_load`'s work, under its lock."""
    if not aot_enabled():
        return
    name = module_name()
    so, table_file = module_path(name), table_path(name)
    if not so.is_file() or not table_file.is_file():
        return
    try:
        table = json.loads(table_file.read_text(encoding="utf-8"))
        spec = importlib.util.spec_from_file_location(name, so)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # damaged, foreign or incompatible: numba's loops run instead
        return
    _loaded["module"] = module
    _loaded["path"] = so
    _loaded["table"] = {loop: dict(entries) for loop, entries in table.get("loops", {}).items()}


def loaded_module_path() -> Path | None:
    """Path of the ahead-of-time module this process runs loops from (``None``: none)."""
    _load()
    path = _loaded["path"]
    return path if isinstance(path, Path) else None


def forget() -> None:
    """Forget the loaded module and table: the next call looks for them again (tests,
    and the build, which must see numba's dispatchers)."""
    with _lock:
        _loaded.update(done=False, module=None, table={}, path=None)


def disable() -> None:
    """Run no loop from an ahead-of-time module in this process (until :func:`forget`)."""
    with _lock:
        _loaded.update(done=True, module=None, table={}, path=None)


def fingerprint(value: Any) -> Any:
    """The argument's type as numba's ``typeof`` tells types apart (``None`` if it is
    not one the module's exports take).

    Arrays: dtype, dimensions, layout (numba's ``C``/``F``/``A`` rule), writeable and
    aligned; named tuples: class and fields; tuples, booleans, integers (numba types a
    Python ``int`` as int64 below 2**63), floats and NumPy scalars.
    """
    if isinstance(value, tuple):
        fields = tuple(fingerprint(v) for v in value)
        if any(f is None for f in fields):
            return None
        cls = type(value)
        if hasattr(cls, "_fields"):
            return ("n", f"{cls.__module__}.{cls.__qualname__}", fields)
        return ("t", fields)
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            flags = value.flags
            layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
            return ("a", value.dtype.str, value.ndim, layout, flags.writeable, flags.aligned)
        if isinstance(value, np.generic):
            return ("s", value.dtype.str)
    if isinstance(value, bool):
        return ("b",)
    if isinstance(value, int):
        return ("i",) if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        return ("f",)
    return None


def fingerprint_key(args: tuple[Any, ...]) -> str | None:
    """The table key of a call's arguments (``None``: no export takes them)."""
    fp = fingerprint(args)
    return None if fp is None else repr(fp)


def aot_function(loop: str, args: tuple[Any, ...]) -> Callable[..., Any] | None:
    """The ahead-of-time compiled ``loop`` (``module:qualname``) for ``args``, if the
    module has one compiled for exactly their types; else ``None``."""
    if not _loaded["done"]:
        _load()
    if _loaded["module"] is None:
        return None
    exports = _loaded["table"].get(loop)
    if not exports:
        return None
    key = fingerprint_key(args)
    export = exports.get(key) if key is not None else None
    if export is None:
        return None
    function: Callable[..., Any] | None = getattr(_loaded["module"], export, None)
    return function
