"""Extension points: a benchmark kind, a trace format, a topology and a collective
algorithm are each one new module.

Each test writes a toy extension as one module in a temporary folder (the only source
file it needs, as in ``docs/extending-simulator.md``; the topology's and the collective
algorithm's text is read from that page), imports it, and runs it end to end through
the public entry points, against the built-in it mirrors.
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mpiuq.simulator.benchmarks.kinds import BENCHMARK_KINDS, BENCHMARKS, WINDOWED_BENCHMARKS
from mpiuq.simulator.errors import SettingError
from mpiuq.simulator.registry import Registry
from mpiuq.simulator.trace.formats import FORMATS, TRACE_FORMATS

TOY_BENCHMARK = '''
"""Toy benchmark: two ping-pong round trips per repetition."""
from mpiuq.simulator.benchmarks.kinds import BenchmarkKind, register_benchmark


def repetition(b, size, window, mark):
    for _ in range(2):
        b.send(0, dest=1, nbytes=size, tag=1)
        b.recv(0, source=1, nbytes=size, tag=1)
        b.recv(1, source=0, nbytes=size, tag=1)
        b.send(1, dest=0, nbytes=size, tag=1)


KIND = register_benchmark(
    BenchmarkKind(
        "toy_double_pingpong",
        "two round trips per repetition; half a round trip per message",
        repetition,
        messages_per_repetition=lambda window: 4.0,
    )
)
'''

TOY_FORMAT = '''
"""Toy trace format: a header 'TOYTRACE <ranks>', then 'send|recv <rank> <peer> <bytes>'
and 'compute <rank> <seconds>' lines."""
from pathlib import Path

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.errors import TraceFormatError
from mpiuq.simulator.trace.formats import TraceFormat, register_trace_format
from mpiuq.simulator.trace.ir import OpKind
from mpiuq.simulator.trace.sniff import read_at


def is_toy(path: Path) -> bool:
    return read_at(path, 0, 9) == b"TOYTRACE "


def read_toy(path, options):
    lines = Path(path).read_text().splitlines()
    b = TraceBuilder("toy", str(path), int(lines[0].split()[1]))
    for number, line in enumerate(lines[1:], start=2):
        what, *args = line.split()
        if what == "compute":
            b.add_compute(int(args[0]), float(args[1]))
        elif what in ("send", "recv"):
            rank, peer, nbytes = (int(a) for a in args)
            if what == "send":
                b.add(rank, int(OpKind.SEND), b.call_id("MPI_Send"), peer=peer, bytes_send=nbytes)
            else:
                b.add(rank, int(OpKind.RECV), b.call_id("MPI_Recv"), peer=peer, bytes_recv=nbytes)
        else:
            raise TraceFormatError(f"{path}:{number}: {what!r} is no toy action")
    return b.build()


FORMAT = register_trace_format(
    TraceFormat("toy", "a toy trace (first line 'TOYTRACE <ranks>')", is_toy, read_toy)
)
'''


def _import_toy(
    tmp_path: Path, name: str, text: str, registry: Registry, entry: str
) -> Iterator[None]:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module(name)
        yield
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
        if entry in registry:
            registry.unregister(entry)


@pytest.fixture
def toy_benchmark(tmp_path: Path) -> Iterator[None]:
    yield from _import_toy(
        tmp_path, "toy_benchmark_kind", TOY_BENCHMARK, BENCHMARK_KINDS, "toy_double_pingpong"
    )


@pytest.fixture
def toy_format(tmp_path: Path) -> Iterator[None]:
    yield from _import_toy(tmp_path, "toy_trace_format", TOY_FORMAT, TRACE_FORMATS, "toy")


def test_a_benchmark_kind_added_in_one_module_runs_end_to_end(toy_benchmark: None) -> None:
    from mpiuq.simulator.benchmarks.run import BenchmarkModel, simulate_benchmark
    from mpiuq.simulator.parameters import SimParams

    assert "toy_double_pingpong" in BENCHMARKS
    assert "toy_double_pingpong" not in WINDOWED_BENCHMARKS
    sizes = (8, 65536, 4 << 20)
    toy = simulate_benchmark("toy_double_pingpong", sizes)
    ref = simulate_benchmark("pingpong", sizes)
    # the engine is deterministic: every round trip after the first takes the same time
    np.testing.assert_allclose(toy.time_us, ref.time_us, rtol=1e-12)
    # the compiled batch path (evaluate_batch) agrees with the one-set path
    names = ("link_bw_GBps",)
    model = BenchmarkModel("toy_double_pingpong", sizes, names, base=SimParams())
    value = SimParams().as_dict()["link_bw_GBps"]
    np.testing.assert_allclose(model(np.array([[value]]))[0], toy.time_us, rtol=1e-12)


def test_an_unknown_or_duplicate_benchmark_kind_is_refused(toy_benchmark: None) -> None:
    from mpiuq.simulator.benchmarks.kinds import BenchmarkKind, register_benchmark
    from mpiuq.simulator.benchmarks.run import BenchmarkSetup

    with pytest.raises(SettingError, match=r"benchmark 'nope' is unknown: expected one of .*toy"):
        BenchmarkSetup("nope")
    twin = BENCHMARK_KINDS.get("pingpong")
    with pytest.raises(SettingError, match="benchmark 'pingpong' is registered already"):
        register_benchmark(twin)
    with pytest.raises(SettingError, match="name 'Bad Name' is invalid"):
        register_benchmark(BenchmarkKind("Bad Name", "", twin.repetition, None))


def test_a_trace_format_added_in_one_module_is_detected_read_cached_and_replayed(
    toy_format: None, tmp_path: Path
) -> None:
    from mpiuq.simulator.engine import simulate
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.program.table import ProgramBuilder
    from mpiuq.simulator.trace.detect import detect_format
    from mpiuq.simulator.trace.read import read_trace

    assert "toy" in FORMATS
    path = tmp_path / "run.trace"  # any name: the content decides
    path.write_text(
        "TOYTRACE 2\ncompute 0 0.001\nsend 0 1 4096\nrecv 1 0 4096\nsend 1 0 16\nrecv 0 1 16\n",
        encoding="utf-8",
    )
    assert detect_format(path) == "toy"
    cache = tmp_path / "cache"
    trace = read_trace(path, cache_dir=cache)
    assert trace.n_ranks == 2 and list(cache.glob("*.h5"))  # parsed once, kept in the cache
    again = read_trace(path, cache_dir=cache)
    assert np.array_equal(again.kind, trace.kind) and np.array_equal(
        again.bytes_send, trace.bytes_send
    )
    replay = simulate(lower_trace(trace).program)
    b = ProgramBuilder(n_ranks=2)
    b.compute(0, 0.001)
    b.send(0, dest=1, nbytes=4096, tag=0)
    b.recv(1, source=0, nbytes=4096, tag=0)
    b.send(1, dest=0, nbytes=16, tag=0)
    b.recv(0, source=1, nbytes=16, tag=0)
    direct = simulate(b.build())
    np.testing.assert_array_equal(replay.end_s, direct.end_s)


def test_the_unrecognised_format_message_lists_a_registered_format(
    toy_format: None, tmp_path: Path
) -> None:
    from mpiuq.simulator.trace.detect import detect_format
    from mpiuq.simulator.trace.errors import UnsupportedTraceError

    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n", encoding="utf-8")
    with pytest.raises(UnsupportedTraceError, match=r"or a toy trace \(first line 'TOYTRACE"):
        detect_format(junk)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "extending-simulator.md"


def _docs_example(first_line: str) -> str:
    """The Python block of the contributor guide that starts with ``first_line``."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if b.startswith(first_line)]
    return str(block)


@pytest.fixture
def ring_topology(tmp_path: Path) -> Iterator[None]:
    from mpiuq.simulator.topologies.registry import TOPOLOGY_REGISTRY

    text = _docs_example("# ring_topology.py")
    yield from _import_toy(tmp_path, "ring_topology", text, TOPOLOGY_REGISTRY, "ring")


@pytest.fixture
def basic_allreduce(tmp_path: Path) -> Iterator[None]:
    from mpiuq.simulator.collectives.registry import ALGORITHM_REGISTRY

    text = _docs_example("# basic_allreduce.py")
    entry = "allreduce-basic_linear"
    yield from _import_toy(tmp_path, "basic_allreduce", text, ALGORITHM_REGISTRY, entry)


def test_a_topology_added_in_one_module_is_built_sized_and_replayed(ring_topology: None) -> None:
    from mpiuq.commands.replay import check_topology, topology_help
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.replay.run import ReplaySetup, replay
    from mpiuq.simulator.topologies.spec import is_zone_spec, make_zone

    assert is_zone_spec("ring:hosts=8") and "ring:hosts=16" in topology_help()
    ring, torus = make_zone("ring:hosts=8"), make_zone("torus:dims=8")
    for field in ("link_bw", "link_lat", "link_injection", "link_fatpipe"):
        np.testing.assert_array_equal(getattr(ring, field), getattr(torus, field))
    assert make_zone("ring", n_ranks=5).n_nodes == 5  # a bare name is sized for the trace
    with pytest.raises(
        SettingError, match=r"ring parameter 'dims' is unknown.*\('hosts', 'shared'\)"
    ):
        check_topology("ring:dims=4")
    trace = synthesize(MotifSpec("halo3d", 8, 2, compute_s=1e-5, neighbours=6))
    ends = [
        replay(trace, setup=ReplaySetup(models=("flow",), topology=spec)).models[0].end_s
        for spec in ("ring:hosts=8", "torus:dims=8")
    ]
    np.testing.assert_array_equal(ends[0], ends[1])  # the same zone, the same replay


def test_a_collective_algorithm_added_in_one_module_is_lowered_and_replayed(
    basic_allreduce: None,
) -> None:
    from mpiuq.simulator.collectives import CollSizes, algorithm_set, schedule
    from mpiuq.simulator.collectives.rooted import bcast_linear, reduce_linear
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.replay.run import ReplaySetup, replay

    assert algorithm_set("openmpi-basic") == {"allreduce": "basic_linear"}
    sizes = CollSizes(4096)
    for me in range(5):
        steps = schedule("allreduce", "basic_linear", me, 5, 0, sizes)
        assert steps == reduce_linear(me, 5, 0, sizes) + bcast_linear(me, 5, 0, sizes)
    trace = synthesize(MotifSpec("halo3d", 8, 2, compute_s=1e-5, neighbours=6))
    runs = {
        alg: replay(trace, setup=ReplaySetup(models=("analytic",), algorithms=alg)).models[0]
        for alg in ((("allreduce", "basic_linear"),), ())
    }
    basic, default = runs[(("allreduce", "basic_linear"),)], runs[()]
    assert np.all(np.isfinite(basic.end_s))
    # rank 0 receives 7 vectors one after the other, instead of 3 rounds of recursive doubling
    assert basic.end_s.max() > default.end_s.max()
