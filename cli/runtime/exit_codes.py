"""How every failure of an ``mpiuq`` command becomes one line and an exit code.

The one place that maps exceptions to exit codes:

===========  ==========================================================================
exit code    meaning
===========  ==========================================================================
0            success
1            the run failed: a model raised mid-run, a write failed (disk full, I/O
             error), MCMC did not converge, an internal error (a bug: please report it)
2            bad input: a malformed file, an invalid option or setting (any
             ``ValueError``), a budget exceeded by the requested settings, a path that
             does not exist or cannot be read
130          interrupted (Ctrl-C)
===========  ==========================================================================

Typed errors carry the file, key or line in their message; :func:`describe` adds the
file name where Python's own errors leave it out.  ``mpiuq --debug`` re-raises instead,
so the traceback is shown.
"""

from __future__ import annotations

import errno
import json

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

#: ``errno`` values of an :class:`OSError` that mean "the path the user gave is wrong"
#: (exit 2); any other :class:`OSError` (disk full, I/O error...) is a failed run (exit 1).
PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.EACCES,
        errno.EPERM,
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.EEXIST,
        errno.EROFS,
    }
)


def _typed_exit_codes() -> tuple[tuple[type[BaseException], int], ...]:
    """``(exception type, exit code)``, most specific first (first match wins)."""
    from mpiuq.calibration.errors import CalibrationError, SamplerError
    from mpiuq.simulator.errors import DeadlockError, SimulatorError
    from mpiuq.surrogate.errors import (
        DesignMismatchError,
        DesignRunError,
        IncompleteDesignError,
        StoreError,
        StoreWriteError,
        SurrogateInputError,
    )

    return (
        (StoreWriteError, EXIT_FAILED),
        (DesignMismatchError, EXIT_BAD_INPUT),
        (IncompleteDesignError, EXIT_BAD_INPUT),
        (StoreError, EXIT_BAD_INPUT),
        (DesignRunError, EXIT_FAILED),
        (SurrogateInputError, EXIT_BAD_INPUT),
        (SamplerError, EXIT_FAILED),
        (CalibrationError, EXIT_BAD_INPUT),
        (DeadlockError, EXIT_FAILED),
        (SimulatorError, EXIT_BAD_INPUT),
        (UnicodeError, EXIT_BAD_INPUT),
        (json.JSONDecodeError, EXIT_BAD_INPUT),
        (MemoryError, EXIT_FAILED),
        (ValueError, EXIT_BAD_INPUT),
        (RuntimeError, EXIT_FAILED),
    )


def exit_code(exc: BaseException) -> int:
    """Exit code of a failure (see the module table)."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    for kind, code in _typed_exit_codes():
        if isinstance(exc, kind):
            return code
    if isinstance(exc, OSError):
        return EXIT_BAD_INPUT if exc.errno in PATH_ERRNOS else EXIT_FAILED
    return EXIT_FAILED


def describe(exc: BaseException) -> str:
    """One line saying what went wrong: the typed error's message, or a plain description."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror}" if where else exc.strerror
        if exc.filename2 is not None:
            text += f" (-> {exc.filename2})"
    elif isinstance(exc, MemoryError):
        text = "out of memory" + (f" ({exc})" if str(exc) else "")
    else:
        text = str(exc) or type(exc).__name__
        if exit_code(exc) == EXIT_FAILED and not _is_typed(exc):
            text = f"internal error: {type(exc).__name__}: {text} (run 'mpiuq --debug ...' for the traceback and please report it)"
    return " ".join(text.split())


def _is_typed(exc: BaseException) -> bool:
    return any(isinstance(exc, kind) for kind, _ in _typed_exit_codes()) or isinstance(exc, OSError)
