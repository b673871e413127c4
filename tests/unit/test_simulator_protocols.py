"""Closed-form checks of the three point-to-point protocols on the two-node network.

Derivation (two nodes through one switch, analytic network; H = 64 B header):

* one-way wire time of n bytes: ``L(n) = 2 * hop + n / min(B_inj, B_link)``
  (two links, transmission at the bottleneck bandwidth, no contention in a ping-pong);
* pin time of n bytes: ``pin(n) = pin_latency + ceil(n / page) * pin_per_page``.

Half round trip of the blocking ping-pong (the receiver has always posted first):

* mailbox (n <= small_max): sender posts header+payload (``d_hdr``), the message
  flies ``L(H + n)``, the receiver copies it out of the mailbox (``n / B_mem``);
* eager RDMA: sender copies into its pinned buffer (``n / B_mem``) and posts the
  header (``d_hdr``); header flies ``L(H)``; receiver posts the RDMA get (``d_rdma``);
  get request flies ``L(H)``; data flies ``L(n)``; receiver copies out (``n / B_mem``);
* rendezvous: sender pins and posts the header (``pin(n) + d_hdr``); header ``L(H)``;
  receiver pins and posts the get (``pin(n) + d_rdma``); request ``L(H)``; data
  ``L(n)``; the receive completes (zero copy) and the reply starts at once, while
  the acknowledgement travels back in parallel (it reaches the sender before the
  reply's header because ``pin(n) > 0``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpiuq.simulator.benchmarks.run import simulate_benchmark
from mpiuq.simulator.kernel import HEADER_BYTES
from mpiuq.simulator.parameters import SimParams

H = HEADER_BYTES


def wire_s(p: SimParams, n: int) -> float:
    return 2 * p.hop_latency_ns * 1e-9 + n / (min(p.injection_bw_GBps, p.link_bw_GBps) * 1e9)


def pin_s(p: SimParams, n: int) -> float:
    return (
        p.rdma_pin_latency_us * 1e-6 + math.ceil(n / p.page_bytes) * p.rdma_pin_per_page_ns * 1e-9
    )


def expected_half_rtt_s(p: SimParams, n: int) -> float:
    copy = n / (p.memory_bw_GBps * 1e9)
    d_hdr = p.post_header_delay_us * 1e-6
    d_rdma = p.post_rdma_delay_us * 1e-6
    if n <= p.small_max_bytes:
        return d_hdr + wire_s(p, H + n) + copy
    if n <= p.eager_max_bytes:
        return copy + d_hdr + wire_s(p, H) + d_rdma + wire_s(p, H) + wire_s(p, n) + copy
    return pin_s(p, n) + d_hdr + wire_s(p, H) + pin_s(p, n) + d_rdma + wire_s(p, H) + wire_s(p, n)


PARAM_SETS = [
    SimParams(),
    SimParams(
        injection_bw_GBps=5.0,
        link_bw_GBps=9.0,
        memory_bw_GBps=3.0,
        post_header_delay_us=1.2,
        post_rdma_delay_us=0.6,
        rdma_pin_latency_us=2.0,
        rdma_pin_per_page_ns=80.0,
        hop_latency_ns=250.0,
        small_max_bytes=1024,
        eager_max_bytes=17408,
    ),
]
SIZES = [1, 100, 1024, 1025, 4096, 4097, 17408, 17409, 65536, 65537, 300_000, 1 << 20]


@pytest.mark.parametrize("params", PARAM_SETS, ids=["table1", "slow"])
def test_pingpong_matches_closed_form(params: SimParams) -> None:
    result = simulate_benchmark("pingpong", SIZES, params)
    expected = np.array([expected_half_rtt_s(params, n) for n in SIZES]) * 1e6
    # only floating-point rounding separates the engine from the formula
    np.testing.assert_allclose(result.time_us, expected, rtol=1e-9)


def test_protocol_switches_exactly_at_thresholds() -> None:
    p = PARAM_SETS[1]
    sizes = [p.small_max_bytes, p.small_max_bytes + 1, p.eager_max_bytes, p.eager_max_bytes + 1]
    result = simulate_benchmark("pingpong", sizes, p)
    assert result.protocols == ("small", "eager", "eager", "rendezvous")
    # the eager protocol adds a header round and an RDMA get: a jump, not a drift
    assert result.time_us[1] - result.time_us[0] > p.post_rdma_delay_us
    # rendezvous replaces two copies by two pinnings
    jump = result.time_us[3] - result.time_us[2]
    two_pins_minus_copies = 2 * pin_s(p, p.eager_max_bytes + 1) - 2 * p.eager_max_bytes / (
        p.memory_bw_GBps * 1e9
    )
    assert jump == pytest.approx(two_pins_minus_copies * 1e6, rel=1e-3)


def test_decomposition_of_rendezvous_pingpong() -> None:
    """Rank 0's round trip: its own pinning/posting is stack, the partner's pinning is stack."""
    p = SimParams()
    n = 1 << 20
    result = simulate_benchmark("pingpong", [n], p)
    d0 = result.decomposition[0][0]
    round_trip = 2 * result.time_us[0] * 1e-6
    assert d0.total_s == pytest.approx(round_trip, rel=1e-12)
    # per round trip rank 0 pins + posts its send, waits for the receiver's pin + get post
    # and for the receiver posting the acknowledgement (both stack), then pins + posts the
    # get of the reply (its progress engine, while it is blocked: stack)
    d_hdr = p.post_header_delay_us * 1e-6
    stack = pin_s(p, n) + d_hdr + 2 * (pin_s(p, n) + p.post_rdma_delay_us * 1e-6) + d_hdr
    assert d0.mpi_stack_s == pytest.approx(stack, rel=1e-9)
    assert d0.compute_s == 0.0
