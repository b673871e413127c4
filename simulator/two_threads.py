"""Two pieces of work at once: one in a worker thread, one in the calling thread.

For work that releases the GIL (compiled loops, decompression, NumPy on large arrays,
file reads) on a machine with a second core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["run_pair"]

H = TypeVar("H")
T = TypeVar("T")


def run_pair(
    head: Callable[[], H], tail: Callable[[], T], *, name: str = "mpiuq-pair"
) -> tuple[H, T]:
    """``(head(), tail())``, ``tail`` in a worker thread (named ``name``) while ``head``
    runs in this one.

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
