"""Run a compiled loop that releases the GIL in a worker thread and report its progress.

The event loop (``nogil=True``) runs for minutes on large traces as one compiled call.
:func:`run_watched` runs such a call in a thread while the calling thread samples how
far it got (e.g. the ranks' program counters) and hands the fraction to a callback.
The call's arguments and results are the same as without a watcher, so results are
bit-identical; only the caller's thread waits differently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds between two samples of a watched call's progress.
POLL_INTERVAL_S = 0.5


def run_watched(
    call: Callable[[], T],
    done_fraction: Callable[[], float],
    on_progress: Callable[[float], None],
    interval_s: float = POLL_INTERVAL_S,
) -> T:
    """Run ``call()`` in a worker thread, calling ``on_progress(done_fraction())`` meanwhile.

    Parameters
    ----------
    call
        The work; should release the GIL (a ``nogil`` compiled function), or the
        samples come late.
    done_fraction
        Fraction of the work done, in [0, 1] (clipped); read while the work runs, so
        it must only read memory the work writes (a racy but harmless snapshot).
    on_progress
        Receives the fraction every ``interval_s`` seconds and ``1.0`` at the end.
    interval_s
        Seconds between two samples.

    Returns
    -------
    The value of ``call()``; an exception it raised is raised again here.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="mpiuq-watched", daemon=True)
    worker.start()
    while True:
        worker.join(interval_s)
        if not worker.is_alive():
            break
        on_progress(min(max(done_fraction(), 0.0), 1.0))
    if failure:
        raise failure[0]
    on_progress(1.0)
    return outcome[0]
