"""Benchmarks as small two-rank MPI programs on the same engine that replays traces.

``pingpong``
    Blocking ``MPI_Send``/``MPI_Recv`` round trips between ranks 0 and 1; the
    reported time is half a round trip (the osu_latency / IMB PingPong convention).
``stream``
    osu_bw-like streaming: rank 0 posts a window of ``window`` nonblocking sends of
    one size, rank 1 the matching nonblocking receives; both wait for all of them,
    then rank 1 answers with a small acknowledgement. Throughput is
    ``window * size / window time`` and the reported time is the window time
    divided by ``window`` (time per message).
``bidirectional_stream``
    osu_bibw: both ranks post a window of ``window`` nonblocking receives, then a
    window of nonblocking sends to each other, and wait for their sends, then their
    receives; windows follow each other without an acknowledgement. Throughput counts
    both directions, ``2 * window * size / window time``, and the reported time is the
    window time divided by ``2 * window`` (time per message).

The call-timing benchmarks of the SimGrid ``platform-calibration`` program (the
``extra.csv`` series of ``../shared/data/benchmarks``) time one MPI call on rank 0:

``pingpong_send``
    the ``MPI_Send`` call of the ping-pong (its ``MPI_Recv`` part is the rest of the
    round trip);
``isend``
    the ``MPI_Isend`` call: rank 0 posts the send, then receives the partner's
    answer (rank 1 receives, then sends back) and only then waits for its send;
``recv_arrived``
    the ``MPI_Recv`` call posted after the message has arrived: rank 0 sends, sleeps
    :data:`RECV_SLEEP_S` (longer than any transfer) and times its receive of the
    partner's message (rank 1 receives, then sends back). For a protocol that moves
    data only once the receive is posted (rendezvous) it still includes the transfer.

Both run ``warmup`` untimed repetitions first. The engine is deterministic and
every repetition ends with both ranks drained (the reply or acknowledgement), so
after the warm-up all repetitions take exactly the same time: one timed
repetition is the default (the tests check that more change nothing).
Throughputs are in MB/s (10^6 B/s), times in microseconds.
"""

from __future__ import annotations

import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from mpiuq.simulator import kernel
from mpiuq.simulator.benchmarks.kinds import BENCHMARK_KINDS
from mpiuq.simulator.benchmarks.kinds import RECV_SLEEP_S as RECV_SLEEP_S
from mpiuq.simulator.benchmarks.kinds import STREAM_ACK_BYTES as STREAM_ACK_BYTES
from mpiuq.simulator.engine import (
    Decomposition,
    check_regime_slots,
    params_vector,
    program_arrays,
    simulate,
)
from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.networks import TWO_NODE_SWITCH, network_arrays
from mpiuq.simulator.parameters import SimParams, parameter_names, params_matrix
from mpiuq.simulator.program.table import Program, ProgramBuilder
from mpiuq.simulator.regimes import WIDTH as REGIME_WIDTH

OBSERVABLES: tuple[str, ...] = ("time_us", "throughput_MBps")

#: Largest message size accepted by the benchmarks, bytes (1 TiB: a typo guard).
MAX_SIZE_BYTES = 2**40

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BenchmarkSetup:
    """How a benchmark program is built.

    Parameters
    ----------
    benchmark
        A registered benchmark kind
        (:data:`~mpiuq.simulator.benchmarks.kinds.BENCHMARK_KINDS`: ``"pingpong"``,
        ``"stream"``, ``"bidirectional_stream"`` and the call timings).
    window
        Messages per window of the stream benchmark.
    repetitions
        Timed round trips (pingpong) or windows (stream).
    warmup
        Untimed repetitions before the timed ones.
    """

    benchmark: str = "pingpong"
    window: int = 64
    repetitions: int = 1
    warmup: int = 1

    def __post_init__(self) -> None:
        BENCHMARK_KINDS.get(self.benchmark)  # SettingError naming the known kinds
        for name in ("window", "repetitions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingError(f"{name}={value!r} is invalid: expected a whole number >= 1")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise SettingError(f"warmup={self.warmup!r} is invalid: expected a whole number >= 0")


def validate_sizes(sizes_bytes: object) -> tuple[int, ...]:
    """Return message sizes as a tuple of ints, or raise naming the bad size.

    Raises
    ------
    SettingError
        If the list is empty or a size is not a whole number in ``1 .. 2**40`` bytes.
    """
    try:
        values = list(sizes_bytes)  # type: ignore[call-overload]
    except TypeError:
        raise SettingError(
            f"sizes {sizes_bytes!r} is invalid: expected a list of byte counts"
        ) from None
    if not values:
        raise SettingError("sizes is empty: expected at least one message size in bytes")
    out = []
    for s in values:
        ok = isinstance(s, int | np.integer) and not isinstance(s, bool)
        ok = ok or (isinstance(s, float | np.floating) and float(s).is_integer())
        if not ok or not 1 <= int(s) <= MAX_SIZE_BYTES:
            raise SettingError(
                f"message size {s!r} is invalid: expected a whole number of bytes in 1..{MAX_SIZE_BYTES}"
            )
        out.append(int(s))
    return tuple(out)


@lru_cache(maxsize=256)
def benchmark_program(setup: BenchmarkSetup, size_bytes: int) -> Program:
    """The two-rank program of ``setup`` for one message size.

    Marks on rank 0 bracket the timed repetitions (marks 0 and 1), or, for the
    call-timing benchmarks (:attr:`~.BenchmarkKind.call_timing`), the timed call of every timed
    repetition (marks ``2k`` and ``2k + 1``).
    """
    b = ProgramBuilder(n_ranks=2)
    reps = setup.warmup + setup.repetitions
    timed_call = BENCHMARK_KINDS.get(setup.benchmark).call_timing
    for rep in range(reps):
        if rep == setup.warmup and not timed_call:
            b.mark(0)
        _repetition(b, setup, size_bytes, timed=timed_call and rep >= setup.warmup)
    if not timed_call:
        b.mark(0)
    return b.build()


def _repetition(b: ProgramBuilder, setup: BenchmarkSetup, size_bytes: int, timed: bool) -> None:
    """Append one repetition of ``setup``'s benchmark (marks around the call if ``timed``)."""

    def mark() -> None:
        if timed:
            b.mark(0)

    BENCHMARK_KINDS.get(setup.benchmark).repetition(b, size_bytes, setup.window, mark)


def _time_per_message_s(setup: BenchmarkSetup, marks: FloatArray) -> FloatArray:
    per_repetition = BENCHMARK_KINDS.get(setup.benchmark).messages_per_repetition
    if per_repetition is None:  # a call timing: the mean of the marked calls
        calls = marks[..., 1::2] - marks[..., 0::2]
        return np.asarray(calls.mean(axis=-1), dtype=np.float64)
    span = marks[..., 1] - marks[..., 0]
    return span / (setup.repetitions * per_repetition(setup.window))


@dataclass(frozen=True)
class BenchmarkResult:
    """Benchmark outcome per message size under one parameter set.

    Attributes
    ----------
    sizes_bytes, time_us, throughput_MBps, protocols
        Per size: message size, time per message (half round trip for pingpong),
        throughput ``size / time`` in MB/s, and the protocol used.
    decomposition
        Per size, per rank: the rank's time per repetition (one round trip for
        pingpong, one window for stream) split into compute, network, MPI stack
        and synchronisation.
    """

    benchmark: str
    params: SimParams
    setup: BenchmarkSetup
    sizes_bytes: tuple[int, ...]
    time_us: FloatArray
    throughput_MBps: FloatArray
    protocols: tuple[str, ...]
    decomposition: tuple[tuple[Decomposition, Decomposition], ...]


def simulate_benchmark(
    benchmark: str,
    sizes_bytes: object,
    params: SimParams | None = None,
    window: int = 64,
    *,
    repetitions: int = 1,
    warmup: int = 1,
) -> BenchmarkResult:
    """Run one benchmark for every size with one parameter set.

    Raises
    ------
    SettingError
        For an unknown benchmark, an invalid window or an invalid size.
    """
    params = SimParams() if params is None else params
    setup = BenchmarkSetup(benchmark, window, repetitions, warmup)
    sizes = validate_sizes(sizes_bytes)
    times = np.empty(len(sizes))
    decs = []
    for j, size in enumerate(sizes):
        run = simulate(benchmark_program(setup, size), params, TWO_NODE_SWITCH)
        times[j] = _time_per_message_s(setup, run.marks_s)
        reps = setup.warmup + setup.repetitions
        decs.append(tuple(Decomposition.from_row(run.parts_s[r] / reps) for r in (0, 1)))
    time_us = times * 1e6
    return BenchmarkResult(
        benchmark=benchmark,
        params=params,
        setup=setup,
        sizes_bytes=sizes,
        time_us=time_us,
        throughput_MBps=np.asarray(sizes, dtype=np.float64) / time_us,
        protocols=tuple(params.protocol_of(s) for s in sizes),
        decomposition=tuple((d[0], d[1]) for d in decs),
    )


@dataclass(frozen=True)
class BatchResult:
    """Benchmark outcome for many parameter sets: arrays of shape ``(n_sets, n_sizes)``."""

    sizes_bytes: tuple[int, ...]
    time_us: FloatArray
    throughput_MBps: FloatArray
    n_events: int


def evaluate_batch(
    setup: BenchmarkSetup,
    sizes_bytes: object,
    matrix: FloatArray,
    *,
    threads: int = 1,
) -> BatchResult:
    """Evaluate many parameter sets x many sizes in compiled loops.

    The compiled kernel releases the GIL, so slices of the parameter sets can run in
    ``threads`` threads of this process. The caller chooses: one thread (the
    default) inside a pool of worker processes, or as many as the process may use
    when it runs alone. Results do not depend on the number of threads.

    Parameters
    ----------
    setup
        Benchmark program description.
    sizes_bytes
        Message sizes.
    matrix
        ``(n_sets, n_params)`` parameter vectors in :func:`parameter_names` order
        (build it with :func:`mpiuq.simulator.parameters.params_matrix`).
    threads
        Worker threads (>= 1).

    Raises
    ------
    SettingError
        If ``threads`` is not a whole number >= 1, or a simulation did not finish
        (cannot happen for valid benchmarks).
    """
    sizes = validate_sizes(sizes_bytes)
    matrix = np.ascontiguousarray(matrix, dtype=np.float64)
    n_params = len(parameter_names())
    if (
        matrix.ndim != 2
        or matrix.shape[1] <= n_params
        or (matrix.shape[1] - n_params) % REGIME_WIDTH
    ):
        raise ParameterError(
            "matrix",
            f"array of shape {matrix.shape}",
            f"shape (n_sets, {n_params} + {REGIME_WIDTH} x regimes) (SimParams.as_dict order)",
        )
    check_regime_slots(matrix)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise SettingError(f"threads={threads!r} is invalid: expected a whole number >= 1")
    n_sets = matrix.shape[0]
    times = np.empty((n_sets, len(sizes)))
    net = network_arrays(TWO_NODE_SWITCH, 2)
    chunks = [c for c in np.array_split(np.arange(n_sets), min(threads, max(n_sets, 1))) if c.size]

    programs = [program_arrays(benchmark_program(setup, size)) for size in sizes]

    def work(rows: npt.NDArray[np.int64]) -> int:
        # one task per thread: its slice of the parameter sets at every size
        n_ev = 0
        block = matrix[rows[0] : rows[-1] + 1]
        for j, (size, program) in enumerate(zip(sizes, programs, strict=True)):
            marks, _acc, _end, unfinished, events = kernel.run_batch(  # type: ignore[call-arg]
                program, block, net, 1.0
            )
            if unfinished.any():
                raise SettingError(
                    f"{setup.benchmark} at {size} B did not finish for some parameter sets"
                )
            times[rows[0] : rows[-1] + 1, j] = _time_per_message_s(setup, marks)
            n_ev += int(events)
        return n_ev

    if len(chunks) <= 1:
        events = sum(work(c) for c in chunks)
    else:
        events = sum(_thread_pool(len(chunks)).map(work, chunks))
    time_us = times * 1e6
    return BatchResult(sizes, time_us, np.asarray(sizes, dtype=np.float64) / time_us, events)


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _thread_pool(threads: int) -> ThreadPoolExecutor:
    """This process's pool of ``threads`` simulator threads, made on first use and kept.

    The direct posterior sampler calls :func:`evaluate_batch` thousands of times with a
    few milliseconds of work each; starting fresh threads for every call cost about as much
    CPU as the work itself. The pool is per process (a forked worker makes its own: the
    parent's threads do not exist in the child) and its idle threads end with the
    interpreter.
    """
    key = (os.getpid(), threads)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mpiuq-batch")
            _POOLS[key] = pool
        return pool


def close_thread_pools() -> None:
    """End this process's simulator threads (they are idle between calls): the console
    script does so before it ends the process (:func:`mpiuq.main.run`)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True)


@dataclass(frozen=True, slots=True)
class SimulationWork:
    """What evaluating parameter sets costs the simulator, counted rather than timed.

    The counts are deterministic (the same rows give the same counts on any machine and
    under any load), so a cost estimate built on them makes the same choice everywhere.

    Attributes
    ----------
    programs
        Benchmark programs built (one per size and call).
    runs
        Programs run (parameter sets x sizes).
    events
        Events the kernel processed.
    """

    programs: int
    runs: int
    events: int

    def __add__(self, other: SimulationWork) -> SimulationWork:
        return SimulationWork(
            self.programs + other.programs, self.runs + other.runs, self.events + other.events
        )


@dataclass(frozen=True)
class BenchmarkModel:
    """A benchmark as a vector-valued function of some parameters (for designs and surrogates).

    ``model(X)`` maps ``X`` of shape ``(n_sets, len(names))`` to the observable at
    every size, shape ``(n_sets, len(sizes_bytes))``. Parameters not in ``names``
    keep their value in ``base``. ``threads`` are the threads of one evaluation
    (:func:`evaluate_batch`; 1 inside a pool of worker processes). Instances are
    picklable and deterministic.
    """

    benchmark: str
    sizes_bytes: tuple[int, ...]
    names: tuple[str, ...]
    base: SimParams = field(default_factory=SimParams)
    observable: str = "time_us"
    window: int = 64
    threads: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes_bytes", validate_sizes(self.sizes_bytes))
        object.__setattr__(self, "names", tuple(self.names))
        known = tuple(self.base.as_dict())
        for name in self.names:
            if name not in known:
                raise ParameterError(name, "(calibrated)", f"one of {list(known)}")
        if self.observable not in OBSERVABLES:
            raise SettingError(
                f"observable {self.observable!r} is unknown: expected one of {list(OBSERVABLES)}"
            )
        BenchmarkSetup(self.benchmark, self.window)
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise SettingError(f"threads={self.threads!r} is invalid: expected a whole number >= 1")

    @property
    def setup(self) -> BenchmarkSetup:
        """The benchmark program description."""
        return BenchmarkSetup(self.benchmark, self.window)

    @property
    def output_names(self) -> tuple[str, ...]:
        """One name per output, e.g. ``pingpong_time_us@1024B``."""
        return tuple(f"{self.benchmark}_{self.observable}@{s}B" for s in self.sizes_bytes)

    @property
    def model_id(self) -> str:
        """Fingerprint of everything that defines the model's outputs."""
        text = repr(
            (self.setup, self.sizes_bytes, self.names, self.base.as_dict(), self.observable)
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Evaluate the observable for each row of ``x``."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        batch = evaluate_batch(
            self.setup,
            self.sizes_bytes,
            params_matrix(self.base, self.names, xs),
            threads=self.threads,
        )
        return batch.time_us if self.observable == "time_us" else batch.throughput_MBps

    def work(self, x: npt.ArrayLike) -> SimulationWork:
        """The simulator's work of evaluating the rows of ``x`` (:class:`SimulationWork`)."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        batch = evaluate_batch(
            self.setup, self.sizes_bytes, params_matrix(self.base, self.names, xs), threads=1
        )
        n = len(self.sizes_bytes)
        return SimulationWork(programs=n, runs=n * xs.shape[0], events=batch.n_events)

    def at(self, params: SimParams) -> FloatArray:
        """Evaluate at one full parameter set (ignores ``base``)."""
        matrix = params_vector(params)[None, :]
        batch = evaluate_batch(self.setup, self.sizes_bytes, matrix, threads=self.threads)
        out = batch.time_us if self.observable == "time_us" else batch.throughput_MBps
        return np.asarray(out[0])
