"""The benchmark kinds: what one repetition of each benchmark program does, by name.

A :class:`BenchmarkKind` appends one repetition of its two-rank program to a
:class:`~mpiuq.simulator.program.table.ProgramBuilder` and says how the marks on rank 0
become a time per message; :mod:`mpiuq.simulator.benchmarks.run` builds and runs the
programs, and the command line's ``--benchmark`` choices, the campaign file's
``benchmark`` and ``model`` keys and the windowed set are read from
:data:`BENCHMARK_KINDS`. A new kind is one :func:`register_benchmark` call (see
``docs/extending-simulator.md``).

The built-in kinds (described in :mod:`mpiuq.simulator.benchmarks.run`): ``pingpong``,
``stream``, ``pingpong_send``, ``isend``, ``recv_arrived``, ``bidirectional_stream``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mpiuq.simulator.registry import NamesView, Registry

if TYPE_CHECKING:
    from mpiuq.simulator.program.table import ProgramBuilder

__all__ = [
    "BENCHMARKS",
    "BENCHMARK_KINDS",
    "RECV_SLEEP_S",
    "STREAM_ACK_BYTES",
    "WINDOWED_BENCHMARKS",
    "BenchmarkKind",
    "benchmark_names",
    "register_benchmark",
    "windowed_benchmarks",
]

#: Size of the stream benchmark's acknowledgement message, bytes (osu_bw uses 4).
STREAM_ACK_BYTES = 4
#: Sleep of rank 0 before its timed receive in ``recv_arrived``, seconds: the message
#: (header, eager data) has arrived long before (1 MB at 1 GB/s takes 1 ms).
RECV_SLEEP_S = 0.1

#: ``repetition(builder, size_bytes, window, mark)``: append one repetition; ``mark()``
#: marks rank 0 (a call-timing kind calls it right before and after its timed call).
Repetition = Callable[["ProgramBuilder", int, int, Callable[[], None]], None]


@dataclass(frozen=True, slots=True)
class BenchmarkKind:
    """One benchmark program, by name.

    Parameters
    ----------
    name
        Registry name (``--benchmark NAME``, the campaign file's ``benchmark``).
    description
        One line for the docs' table.
    repetition
        Appends one repetition to the builder (see :data:`Repetition`).
    messages_per_repetition
        ``f(window)``: messages one repetition times, the divisor turning the span
        between the first and last mark into a time per message. ``None``: a call
        timing, whose time is the mean of the marked calls.
    windowed
        Whether the ``window`` setting applies (it then costs ``window**2`` in budgets).
    """

    name: str
    description: str
    repetition: Repetition
    messages_per_repetition: Callable[[int], float] | None
    windowed: bool = False

    @property
    def call_timing(self) -> bool:
        """Whether the kind times one MPI call (a pair of marks per timed repetition)."""
        return self.messages_per_repetition is None


#: Every benchmark kind, in registration order.
BENCHMARK_KINDS: Registry[BenchmarkKind] = Registry("benchmark")


#: Names of the benchmark kinds (a live view: kinds registered later are in it).
BENCHMARKS: NamesView = BENCHMARK_KINDS.names_view()
#: Names of the kinds whose ``window`` setting applies (live).
WINDOWED_BENCHMARKS: NamesView = BENCHMARK_KINDS.names_view(lambda kind: kind.windowed)


def register_benchmark(kind: BenchmarkKind) -> BenchmarkKind:
    """Register ``kind`` (see :meth:`Registry.register`); returns it."""
    return BENCHMARK_KINDS.register(kind)


def benchmark_names() -> tuple[str, ...]:
    """Names of the registered benchmark kinds."""
    return BENCHMARK_KINDS.names()


def windowed_benchmarks() -> tuple[str, ...]:
    """Names of the kinds whose ``window`` setting applies."""
    return tuple(k.name for k in BENCHMARK_KINDS if k.windowed)


def _pingpong(b: ProgramBuilder, size: int, window: int, mark: Callable[[], None]) -> None:
    mark()
    b.send(0, dest=1, nbytes=size, tag=1)
    mark()
    b.recv(0, source=1, nbytes=size, tag=1)
    b.recv(1, source=0, nbytes=size, tag=1)
    b.send(1, dest=0, nbytes=size, tag=1)


def _stream(b: ProgramBuilder, size: int, window: int, mark: Callable[[], None]) -> None:
    sends = [b.isend(0, dest=1, nbytes=size, tag=100) for _ in range(window)]
    b.waitall(0, sends)
    b.recv(0, source=1, nbytes=STREAM_ACK_BYTES, tag=101)
    recvs = [b.irecv(1, source=0, nbytes=size, tag=100) for _ in range(window)]
    b.waitall(1, recvs)
    b.send(1, dest=0, nbytes=STREAM_ACK_BYTES, tag=101)


def _isend(b: ProgramBuilder, size: int, window: int, mark: Callable[[], None]) -> None:
    mark()
    req = b.isend(0, dest=1, nbytes=size, tag=1)
    mark()
    b.recv(0, source=1, nbytes=size, tag=1)
    b.wait(0, req)
    b.recv(1, source=0, nbytes=size, tag=1)
    b.send(1, dest=0, nbytes=size, tag=1)


def _recv_arrived(b: ProgramBuilder, size: int, window: int, mark: Callable[[], None]) -> None:
    b.send(0, dest=1, nbytes=size, tag=1)
    b.compute(0, RECV_SLEEP_S, call="sleep")
    mark()
    b.recv(0, source=1, nbytes=size, tag=1)
    mark()
    b.recv(1, source=0, nbytes=size, tag=1)
    b.send(1, dest=0, nbytes=size, tag=1)


def _bidirectional(b: ProgramBuilder, size: int, window: int, mark: Callable[[], None]) -> None:
    for rank in (0, 1):
        other = 1 - rank
        recvs = [b.irecv(rank, source=other, nbytes=size, tag=100) for _ in range(window)]
        sends = [b.isend(rank, dest=other, nbytes=size, tag=100) for _ in range(window)]
        b.waitall(rank, sends)
        b.waitall(rank, recvs)


for _kind in (
    BenchmarkKind(
        "pingpong",
        "blocking send/receive round trips; half a round trip per message (osu_latency)",
        _pingpong,
        lambda window: 2.0,
    ),
    BenchmarkKind(
        "stream",
        "a window of nonblocking sends, then an acknowledgement (osu_bw)",
        _stream,
        lambda window: float(window),
        windowed=True,
    ),
    BenchmarkKind(
        "pingpong_send",
        "the MPI_Send call of the ping-pong (SimGrid platform-calibration)",
        _pingpong,
        None,
    ),
    BenchmarkKind(
        "isend", "the MPI_Isend call, waited for after the partner's answer", _isend, None
    ),
    BenchmarkKind(
        "recv_arrived",
        "the MPI_Recv call posted after its message has arrived",
        _recv_arrived,
        None,
    ),
    BenchmarkKind(
        "bidirectional_stream",
        "both ranks stream a window to each other (osu_bibw)",
        _bidirectional,
        lambda window: 2.0 * window,
        windowed=True,
    ),
):
    register_benchmark(_kind)
