"""The kernel runs the regime table: per-regime costs and the TCP-like stream protocols
against closed-form ping-pong and call times on the two-node switch, costs vanishing on
the compute-only network, and raw parameter matrices with bad regime slots refused.

Closed forms (analytic network, unloaded: a transfer of ``W`` wire bytes takes
``alpha + W / min(injection, link)`` with ``alpha = 2 hops x hop latency``):

* mailbox: half RTT = post + latency + transfer(64 + n) + n / copy_bw;
* stream: half RTT = write + latency + transfer(64 + n + 90 s) + read, write = read =
  post + n / copy_bw + s x segment_us, s = max(1, ceil(n / segment_bytes));
* stream rendezvous: half RTT = post + latency + transfer(64) (header) + post (go-ahead)
  + transfer(64) + write + transfer(n + 90 s) + read.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpiuq.simulator.benchmarks.run import BenchmarkSetup, evaluate_batch, simulate_benchmark
from mpiuq.simulator.engine import params_vector, simulate
from mpiuq.simulator.errors import ParameterError
from mpiuq.simulator.networks import ComputeOnly
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.table import ProgramBuilder
from mpiuq.simulator.regimes import SEGMENT_WIRE_BYTES, Regime

SIZES = (1, 100, 1448, 1449, 5000, 70000)
BASE: dict[str, float] = {
    "injection_bw_GBps": 25.0,
    "link_bw_GBps": 1.1,
    "memory_bw_GBps": 6.0,
    "post_header_delay_us": 2.5,
    "hop_latency_ns": 3000.0,
}


def _transfer_us(p: SimParams, wire_bytes: float) -> float:
    alpha_us = 2 * p.hop_latency_ns * 1e-3
    return alpha_us + wire_bytes / (min(p.injection_bw_GBps, p.link_bw_GBps) * 1e3)


def _side_us(p: SimParams, r: Regime, n: int) -> float:
    segs = max(1, math.ceil(n / r.segment_bytes))
    return p.post_header_delay_us + n / (r.copy_bw_GBps * 1e3) + segs * r.segment_us


def _frame(r: Regime, n: int) -> int:
    return n + max(1, math.ceil(n / r.segment_bytes)) * SEGMENT_WIRE_BYTES


def test_mailbox_with_its_own_latency_and_copy_bandwidth() -> None:
    r = Regime("mailbox", 1 << 30, send_overhead_us=1.5, copy_bw_GBps=2.0)
    p = SimParams(**BASE, regimes=(r, Regime("rendezvous")))
    got = simulate_benchmark("pingpong", SIZES, p).time_us
    want = [
        p.post_header_delay_us
        + r.send_overhead_us
        + _transfer_us(p, 64 + n)
        + n / (r.copy_bw_GBps * 1e3)
        for n in SIZES
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_stream_half_round_trip_and_isend_time() -> None:
    r = Regime(
        "stream",
        1 << 30,
        send_overhead_us=4.0,
        copy_bw_GBps=3.0,
        segment_bytes=1448,
        segment_us=0.7,
    )
    p = SimParams(**BASE, regimes=(r, Regime("rendezvous")))
    got = simulate_benchmark("pingpong", SIZES, p).time_us
    want = [
        _side_us(p, r, n)
        + r.send_overhead_us
        + _transfer_us(p, 64 + _frame(r, n))
        + _side_us(p, r, n)
        for n in SIZES
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the step at the segment size: one more segment's host cost on each side and its framing
    step = got[3] - got[2]
    assert step == pytest.approx(
        2 * r.segment_us + (1 + SEGMENT_WIRE_BYTES) / 1.1e3 + 2 / 3.0e3, rel=1e-9
    )
    isend = simulate_benchmark("isend", SIZES, p).time_us
    np.testing.assert_allclose(
        isend, [_side_us(p, r, n) + r.send_overhead_us for n in SIZES], rtol=1e-12
    )


def test_stream_rendezvous_handshake_then_the_stream() -> None:
    eager = Regime("stream", 1000, copy_bw_GBps=3.0, segment_us=0.5)
    rdv = Regime("stream_rendezvous", send_overhead_us=1.0, copy_bw_GBps=3.0, segment_us=0.5)
    p = SimParams(**BASE, regimes=(eager, rdv))
    sizes = (2000, 65536, 1 << 20)
    got = simulate_benchmark("pingpong", sizes, p).time_us
    d = p.post_header_delay_us
    want = [
        d + rdv.send_overhead_us
        + _transfer_us(p, 64)
        + d
        + _transfer_us(p, 64)
        + _side_us(p, rdv, n)
        + _transfer_us(p, _frame(rdv, n))
        + _side_us(p, rdv, n)
        for n in sizes
    ]  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the blocking send completes when the payload is in the socket, before it arrives
    send = simulate_benchmark("pingpong_send", sizes, p).time_us
    np.testing.assert_allclose(
        send,
        [
            d + rdv.send_overhead_us + 2 * _transfer_us(p, 64) + d + _side_us(p, rdv, n)
            for n in sizes
        ],
        rtol=1e-12,
    )


def test_regime_costs_vanish_without_mpi_overheads() -> None:
    table = (
        Regime("stream", 1000, send_overhead_us=5.0, segment_us=2.0),
        Regime("stream_rendezvous", send_overhead_us=5.0, copy_bw_GBps=1.0, segment_us=2.0),
    )
    p = SimParams(**BASE, regimes=table)
    b = ProgramBuilder(n_ranks=2)
    for n in (10, 5000):
        b.send(0, dest=1, nbytes=n, tag=1)
        b.recv(1, source=0, nbytes=n, tag=1)
    run = simulate(b.build(), p, ComputeOnly())
    assert np.all(run.end_s == 0.0)


def test_batch_runs_a_stream_table_like_single_runs() -> None:
    table = (
        Regime("mailbox", 1408),
        Regime("stream", 65536, segment_us=0.4),
        Regime("stream_rendezvous", segment_us=0.4),
    )
    p = SimParams(**BASE, regimes=table)
    sizes = (1, 1408, 1409, 65536, 65537, 1 << 20)
    single = simulate_benchmark("stream", sizes, p, window=8).time_us
    batch = evaluate_batch(BenchmarkSetup("stream", 8), sizes, params_vector(p)[None, :])
    np.testing.assert_array_equal(batch.time_us[0], single)


@pytest.mark.parametrize(
    ("slot", "value", "match"),
    [
        (
            "regime1_protocol",
            9.0,
            r"regime1_protocol=9(\.0)? is invalid: expected a protocol code 0\.\.5",
        ),
        ("regime0_max_bytes", 70000.0, r"regime1_max_bytes=.* at least the previous regime's"),
        (
            "regime2_max_bytes",
            1e6,
            r"regime2_max_bytes=1000000(\.0)? is invalid: expected no bound \(inf\)",
        ),
        (
            "regime1_segment_us",
            -1.0,
            r"regime1_segment_us=-1(\.0)? is invalid: expected a number in \[0, 1e\+06\] us",
        ),
        (
            "regime0_segment_bytes",
            0.0,
            r"regime0_segment_bytes=0(\.0)? is invalid: expected a whole number",
        ),
    ],
)
def test_raw_matrices_with_bad_regime_slots_are_refused(
    slot: str, value: float, match: str
) -> None:
    p = SimParams()
    names = list(p.as_dict())
    row = params_vector(p)
    row[names.index(slot)] = value
    with pytest.raises(ParameterError, match=match):
        evaluate_batch(BenchmarkSetup("pingpong"), (1,), row[None, :])


def test_an_empty_regime_of_equal_thresholds_runs() -> None:
    """small_max_bytes == eager_max_bytes (no eager range, as in openmpi-ucx-ib.toml): the
    default table's eager regime is empty and never selected."""
    p = SimParams(small_max_bytes=8192, eager_max_bytes=8192)
    got = evaluate_batch(BenchmarkSetup("pingpong"), (8192, 8193), params_vector(p)[None, :])
    want = simulate_benchmark("pingpong", (8192, 8193), p)
    np.testing.assert_array_equal(got.time_us[0], want.time_us)
    assert want.protocols == ("small", "rendezvous")
