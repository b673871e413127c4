"""Running a C trace library where its crashes cannot take the process down.

libundumpi (the C library under pydumpi) trusts the file: on corrupted input it
fails assertions (``dumpi_membuf_read: Assertion '0' failed``) or dereferences bad
offsets, which aborts or segfaults the whole Python process. Validating files
beforehand would mean re-implementing its decoding of some 300 record layouts, and
any difference from the library would leave a crash open. So the whole DUMPI read
runs in a forked child process instead; OTF2 reads do too (libotf2 and its Python
bindings print their own errors and tracebacks on stderr, and a C library reading a
damaged file is better kept apart):

* the child inherits the imported modules (``os.fork``), so starting it costs
  only the fork itself (a few ms), not a new interpreter; unlike a
  ``multiprocessing`` child it also works inside daemonic pool workers;
* every record callback writes the rank file and record it is at into shared
  memory, so when the child dies the parent can name where;
* the child's stdout and stderr go to a temporary file: the library's messages
  become part of the error (or a note) instead of terminal noise;
* its address space is capped (inherited size + 2 GiB + 100 x input size), so a
  corrupted size field fails at once instead of exhausting the machine;
* the result (a :class:`Trace`, a few dense arrays) comes back pickled through a
  pipe; a child that dies by a signal, exits without answering or runs past the
  time limit becomes a :class:`TraceFormatError` naming file, rank and record.
"""

from __future__ import annotations

import contextlib
import faulthandler
import mmap
import os
import pickle
import re
import resource
import select
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpiuq.simulator.trace.errors import TraceFormatError, UnsupportedTraceError

__all__ = ["ChildResult", "Progress", "run_contained", "time_limit_s"]

#: Slots of the shared progress array.
P_FILE = 0  # index of the rank file being read
P_RECORD = 1  # index of the last record whose callback ran (-1: none yet)
P_PHASE = 2  # 0: opening (header, datatype table), 1: reading the record stream

#: Address space the child may add to what it inherits: a floor plus this many times
#: the input size. Reading takes tens of bytes of Python objects per input byte; a
#: corrupted size field (libotf2 asked for 18 GB and spent 7 s on one damaged anchor
#: file) fails at once instead of slowing or exhausting the machine.
MEMORY_FLOOR_BYTES = 2 << 30
MEMORY_PER_INPUT_BYTE = 100

#: Seconds allowed for reading: a floor plus this much per MB of input (libundumpi
#: reads about 5 MB/s here, the OTF2 bindings about 2 MB/s; the margin is for slow
#: or loaded machines).
TIME_FLOOR_S = 60.0
TIME_PER_MB_S = 10.0


class Progress:
    """Where the child is: ``file`` (or OTF2 location), ``record`` and ``phase``."""

    def __init__(self, shared: Any) -> None:
        self._a = shared

    def at_file(self, index: int) -> None:
        """Start reading rank file ``index`` (opening phase)."""
        self._a[P_FILE], self._a[P_RECORD], self._a[P_PHASE] = index, -1, 0

    def streaming(self) -> None:
        """The header and datatype table are read; the record stream starts."""
        self._a[P_PHASE] = 1

    def at(self, index: int, record: int) -> None:
        """At ``record`` of file (or location) ``index``, in the record stream."""
        self._a[P_FILE], self._a[P_RECORD], self._a[P_PHASE] = index, record - 1, 1

    def record(self, index: int) -> None:
        """Record ``index`` of the current file was decoded."""
        self._a[P_RECORD] = index

    def where(self) -> tuple[int, int, int]:
        """(file index, last decoded record, phase)."""
        return int(self._a[P_FILE]), int(self._a[P_RECORD]), int(self._a[P_PHASE])


@dataclass(frozen=True)
class ChildResult:
    """What the child returned and what it printed on stderr."""

    value: Any
    stderr_lines: tuple[str, ...]


def _input_bytes(files: Sequence[Path]) -> int:
    size = 0
    for f in files:
        for g in f.parent.rglob("*") if f.suffix == ".otf2" else [f]:
            with contextlib.suppress(OSError):
                size += g.stat().st_size if g.is_file() else 0
    return size


def time_limit_s(files: Sequence[Path]) -> float:
    """Time allowed to read ``files``: TIME_FLOOR_S + TIME_PER_MB_S per MB."""
    return TIME_FLOOR_S + TIME_PER_MB_S * _input_bytes(files) / 1e6


def _limit_memory(extra: int) -> None:
    """Cap the address space at the current size plus ``extra`` bytes (Linux)."""
    try:
        with open("/proc/self/status") as fh:
            size = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmSize:"))
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, StopIteration):
        pass  # no /proc or no permission: run without the cap


def _child(
    write_fd: int, target: Callable[[Progress], Any], shared: Any, err_fd: int, memory: int
) -> None:
    """Body of the forked child: run the target, write the pickled answer, never return."""
    try:
        faulthandler.disable()  # a library abort must end the child quietly (it is reported)
        _limit_memory(memory)
        for fd in (1, 2):  # C-level output of the library
            os.dup2(err_fd, fd)
        # Python-level output too (it may have been redirected away from fd 1/2)
        sys.stdout = sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        try:
            msg: tuple[Any, ...] = ("ok", target(Progress(shared)))
        except TraceFormatError as exc:
            msg = ("format", exc.reason, exc.file, exc.rank, exc.record)
        except UnsupportedTraceError as exc:
            msg = ("unsupported", str(exc))
        except BaseException as exc:  # reported in full by the parent
            msg = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
        data = memoryview(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))
        while data:
            data = data[os.write(write_fd, data) :]
    finally:
        os._exit(0)  # no atexit handlers or buffered output of the parent's state


def _answer(read_fd: int, limit: float) -> tuple[bytes, bool]:
    """Everything the child writes until it closes the pipe; (data, timed out)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_fd], [], [], left)[0]:
            return b"".join(chunks), True
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def run_contained(
    target: Callable[[Progress], Any],
    files: Sequence[Path],
    ranks: Sequence[int],
    *,
    timeout_s: float | None = None,
    reader: str = "the DUMPI reader (libundumpi)",
) -> ChildResult:
    """Run ``target(progress)`` in a forked child; return its value and its stderr.

    ``files[i]`` is the file of world rank ``ranks[i]`` (for error messages; one file
    for all ranks of an OTF2 archive); ``reader`` names the library in messages.

    Raises
    ------
    TraceFormatError
        Raised by the target, or when the child died (signal), exited without an
        answer or exceeded ``timeout_s`` (default :func:`time_limit_s`): naming the
        rank file, rank and record being decoded and libundumpi's last message.
    UnsupportedTraceError
        Raised by the target.
    RuntimeError
        Any other exception in the target (a defect), with its traceback.
    """
    shared = np.frombuffer(mmap.mmap(-1, 3 * 8), dtype=np.int64)  # shared with the child
    shared[P_RECORD] = -1
    limit = time_limit_s(files) if timeout_s is None else timeout_s
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as err:
        read_fd, write_fd = os.pipe()
        pid = os.fork()  # os.fork rather than multiprocessing: works in daemonic workers too
        if pid == 0:
            os.close(read_fd)
            memory = MEMORY_FLOOR_BYTES + MEMORY_PER_INPUT_BYTE * _input_bytes(files)
            _child(write_fd, target, shared, err.fileno(), memory)
        os.close(write_fd)
        try:
            data, timed_out = _answer(read_fd, limit)
        finally:
            os.close(read_fd)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _pid, status = os.waitpid(pid, 0)
        exitcode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        msg: tuple[Any, ...] | None = None
        if data and not timed_out:
            try:
                msg = pickle.loads(data)
            except Exception:  # cut short: the child died while writing
                msg = None
        err.seek(0)
        lines = tuple(
            ln.strip() for ln in err.read().decode("utf-8", "replace").splitlines() if ln.strip()
        )
    if msg is None:
        where = Progress(shared).where()
        raise _died(where, files, ranks, lines, (reader, exitcode, timed_out, limit))
    kind = msg[0]
    if kind == "ok":
        return ChildResult(msg[1], lines)
    if kind == "format":
        raise TraceFormatError(msg[1], file=msg[2], rank=msg[3], record=msg[4])
    if kind == "unsupported":
        raise UnsupportedTraceError(msg[1])
    raise RuntimeError(f"{reader} failed: {msg[1]}\n{msg[2]}")


def _died(
    where: tuple[int, int, int],
    files: Sequence[Path],
    ranks: Sequence[int],
    lines: tuple[str, ...],
    how: tuple[str, int | None, bool, float],
) -> TraceFormatError:
    fi, last, phase = where
    reader, exitcode, timed_out, limit = how
    rank = ranks[fi] if 0 <= fi < len(ranks) else None
    file = files[min(max(fi, 0), len(files) - 1)]
    if phase == 0:
        place = "opening the file (header and definitions)"
    elif last < 0:
        place = "decoding record 0 (the first)"
    else:
        place = f"decoding record {last + 1} (records 0..{last} were read)"
    said = ""
    if lines:  # the library's last message, without the "python: " program prefix
        said = "; it reported: " + re.sub(r"^[^\s:]+: ", "", lines[-1])[:200].rstrip(".")
    if timed_out:
        what = f"did not finish within {limit:.0f} s and was stopped"
    else:
        what = f"died ({_signal_name(exitcode)})"
    return TraceFormatError(
        f"{reader} {what} while {place}{said}. The file is corrupt",
        file=str(file),
        rank=rank,
        record=last + 1 if phase == 1 else None,
    )
