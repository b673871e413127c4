"""Write a file so that a kill at any moment leaves either the old file or the new one.

The content goes to a temporary name in the same folder; after it is complete and
flushed to disk, :func:`os.replace` renames it over the target (atomic on POSIX), and
the folder entry is flushed too.  A temporary file left by a killed process is never
read: its name (``<name>.partial-<pid>``) is not the target's.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PARTIAL_MARK = ".partial-"

#: Temporary files being written now by :func:`replace_atomically` (the command line
#: removes them if the process is interrupted, :mod:`mpiuq.runtime.interrupt`).
IN_FLIGHT: set[Path] = set()


def partial_path(path: Path) -> Path:
    """The temporary name of ``path`` for this process: ``<name>.partial-<pid>``."""
    return path.with_name(f"{path.name}{PARTIAL_MARK}{os.getpid()}")


def fsync_file(path: Path) -> None:
    """Flush a written file's data to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk; a no-op where unsupported."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. no O_RDONLY on folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on folders
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def replace_atomically(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` atomically.

    On an exception (or a kill) ``path`` is untouched and the temporary file removed
    (or, after a kill, left under its ``.partial-<pid>`` name, removed by the next write of
    ``path``: :func:`remove_stale_partials`). An :class:`OSError` that names no file (a
    write on a full disk) is raised again naming ``path``.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with replace_atomically(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    target = Path(path)
    if not target.parent.is_dir():
        raise FileNotFoundError(
            errno.ENOENT, "no such folder to write into", str(target.parent or ".")
        )
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, expected a file name", str(target))
    remove_stale_partials(target)
    tmp = partial_path(target)
    IN_FLIGHT.add(tmp)
    try:
        yield tmp
        fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename in (None, str(tmp), tmp):
            # a failed write (a full disk: ENOSPC) names no file: name the target
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise
    finally:
        IN_FLIGHT.discard(tmp)
    fsync_dir(target.parent)


def remove_stale_partials(path: Path) -> None:
    """Remove ``<name>.partial-<pid>`` files of ``path`` left by processes that are gone."""
    for stale in path.parent.glob(f"{path.name}{PARTIAL_MARK}*"):
        pid_text = stale.name.rsplit(PARTIAL_MARK, 1)[-1]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and _alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            stale.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # pragma: no cover - exists, owned by someone else
        return True
    return True


def save_figure_atomically(fig: Any, path: str | os.PathLike[str], **savefig_kwargs: Any) -> Path:
    """``fig.savefig(path, ...)`` (a matplotlib figure) through :func:`replace_atomically`:
    a full disk or a kill leaves the previous figure, and the error names ``path``. The
    format is the file name's extension (the temporary name has another)."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    with replace_atomically(target) as tmp:
        fig.savefig(tmp, format=fmt, **savefig_kwargs)
    return target
