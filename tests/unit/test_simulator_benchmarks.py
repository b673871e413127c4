"""Benchmark programs: bandwidth bounds, monotonicity, batch evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiuq.simulator.benchmarks.run import (
    BenchmarkModel,
    BenchmarkSetup,
    evaluate_batch,
    simulate_benchmark,
)
from mpiuq.simulator.errors import ParameterError, SettingError
from mpiuq.simulator.parameters import TABLE1_PRIOR_RANGES, SimParams, params_matrix

SIZES = [1, 64, 512, 2048, 4096, 4097, 8192, 32768, 65536, 65537, 131072, 524288, 1 << 20]

params_strategy = st.builds(
    SimParams,
    injection_bw_GBps=st.floats(1.0, 20.0),
    link_bw_GBps=st.floats(1.0, 20.0),
    memory_bw_GBps=st.floats(1.0, 20.0),
    post_header_delay_us=st.floats(0.05, 2.0),
    post_rdma_delay_us=st.floats(0.05, 2.0),
    rdma_pin_latency_us=st.floats(0.5, 8.0),
    rdma_pin_per_page_ns=st.floats(1.0, 100.0),
    hop_latency_ns=st.floats(10.0, 500.0),
)


@settings(max_examples=25, deadline=None)
@given(params_strategy, st.sampled_from(["pingpong", "stream"]))
def test_throughput_never_exceeds_bottleneck(params: SimParams, benchmark: str) -> None:
    result = simulate_benchmark(benchmark, SIZES, params, window=16)
    bottleneck_MBps = min(params.injection_bw_GBps, params.link_bw_GBps) * 1e3
    assert (result.throughput_MBps <= bottleneck_MBps * (1 + 1e-12)).all()


@settings(max_examples=25, deadline=None)
@given(params_strategy, st.sampled_from(["pingpong", "stream"]))
def test_time_never_decreases_with_size_within_a_protocol(
    params: SimParams, benchmark: str
) -> None:
    result = simulate_benchmark(benchmark, SIZES, params, window=16)
    for proto in ("small", "eager", "rendezvous"):
        t = result.time_us[np.array(result.protocols) == proto]
        assert (np.diff(t) >= -1e-9 * t[1:]).all(), proto


def test_large_message_stream_reaches_link_bandwidth() -> None:
    for inj, link in [(13.04, 12.47), (6.0, 15.0), (16.0, 9.0)]:
        params = SimParams(injection_bw_GBps=inj, link_bw_GBps=link)
        result = simulate_benchmark("stream", [4 << 20], params, window=64)
        bottleneck = min(inj, link) * 1e3
        assert result.throughput_MBps[0] == pytest.approx(bottleneck, rel=0.02)
        assert result.throughput_MBps[0] <= bottleneck


def test_decomposition_sums_to_time_per_repetition() -> None:
    result = simulate_benchmark("stream", [100, 10000, 1 << 20], SimParams(), window=8)
    for j in range(3):
        for d in result.decomposition[j]:
            assert d.total_s > 0
    # the timing rank spends the whole window in MPI or waiting: parts sum to the window time
    pp = simulate_benchmark("pingpong", [100, 10000, 1 << 20])
    for j in range(3):
        assert pp.decomposition[j][0].total_s == pytest.approx(2 * pp.time_us[j] * 1e-6, rel=1e-9)


def test_batch_equals_single_runs() -> None:
    rng = np.random.default_rng(7)
    names = tuple(TABLE1_PRIOR_RANGES)
    x = np.column_stack([rng.uniform(lo, hi, 5) for lo, hi in TABLE1_PRIOR_RANGES.values()])
    sizes = (1, 4097, 70000, 1 << 20)
    for benchmark in ("pingpong", "stream"):
        model = BenchmarkModel(benchmark, sizes, names, window=8)
        y = model(x)
        for i in range(5):
            params = SimParams.from_mapping(dict(zip(names, x[i], strict=True)))
            single = simulate_benchmark(benchmark, sizes, params, window=8).time_us
            np.testing.assert_allclose(y[i], single, rtol=1e-12)


def test_model_outputs_and_identity() -> None:
    m = BenchmarkModel("stream", (1, 1024), ("link_bw_GBps",), observable="throughput_MBps")
    assert m.output_names == ("stream_throughput_MBps@1B", "stream_throughput_MBps@1024B")
    other = BenchmarkModel("stream", (1, 1024), ("link_bw_GBps",), observable="time_us")
    assert m.model_id != other.model_id
    x = np.array([[5.0], [10.0]])
    throughput, time_us = m(x), other(x)
    assert throughput.shape == (2, 2)
    np.testing.assert_allclose(throughput, np.array([1.0, 1024.0]) / time_us, rtol=1e-12)


def test_batch_rejects_bad_rows() -> None:
    names = ("link_bw_GBps",)
    with pytest.raises(ParameterError, match=r"link_bw_GBps=-1.0 .*parameter set 1"):
        params_matrix(SimParams(), names, np.array([[10.0], [-1.0]]))
    with pytest.raises(ParameterError, match="matrix"):
        evaluate_batch(BenchmarkSetup(), [1], np.ones((2, 3)))


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([], "sizes is empty"),
        ([0], "message size 0"),
        ([1.5], "message size 1.5"),
        ([-4], "message size -4"),
    ],
)
def test_bad_sizes(sizes: list[float], message: str) -> None:
    with pytest.raises(SettingError, match=message):
        simulate_benchmark("pingpong", sizes)


def test_bad_settings() -> None:
    with pytest.raises(SettingError, match=r"benchmark 'latency' is unknown"):
        simulate_benchmark("latency", [1])
    with pytest.raises(SettingError, match=r"window=0 is invalid"):
        simulate_benchmark("stream", [1], window=0)
    with pytest.raises(SettingError, match=r"observable 'bw'"):
        BenchmarkModel("stream", (1,), (), observable="bw")


def test_more_repetitions_change_nothing() -> None:
    """The engine is deterministic and each repetition drains both ranks."""
    sizes = [1, 5000, 70000, 1 << 20]
    for benchmark in ("pingpong", "stream"):
        one = simulate_benchmark(benchmark, sizes, window=16, repetitions=1).time_us
        five = simulate_benchmark(benchmark, sizes, window=16, repetitions=5).time_us
        np.testing.assert_allclose(five, one, rtol=1e-12)


def test_batch_results_do_not_depend_on_threads() -> None:
    rng = np.random.default_rng(11)
    names = tuple(TABLE1_PRIOR_RANGES)
    x = np.column_stack([rng.uniform(lo, hi, 7) for lo, hi in TABLE1_PRIOR_RANGES.values()])
    matrix = params_matrix(SimParams(), names, x)
    setup = BenchmarkSetup("stream", window=8)
    one = evaluate_batch(setup, [1, 5000, 70000], matrix, threads=1)
    three = evaluate_batch(setup, [1, 5000, 70000], matrix, threads=3)
    np.testing.assert_array_equal(one.time_us, three.time_us)
    assert one.n_events == three.n_events
    with pytest.raises(SettingError, match="threads=0 is invalid"):
        evaluate_batch(setup, [1], matrix, threads=0)
    model = BenchmarkModel("stream", (1, 5000, 70000), names, window=8, threads=2)
    np.testing.assert_array_equal(model(x), one.time_us)
    assert model.model_id == BenchmarkModel("stream", (1, 5000, 70000), names, window=8).model_id
    with pytest.raises(SettingError, match="threads=0 is invalid"):
        BenchmarkModel("stream", (1,), names, threads=0)


def test_call_timings_are_the_protocol_costs_of_the_timed_call() -> None:
    """MPI_Isend = the sender's CPU work (post; copy + post; pin + post); MPI_Recv of an
    arrived mailbox or eager message = the copy-out; of a rendezvous message: pin, get, data,
    acknowledgement; MPI_Send of a ping-pong = the Isend for eager sizes (local completion)."""
    p = SimParams()
    sizes = [1, 4097, 1 << 20]
    iss = simulate_benchmark("isend", sizes, p).time_us
    copy_us = 4097 / (p.memory_bw_GBps * 1e3)
    pin_us = p.rdma_pin_latency_us + 256 * p.rdma_pin_per_page_ns * 1e-3
    np.testing.assert_allclose(
        iss,
        [p.post_header_delay_us, copy_us + p.post_header_delay_us, pin_us + p.post_header_delay_us],
    )
    recv = simulate_benchmark("recv_arrived", sizes, p).time_us
    np.testing.assert_allclose(recv[:2], [1 / (p.memory_bw_GBps * 1e3), copy_us])
    wire_us = (1 << 20) / (min(p.injection_bw_GBps, p.link_bw_GBps) * 1e3)
    assert recv[2] > pin_us + p.post_rdma_delay_us + wire_us
    send = simulate_benchmark("pingpong_send", sizes, p).time_us
    np.testing.assert_allclose(send[:2], iss[:2])
    half = simulate_benchmark("pingpong", sizes, p).time_us
    assert send[2] > half[2]  # the blocking rendezvous send waits for the acknowledgement
    # the batch path agrees with single runs for the call timings too
    m = BenchmarkModel("recv_arrived", tuple(sizes), ("memory_bw_GBps",), base=p)
    np.testing.assert_allclose(m([[p.memory_bw_GBps]])[0], recv, rtol=1e-12)
