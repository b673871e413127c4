"""Ctrl-C honoured at any moment of a command: within a second, one line, exit 130.

Python runs a signal handler in the main thread only, between two bytecodes: while
the main thread is inside a numba compilation (LLVM checks no signals) or a long
compiled loop, Ctrl-C would wait for minutes. So the console script runs the command
in a worker thread (:func:`run_interruptibly`) while the main thread only waits for it,
a wait that a signal interrupts at once. On SIGINT the main thread's handler prints
``mpiuq COMMAND: interrupted`` on stderr, removes the temporary files being written
(:data:`mpiuq.surrogate.store.atomic_write.IN_FLIGHT`), and ends the process with exit code
130 without waiting for the worker. What the command had finished is on disk as after
a kill: result files, checkpoints and cache entries are written to temporary names and
renamed into place, and every compiled loop is cached as soon as it is compiled.
"""

from __future__ import annotations

import _signal  # the C module (``signal`` would import enum, functools)
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from mpiuq.runtime.exit_codes import EXIT_INTERRUPTED

#: Seconds between two checks of the worker by the waiting main thread.
POLL_S = 0.1


def remove_in_flight_files() -> None:
    """Remove the temporary files the command is writing now (if it writes any)."""
    atomic = sys.modules.get("mpiuq.surrogate.store.atomic_write")
    for path in list(getattr(atomic, "IN_FLIGHT", ())):
        with contextlib.suppress(OSError):
            path.unlink()


#: Seconds after a compilation ends during which an interrupt waits: numba writes the
#: loop's cache entry after its compile event (milliseconds), so a signal in that gap
#: would lose a finished compile.
SAVE_GRACE_S = 0.5


def let_the_cache_write_finish() -> None:
    """Wait out :data:`SAVE_GRACE_S` after the last compilation's end, if it ended that
    recently (numba imported only if the command had imported it)."""
    # the worker may be importing the module right now: a partially initialised module
    # has no LAST_COMPILE_END yet (nothing compiled, nothing to wait for)
    last_end = getattr(sys.modules.get("mpiuq.simulator.runtime.jit"), "LAST_COMPILE_END", None)
    if last_end:
        wait = SAVE_GRACE_S - (time.monotonic() - last_end[0])
        if wait > 0:
            time.sleep(wait)


def stop_now(command: str) -> None:
    """Print ``mpiuq COMMAND: interrupted``, remove the files in flight and end the process
    with exit code 130 (no clean-up of the interpreter: the worker may be in a loop).

    Whatever the worker is doing (importing a module, changing the set of files in
    flight), this ends with that one line and exit 130: a second Ctrl-C is ignored and a
    failure of the clean-up steps is not reported.
    """
    try:
        with contextlib.suppress(ValueError, OSError):  # not the main thread / no signals
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        try:
            let_the_cache_write_finish()
        finally:
            remove_in_flight_files()
    except BaseException:  # the process ends with the one line anyway
        pass
    try:
        name = f"mpiuq {command}" if command else "mpiuq"
        prefix = "\r\x1b[K" if sys.stderr.isatty() else ""
        # straight to the descriptor: the worker may hold the stream's lock
        os.write(2, f"{prefix}{name}: interrupted\n".encode())
    except BaseException:  # no stderr: the exit code says it
        pass
    finally:
        os._exit(EXIT_INTERRUPTED)


def run_interruptibly(work: Callable[[], int], command: Callable[[], str]) -> int:
    """``work()`` in a worker thread, the main thread waiting; on Ctrl-C :func:`stop_now`.

    ``command()`` names the command for the message. Exceptions of ``work`` (including
    ``SystemExit`` from a usage error) are raised again in the main thread.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["code"] = work()
        except BaseException as exc:  # handed to the main thread
            outcome["error"] = exc

    def on_sigint(signum: int, frame: Any) -> None:
        # the handler itself ends the process: no KeyboardInterrupt is raised, so none
        # can be swallowed half-way (by an import the worker is running, say)
        stop_now(command())

    worker = threading.Thread(target=target, name="mpiuq-command", daemon=True)
    main_thread = threading.current_thread() is threading.main_thread()
    # before: the console script's early handler (mpiuq.console), put back afterwards
    previous = _signal.signal(_signal.SIGINT, on_sigint) if main_thread else None
    try:
        worker.start()
        while worker.is_alive():
            worker.join(POLL_S)
    finally:
        if main_thread and previous is not None:
            _signal.signal(_signal.SIGINT, previous)
    if "error" in outcome:
        raise outcome["error"]
    return int(outcome["code"])
