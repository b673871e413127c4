"""Run compiled loops that release the GIL in worker threads and report their progress.

The event loop (``nogil=True``) runs for minutes on large traces as one compiled call.
:func:`run_watched` runs such a call in a thread while the calling thread samples how
far it got (e.g. the ranks' program counters) and hands the fraction to a callback.
The call's arguments and results are the same as without a watcher, so results are
bit-identical; only the caller's thread waits differently. :func:`run_concurrently`
runs several such calls at once (e.g. one replay per network model), :func:`run_pair`
two (e.g. the two halves of a trace's files).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
A = TypeVar("A")
H = TypeVar("H")

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


def run_concurrently(
    call: Callable[[A], T], items: Sequence[A], threads: int, first: Callable[[A], int]
) -> list[T]:
    """``[call(x) for x in items]``, on ``threads`` threads, started in ``first(x)`` order.

    An exception is raised for the first item in ``items`` order whose call failed, as
    the sequential loop would, once every started call has ended.
    """
    from concurrent.futures import ThreadPoolExecutor  # with logging: 5 ms a one-model run skips

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mpiuq-run") as pool:
        order = sorted(range(len(items)), key=lambda j: first(items[j]))
        futures = {j: pool.submit(call, items[j]) for j in order}
        return [futures[j].result() for j in range(len(items))]


def run_pair(
    head: Callable[[], H], tail: Callable[[], T], *, name: str = "mpiuq-pair"
) -> tuple[H, T]:
    """``(head(), tail())``, ``tail`` in a worker thread (named ``name``) while ``head``
    runs in this one: :func:`run_concurrently` for two calls, without a thread pool
    (whose import a cached replay otherwise skips).

    Both run to their end; an exception of ``head`` is raised first (the work that
    comes first, as a caller orders it: the first files of a trace, say), else one of
    ``tail``.
    """
    tail_out: list[T] = []
    failure: list[BaseException] = []

    def run_tail() -> None:
        try:
            tail_out.append(tail())
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)

    worker = threading.Thread(target=run_tail, name=name, daemon=True)
    worker.start()
    try:
        head_out = head()
    finally:
        worker.join()
    if failure:
        raise failure[0]
    return head_out, tail_out[0]


def one_at_a_time(callback: Callable[[A], None]) -> Callable[[A], None]:
    """``callback`` behind a lock, for reports coming from several threads."""
    lock = threading.Lock()

    def serialized(value: A) -> None:
        with lock:
            callback(value)

    return serialized


#: Environment variable setting the threads of in-process simulator batches (a machine
#: shared with other jobs, or several processes that already share its cores).
THREADS_ENV = "MPIUQ_SIMULATOR_THREADS"
#: Most threads that variable may ask for.
MAX_THREADS = 1024


def simulator_threads() -> int:
    """Threads for in-process simulator batches: ``$MPIUQ_SIMULATOR_THREADS`` when set,
    otherwise :func:`usable_cores`.

    Raises
    ------
    SimulatorError
        If the variable is set to anything but a whole number from 1 to
        :data:`MAX_THREADS`.
    """
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return usable_cores()
    n = int(raw) if raw.isdecimal() else 0
    if not 1 <= n <= MAX_THREADS:
        from mpiuq.simulator.errors import SimulatorError

        raise SimulatorError(
            f"environment variable {THREADS_ENV} = {raw!r} is invalid: expected a whole "
            f"number of threads from 1 to {MAX_THREADS} (or unset: every usable core)"
        )
    return n


def usable_cores() -> int:
    """CPUs this process may run on (its affinity set where the OS has one), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # no affinity sets on this OS
        return max(os.cpu_count() or 1, 1)
