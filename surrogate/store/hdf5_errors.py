"""One-line errors for failed HDF5 writes (full disk, I/O error), naming the file.

h5py reports a failed write as an ``OSError`` whose text is HDF5's error stack: "Can't
synchronously write data (file write failed: time = ..., filename = '....partial-123',
file descriptor = 3, errno = 28, error message = 'No space left on device', buf =
0x..., total write size = ...)". :func:`naming_hdf5_errors` turns it into
``OSError(28, 'No space left on device', 'results/x/surrogate.h5')``, which the CLI
prints as ``results/x/surrogate.h5: No space left on device`` (exit 1).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

_ERRNO = re.compile(r"errno = (\d+)")
_MESSAGE = re.compile(r"error message = '([^']*)'")


def hdf5_reason(exc: BaseException) -> str:
    """The short reason of an h5py error: the system's message for its errno (``No space
    left on device``), else HDF5's message without its details."""
    code = getattr(exc, "errno", None)
    text = " ".join(str(exc).split())
    if not isinstance(code, int):
        found = _ERRNO.search(text)
        code = int(found.group(1)) if found else None
    if isinstance(code, int) and code > 0:
        return os.strerror(code)
    message = _MESSAGE.search(text)
    if message:
        return message.group(1)
    return re.sub(r"^\[Errno \d+\] ", "", text).split(" (", 1)[0] or type(exc).__name__


def hdf5_error(path: str | os.PathLike[str], exc: BaseException) -> OSError:
    """An ``OSError`` naming ``path`` with the short reason of an h5py error ``exc``."""
    code = getattr(exc, "errno", None)
    if not isinstance(code, int):
        found = _ERRNO.search(str(exc))
        code = int(found.group(1)) if found else None
    return OSError(code, hdf5_reason(exc), str(Path(path)))


class naming_hdf5_errors:
    """Raise an HDF5 write failure inside the block once, as :func:`hdf5_error` of ``path``.

    Covers both ways h5py reports a failed write: an exception (re-raised naming
    ``path``), and a failure while freeing an object, which h5py only prints ("Exception
    ignored in: 'h5py._objects.ObjectID.__dealloc__'" and HDF5's whole error text) and
    otherwise ignores, so that a file a full disk truncated would pass as written: inside
    the block such reports are not printed, and the block raises the first of them.
    Errors that already name a file (Python's own) pass unchanged. After a failure,
    :data:`FAILED_WRITES` counts it: HDF5 may hold objects it cannot free (see
    :func:`unsafe_to_finalize`).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._hooks: tuple[Any, Any] = (sys.unraisablehook, sys.excepthook)
        self._ignored: BaseException | None = None

    def __enter__(self) -> None:
        # h5py's compiled destructors print a failure with sys.excepthook (its traceback),
        # then sys.unraisablehook ("Exception ignored in: ..."): both recorded, not printed
        self._hooks = unraisable, excepthook = sys.unraisablehook, sys.excepthook

        def record_unraisable(info: Any) -> None:
            if _from_hdf5(info.exc_value):
                self._ignored = self._ignored or info.exc_value
            else:
                unraisable(info)

        def record_excepthook(kind: Any, value: Any, tb: Any) -> None:
            if _from_hdf5(value):
                self._ignored = self._ignored or value
            else:
                excepthook(kind, value, tb)

        sys.unraisablehook = record_unraisable
        sys.excepthook = record_excepthook

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sys.unraisablehook, sys.excepthook = self._hooks
        failure = exc if exc is not None and _from_hdf5(exc) else None
        if failure is None and exc is None:
            failure = self._ignored
        if failure is None:
            return
        # HDF5 cannot close what the failed write left open, and freeing it can crash the
        # interpreter (h5py issue 914, h5netcdf's File.__del__): kept alive instead
        FAILED_WRITES.append(failure)
        raise hdf5_error(self.path, failure) from None


#: The failures of HDF5 writes in this process, with the objects their tracebacks hold
#: (see :class:`naming_hdf5_errors`).
FAILED_WRITES: list[BaseException] = []


def unsafe_to_finalize() -> bool:
    """Whether an HDF5 write failed in this process: HDF5 then holds objects it cannot
    close, and freeing them when the interpreter exits can crash it (h5py issue 914); a
    command ending after such a failure should leave with :func:`os._exit`."""
    return bool(FAILED_WRITES)


def _from_hdf5(exc: BaseException | None) -> bool:
    """Whether ``exc`` is h5py's report of a failed operation (not Python's own)."""
    if isinstance(exc, OSError):
        return exc.filename is None and ("(" in str(exc) or isinstance(exc.errno, int))
    return isinstance(exc, RuntimeError) and _ERRNO.search(str(exc)) is not None
