"""Where batched model evaluations run: in process, in local processes, or on Dask.

One small contract, :class:`Executor`: ``map_unordered(fn, items)`` yields
``(index, fn(items[index]))`` pairs as they finish, and ``close()`` releases the
workers (executors are also context managers).  Functions take an executor as an
argument; only the edges (CLI, campaign) build one, with :func:`make_executor`.

Closing the iterator returned by ``map_unordered`` early (``break`` or ``.close()``)
cancels the evaluations not yet started.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from mpiuq.surrogate.budget import check_memory, format_bytes
from mpiuq.surrogate.errors import ExecutorConfigError

T = TypeVar("T")
R = TypeVar("R")

#: Memory of one local worker process (interpreter, numpy, numba, a model), bytes.
WORKER_PROCESS_BYTES = 200 * 2**20

_ADDRESS = re.compile(r"^(tcp|tls)://[^\s:/]+:\d{1,5}$")


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` over items, yielding ``(index, result)`` in completion order."""

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Evaluate ``fn(items[i])`` for every ``i``; yield ``(i, result)`` as each finishes.

        An exception raised by ``fn`` propagates out of the iterator.
        """
        ...

    def close(self) -> None:
        """Release workers; the executor cannot be used afterwards."""
        ...

    def __enter__(self) -> Self:
        """Use as a context manager: ``close()`` on exit."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the executor."""
        ...


class _ContextMixin:
    def close(self) -> None:  # overridden where there is something to release
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _check_workers(workers: int | None, what: str) -> int | None:
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ExecutorConfigError(f"{what}: workers must be an integer >= 1, got {workers!r}")
    return workers


class InProcessExecutor(_ContextMixin):
    """Evaluate items one after the other in the calling process (the default)."""

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(i, fn(items[i]))`` in index order."""
        for i, item in enumerate(items):
            yield i, fn(item)


def _ignore_interrupts() -> None:
    """A worker process ignores Ctrl-C (the terminal sends it to the whole process group):
    the parent decides, and a worker ends when the parent's pool goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ProcessExecutor(_ContextMixin):
    """A local pool of worker processes (:class:`concurrent.futures.ProcessPoolExecutor`).

    Parameters
    ----------
    workers : int
        Number of processes, >= 1.
    start_method : str
        ``multiprocessing`` start method; ``"spawn"`` (default) is safe with threaded
        parents, so ``fn`` and items must be picklable by reference or value.
    max_pending : int, optional
        Items in flight at once (default ``4 * workers``); bounds the work lost on
        interruption.
    """

    def __init__(
        self, workers: int, start_method: str = "spawn", max_pending: int | None = None
    ) -> None:
        checked = _check_workers(workers, "ProcessExecutor")
        self.workers = int(checked) if checked is not None else 1
        self.max_pending = _check_workers(max_pending, "ProcessExecutor max_pending") or (
            4 * self.workers
        )
        ctx = multiprocessing.get_context(start_method)
        self._pool: cf.ProcessPoolExecutor | None = cf.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=ctx, initializer=_ignore_interrupts
        )

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(i, fn(items[i]))`` as worker processes finish them."""
        if self._pool is None:
            raise ExecutorConfigError("ProcessExecutor is closed")
        pool = self._pool
        pending: dict[cf.Future[R], int] = {}
        next_item = 0
        try:
            while next_item < len(items) or pending:
                while next_item < len(items) and len(pending) < self.max_pending:
                    pending[pool.submit(fn, items[next_item])] = next_item
                    next_item += 1
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    yield pending.pop(fut), fut.result()
        finally:
            for fut in pending:
                fut.cancel()

    def close(self) -> None:
        """Shut the pool down, cancelling queued work."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(_ContextMixin):
    """Evaluate items on a Dask distributed cluster.

    Parameters
    ----------
    address : str, optional
        Scheduler address ``tcp://HOST:PORT`` of a running cluster.  When omitted, a
        :class:`distributed.LocalCluster` is started on loopback (127.0.0.1, TCP) and
        closed by :meth:`close`.
    workers : int, optional
        Workers of the local cluster (default 1; ignored with ``address``).
    processes : bool
        Local cluster workers as separate processes (default, true parallelism for
        Python models) or threads of this process.
    max_pending : int, optional
        Items submitted at once (default ``4 * workers`` locally, 64 with ``address``).
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        processes: bool = True,
        max_pending: int | None = None,
    ) -> None:
        from distributed import Client, LocalCluster

        n_workers = _check_workers(workers, "DaskExecutor") or 1
        self._cluster: Any = None
        if address is not None:
            if not _ADDRESS.match(address):
                raise ExecutorConfigError(
                    f"Dask scheduler address must look like tcp://HOST:PORT, got {address!r}"
                )
            self._client: Any = Client(address)
            default_pending = 64
        else:
            self._cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=processes,
                host="127.0.0.1",
                protocol="tcp",
                dashboard_address=None,
            )
            self._client = Client(self._cluster)
            default_pending = 4 * n_workers
        self.max_pending = (
            _check_workers(max_pending, "DaskExecutor max_pending") or default_pending
        )

    @property
    def scheduler_address(self) -> str:
        """Address of the scheduler the client is connected to."""
        return str(self._client.scheduler.address)

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(i, fn(items[i]))`` as Dask workers finish them."""
        from distributed import as_completed

        if self._client is None:
            raise ExecutorConfigError("DaskExecutor is closed")
        client = self._client
        index: dict[str, int] = {}
        next_item = 0
        stream = as_completed()
        live: list[Any] = []
        try:
            while next_item < len(items) and len(live) < self.max_pending:
                fut = client.submit(fn, items[next_item], pure=False)
                index[fut.key] = next_item
                live.append(fut)
                stream.add(fut)
                next_item += 1
            for fut in stream:
                live.remove(fut)
                i = index.pop(fut.key)
                result = fut.result()
                fut.release()
                if next_item < len(items):
                    nxt = client.submit(fn, items[next_item], pure=False)
                    index[nxt.key] = next_item
                    live.append(nxt)
                    stream.add(nxt)
                    next_item += 1
                yield i, result
        finally:
            if live:
                client.cancel(live)

    def close(self) -> None:
        """Close the client and, if this executor started it, the local cluster."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def make_executor(workers: int | None = None, scheduler: str | None = None) -> Executor:
    """Build an executor from command-line style settings.

    Parameters
    ----------
    workers : int, optional
        Number of local workers.  ``None`` or 1 without ``scheduler``: in process;
        more: a :class:`ProcessExecutor`.
    scheduler : str, optional
        ``"tcp://HOST:PORT"``: connect to that Dask scheduler (``workers`` ignored);
        ``"local"`` or ``"dask"``: start a Dask LocalCluster with ``workers`` workers.

    Raises
    ------
    ExecutorConfigError
        Bad worker count or unrecognised scheduler string.
    BudgetError
        More local workers than the memory budget holds (:data:`WORKER_PROCESS_BYTES` each).
    """
    n = _check_workers(workers, "make_executor")
    if n is not None and n > 1 and (scheduler is None or scheduler in ("local", "dask")):
        check_memory(
            f"{n} local worker processes",
            n * WORKER_PROCESS_BYTES,
            f"about {format_bytes(WORKER_PROCESS_BYTES)} each for Python, numpy and the model",
        )
    if scheduler is None:
        if n is None or n == 1:
            return InProcessExecutor()
        return ProcessExecutor(n)
    if scheduler in ("local", "dask"):
        return DaskExecutor(workers=n or 1)
    if _ADDRESS.match(scheduler):
        return DaskExecutor(address=scheduler)
    raise ExecutorConfigError(
        f"unknown scheduler {scheduler!r}: expected 'local', 'dask' or an address tcp://HOST:PORT"
    )


def map_ordered(executor: Executor, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """Evaluate ``fn`` on every item through ``executor``; results in item order.

    Examples
    --------
    >>> with InProcessExecutor() as ex:
    ...     map_ordered(ex, abs, [-1, 2, -3])
    [1, 2, 3]
    """
    out: dict[int, R] = dict(executor.map_unordered(fn, items))
    return [out[i] for i in range(len(items))]
