"""The source files compiled into the loops, and their digest (what their caches are
keyed on, :mod:`mpiuq.simulator.runtime.jit`). Imports neither numba nor NumPy."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

__all__ = ["COMPILED_SOURCES", "digest_of", "sources_digest"]

_HERE = Path(__file__).resolve().parents[1]

#: Source files compiled into the loops (by inlining or as frozen constants), relative
#: to the ``simulator`` folder; a glob per package. (``runtime/jit.py`` is not one: what of it
#: reaches the machine code, the loops' default options, is in the caches' stamp.)
COMPILED_SOURCES: tuple[str, ...] = (
    "runtime/borrow.py",
    "runtime/prefetch.py",
    "program/check.py",
    "lowering/kernel.py",
    "codes.py",
    "parameters.py",
    "trace/ir.py",
    "trace/limits.py",
    "trace/ti/args.py",
    "trace/ti/assemble.py",
    "trace/ti/groups.py",
    "trace/ti/kernel.py",
    "trace/ti/lex.py",
    "trace/ti/parse.py",
    "trace/ti/state.py",
    "kernel/**/*.py",
    "networks/*.py",
    "topologies/routing.py",
    "topologies/zone_rout*.py",
)


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
