"""Every benchmark kind against its closed form, with the per-regime CPU costs of LogGP.

Two nodes through one switch, analytic network: a transfer of ``b`` bytes takes
``W(b) = 2 hop + b / min(B_inj, B_link)`` when nothing else is on the wire. Per message
of ``n`` bytes in regime ``k``: ``d`` the global post delay, ``o_s`` the regime's send
overhead, ``o_c`` its send-completion cost (paid by the wait of the send request), ``o_r``
its receive overhead (paid by the wait of the receive), ``u`` its unexpected-message cost
(on top of ``o_r`` when the message arrived before the receive was posted), ``c = n /
copy_bw`` a copy, ``pin = pin_latency + ceil(n / page) pin_per_page``, ``H = 64`` B.

============  ===================  ==============================================================
kind          call / time          closed form
============  ===================  ==============================================================
mailbox       MPI_Isend            d + o_s
              MPI_Send (ping-pong) d + o_s + o_c
              half round trip      d + o_s + W(H + n) + c + o_r
              MPI_Recv, arrived    c + o_r + u
eager         MPI_Isend            c + d + o_s
              MPI_Send (ping-pong) c + d + o_s + o_c
              half round trip      c + d + o_s + W(H) + d_rdma + W(H) + W(n) + c + o_r
              MPI_Recv, arrived    c + o_r + u   (the get was posted when the header came in)
rendezvous    MPI_Isend            pin + d + o_s (the RTS only)
              data in, D =         pin + d + o_s + W(H) + pin + d_rdma + W(H) + W(n)
              half round trip      D + o_r
              MPI_Send (ping-pong) D + d + W(H) + o_c (the acknowledgement after the data)
              MPI_Recv, arrived    pin + d_rdma + W(H) + W(n) + o_r + u (handshake + transfer)
============  ===================  ==============================================================

Streaming (window ``w``, one mailbox regime, the receiver and the wire faster than the
sender, so the sender's posts set the pace):

* osu_bw: window time = ``w (d + o_s) + W(H + n) + c + o_r`` (the last message, consumed)
  ``+ d + o_s + W(H + 4) + c_4 + o_r`` (the 4-byte acknowledgement, consumed);
* osu_bibw, when ``w o_c >= W(H + n)`` (the peer's window is in before the receives are
  waited for): window time = ``w (d + o_s + o_c + c + o_r)`` on each rank, time per message
  half of that over ``w``; large messages reach twice the bottleneck bandwidth (links are
  full duplex).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from mpiuq.simulator.benchmarks.run import simulate_benchmark
from mpiuq.simulator.kernel import HEADER_BYTES
from mpiuq.simulator.parameters import SimParams, params_matrix
from mpiuq.simulator.regimes import Regime

H = HEADER_BYTES
REGIMES = (
    Regime(
        "mailbox",
        1024,
        send_overhead_us=0.3,
        recv_overhead_us=0.4,
        unexpected_us=1.1,
        send_complete_us=0.15,
        copy_bw_GBps=8.0,
    ),
    Regime(
        "eager",
        16384,
        send_overhead_us=0.2,
        recv_overhead_us=0.6,
        unexpected_us=2.0,
        send_complete_us=0.25,
        copy_bw_GBps=4.0,
    ),
    Regime(
        "rendezvous",
        send_overhead_us=0.1,
        recv_overhead_us=0.7,
        unexpected_us=5.0,
        send_complete_us=0.05,
    ),
)
PARAMS = SimParams(
    injection_bw_GBps=25.0,
    link_bw_GBps=5.0,
    memory_bw_GBps=10.0,
    post_header_delay_us=0.5,
    post_rdma_delay_us=0.3,
    rdma_pin_latency_us=0.2,
    rdma_pin_per_page_ns=2.0,
    hop_latency_ns=150.0,
    regimes=REGIMES,
)
SIZES = (1, 1000, 1024, 1025, 16384, 16385, 200_000, 1 << 20)


def wire_us(p: SimParams, nbytes: float) -> float:
    return 2 * p.hop_latency_ns * 1e-3 + nbytes / (min(p.injection_bw_GBps, p.link_bw_GBps) * 1e3)


def pin_us(p: SimParams, n: int) -> float:
    return p.rdma_pin_latency_us + math.ceil(n / p.page_bytes) * p.rdma_pin_per_page_ns * 1e-3


def regime_of(p: SimParams, n: int) -> Regime:
    return next(r for r in p.regime_table() if n <= r.max_bytes)


def copy_us(p: SimParams, r: Regime, n: int) -> float:
    return n / ((r.copy_bw_GBps or p.memory_bw_GBps) * 1e3)


def closed_form_us(p: SimParams, benchmark: str, n: int) -> float:
    """The table of the module docstring."""
    r = regime_of(p, n)
    d = p.post_header_delay_us
    c = copy_us(p, r, n)
    if r.protocol == "mailbox":
        isend = d + r.send_overhead_us
        times = {
            "isend": isend,
            "pingpong_send": isend + r.send_complete_us,
            "pingpong": isend + wire_us(p, H + n) + c + r.recv_overhead_us,
            "recv_arrived": c + r.recv_overhead_us + r.unexpected_us,
        }
    elif r.protocol == "eager":
        isend = c + d + r.send_overhead_us
        data_in = isend + 2 * wire_us(p, H) + p.post_rdma_delay_us + wire_us(p, n)
        times = {
            "isend": isend,
            "pingpong_send": isend + r.send_complete_us,
            "pingpong": data_in + c + r.recv_overhead_us,
            "recv_arrived": c + r.recv_overhead_us + r.unexpected_us,
        }
    else:
        isend = pin_us(p, n) + d + r.send_overhead_us
        handshake = pin_us(p, n) + p.post_rdma_delay_us + wire_us(p, H) + wire_us(p, n)
        data_in = isend + wire_us(p, H) + handshake
        times = {
            "isend": isend,
            "pingpong_send": data_in + d + wire_us(p, H) + r.send_complete_us,
            "pingpong": data_in + r.recv_overhead_us,
            "recv_arrived": handshake + r.recv_overhead_us + r.unexpected_us,
        }
    return times[benchmark]


@pytest.mark.parametrize("benchmark", ["pingpong", "pingpong_send", "isend", "recv_arrived"])
def test_call_timings_and_half_round_trip_match_closed_forms(benchmark: str) -> None:
    got = simulate_benchmark(benchmark, SIZES, PARAMS).time_us
    want = [closed_form_us(PARAMS, benchmark, n) for n in SIZES]
    # only floating-point rounding separates the engine from the formulas
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_receive_overheads_sit_on_the_receiver_and_the_unexpected_path_only_late() -> None:
    """Raising o_r moves the half round trip but not the sender's calls; raising u moves
    only the receive of an arrived message (a ping-pong's receives are posted first)."""
    names = ("regime0_recv_overhead_us", "regime0_unexpected_us")
    base = {b: simulate_benchmark(b, (8,), PARAMS).time_us[0] for b in ("pingpong", "isend")}
    for name, delta, moved in ((names[0], 1.0, "pingpong"), (names[1], 3.0, "recv_arrived")):
        p = PARAMS.with_values(**{name: getattr(REGIMES[0], name.split("_", 1)[1]) + delta})
        for b in ("pingpong", "pingpong_send", "isend", "recv_arrived"):
            before = simulate_benchmark(b, (8,), PARAMS).time_us[0]
            after = simulate_benchmark(b, (8,), p).time_us[0]
            shift = delta if b == moved or (name == names[0] and b == "recv_arrived") else 0.0
            assert after - before == pytest.approx(shift, abs=1e-9), (name, b)
    assert base["isend"] < base["pingpong"]


def test_a_late_reply_takes_the_unexpected_path() -> None:
    """A send completion slower than the partner's answer: the reply arrives before the
    receive is posted, and the half round trip pays the unexpected-message cost once."""
    r = REGIMES[0]
    slow = PARAMS.with_values(regime0_send_complete_us=20.0)
    n = 8
    # each rank: post, o_c = 20 us before its receive is posted; the partner's message
    # (sent at the same time) is in by then, so the receive costs c + o_r + u from its
    # post. Both ranks run this cycle side by side: one cycle is the whole round trip.
    one_way = closed_form_us(PARAMS, "pingpong", n)
    post = PARAMS.post_header_delay_us + r.send_overhead_us
    assert one_way < post + 20.0
    cycle = post + 20.0 + copy_us(PARAMS, r, n) + r.recv_overhead_us + r.unexpected_us
    got = simulate_benchmark("pingpong", (n,), slow).time_us[0]
    assert got == pytest.approx(cycle / 2.0, rel=1e-9)


@pytest.mark.parametrize("n", [1, 100, 1000])
def test_streaming_windows_match_closed_forms(n: int) -> None:
    r = Regime(
        "mailbox",
        1 << 30,
        send_overhead_us=0.3,
        recv_overhead_us=0.2,
        unexpected_us=1.1,
        send_complete_us=0.05,
        copy_bw_GBps=20.0,
    )
    p = SimParams(
        injection_bw_GBps=25.0,
        link_bw_GBps=5.0,
        post_header_delay_us=0.5,
        hop_latency_ns=150.0,
        regimes=(r, Regime("rendezvous")),
    )
    w = 16
    post = p.post_header_delay_us + r.send_overhead_us
    c, c4 = copy_us(p, r, n), copy_us(p, r, 4)
    window = w * post + wire_us(p, H + n) + c + r.recv_overhead_us
    window += post + wire_us(p, H + 4) + c4 + r.recv_overhead_us
    got = simulate_benchmark("stream", (n,), p, window=w)
    assert got.time_us[0] == pytest.approx(window / w, rel=1e-9)
    slow_completion = p.with_values(regime0_send_complete_us=2.0)
    bi = simulate_benchmark("bidirectional_stream", (n,), slow_completion, window=w)
    per_message = (post + 2.0 + c + r.recv_overhead_us) / 2.0
    assert bi.time_us[0] == pytest.approx(per_message, rel=1e-9)
    assert bi.throughput_MBps[0] == pytest.approx(n / per_message, rel=1e-9)


def test_bidirectional_stream_reaches_twice_the_bottleneck() -> None:
    p = SimParams(injection_bw_GBps=25.0, link_bw_GBps=5.0)
    n = 1 << 22
    uni = simulate_benchmark("stream", (n,), p).throughput_MBps[0]
    bi = simulate_benchmark("bidirectional_stream", (n,), p).throughput_MBps[0]
    assert uni == pytest.approx(5000.0, rel=0.01) and uni <= 5000.0
    assert bi == pytest.approx(2 * uni, rel=0.01) and bi <= 10000.0


def test_new_costs_are_zero_by_default_and_the_former_name_is_read() -> None:
    """The default table carries zero overheads (the reference model); results written
    with the former name ``latency_us`` of the send overhead are still read."""
    table = SimParams().regime_table()
    assert all(
        r.send_overhead_us == r.recv_overhead_us == r.unexpected_us == r.send_complete_us == 0.0
        for r in table
    )
    old = SimParams.from_mapping({"regime1_latency_us": 0.7})
    assert old.regime_table()[1].send_overhead_us == 0.7
    m = params_matrix(SimParams(), ("regime1_latency_us",), [[0.7]])
    assert m[0, list(SimParams().as_dict()).index("regime1_send_overhead_us")] == 0.7


def test_decomposition_counts_the_receive_overhead_as_mpi_stack() -> None:
    res = simulate_benchmark("recv_arrived", (8,), PARAMS)
    r = REGIMES[0]
    rank0 = res.decomposition[0][0]
    # per repetition (warm-up and timed alike): rank 0's receive of the arrived reply and
    # the completion of its blocking send are stack time (with the post and the copy)
    stack = (
        PARAMS.post_header_delay_us
        + r.send_overhead_us
        + r.send_complete_us
        + copy_us(PARAMS, r, 8)
        + r.recv_overhead_us
        + r.unexpected_us
    )
    assert rank0.mpi_stack_s * 1e6 == pytest.approx(stack, rel=1e-9)


@pytest.mark.parametrize("copy_bw", [2.0, 20.0])  # copy slower, then faster, than the wire
def test_pipelined_stream_copies_overlap_the_transfer(copy_bw: float) -> None:
    """A stream regime with ``fragment_bytes`` F: the call still copies every byte, the
    message leaves after its first fragment (later when the copy is the slower stage), and
    a receive posted in time has only the last fragment to copy out; a late one copies
    everything. Closed forms with c = 1 / copy_bw, G = 1 / min(B_inj, B_link), s segments:

    * leaves at   lead = d + o_s + s x seg + n c - (n - F) min(c, G)
    * half RTT  = lead + W(H + n + 90 s) + d + s x seg + F c + o_r
    * MPI_Isend = d + o_s + s x seg + n c
    * MPI_Recv, arrived = d + s x seg + n c + o_r + u
    """
    f = 16384
    r = Regime(
        "stream",
        1 << 30,
        send_overhead_us=0.2,
        recv_overhead_us=0.3,
        unexpected_us=0.9,
        copy_bw_GBps=copy_bw,
        segment_bytes=1 << 20,
        segment_us=0.1,
        fragment_bytes=f,
    )
    p = SimParams(
        injection_bw_GBps=25.0,
        link_bw_GBps=5.0,
        post_header_delay_us=0.5,
        hop_latency_ns=150.0,
        regimes=(r, Regime("rendezvous")),
    )
    sizes = (1000, f, 100_000, 900_000)
    d = p.post_header_delay_us
    g = 1.0 / (min(p.injection_bw_GBps, p.link_bw_GBps) * 1e3)
    c = 1.0 / (copy_bw * 1e3)
    want_half, want_isend, want_recv = [], [], []
    for n in sizes:
        s = max(1, math.ceil(n / r.segment_bytes))
        side = d + s * r.segment_us + n * c
        overlap = (n - f) * min(c, g) if n > f else 0.0
        lead = side + r.send_overhead_us - overlap
        last = min(n, f) * c
        want_half.append(
            lead + wire_us(p, H + n + 90 * s) + d + s * r.segment_us + last + r.recv_overhead_us
        )
        want_isend.append(side + r.send_overhead_us)
        want_recv.append(side + r.recv_overhead_us + r.unexpected_us)
    np.testing.assert_allclose(
        simulate_benchmark("pingpong", sizes, p).time_us, want_half, rtol=1e-9
    )
    np.testing.assert_allclose(simulate_benchmark("isend", sizes, p).time_us, want_isend, rtol=1e-9)
    np.testing.assert_allclose(
        simulate_benchmark("recv_arrived", sizes, p).time_us, want_recv, rtol=1e-9
    )
    # without pipelining the large message takes the whole copy on both sides in series
    plain = p.with_values(regime0_fragment_bytes=0)
    slow = simulate_benchmark("pingpong", (900_000,), plain).time_us[0]
    assert slow > want_half[-1] + 0.9 * (900_000 - f) * min(c, g)


def test_fragment_bytes_only_for_the_stream_protocol() -> None:
    from mpiuq.simulator.errors import ParameterError

    with pytest.raises(ParameterError, match="regime0_fragment_bytes"):
        SimParams(regimes=(Regime("mailbox", 4096, fragment_bytes=8192), Regime("rendezvous")))
    with pytest.raises(ParameterError, match="regime0_fragment_bytes"):
        SimParams(regimes=(Regime("stream", 4096, fragment_bytes=-1), Regime("rendezvous")))


def test_wire_latency_lengthens_round_trips_but_no_call_or_stream_rate() -> None:
    """A regime's ``wire_latency_us`` L: the half round trip grows by L, the calls on either
    side do not, and a window of w messages grows by 2 L (its last message and the
    acknowledgement), L / (w/2) per message: a pipeline hides it."""
    wl = 1.7
    p = PARAMS.with_values(regime0_wire_latency_us=wl)
    n = 8
    for b in ("pingpong", "pingpong_send", "isend", "recv_arrived"):
        base = simulate_benchmark(b, (n,), PARAMS).time_us[0]
        got = simulate_benchmark(b, (n,), p).time_us[0]
        assert got - base == pytest.approx(wl if b == "pingpong" else 0.0, abs=1e-9), b
    # the sender's window: no completion cost, so that its receive of the acknowledgement
    # is posted before the acknowledgement arrives either way (else the later arrival
    # would also spare the unexpected-message cost)
    w = 32
    quick = PARAMS.with_values(regime0_send_complete_us=0.0)
    base = simulate_benchmark("stream", (n,), quick, window=w).time_us[0]
    later = quick.with_values(regime0_wire_latency_us=wl)
    got = simulate_benchmark("stream", (n,), later, window=w).time_us[0]
    assert got - base == pytest.approx(2 * wl / w, rel=1e-9)


def test_wire_latency_per_byte_adds_to_the_round_trip_only() -> None:
    """``wire_ns_per_byte`` g: a store-and-forward stage off the CPUs adds n g to the half
    round trip of an n-byte message, nothing to the calls."""
    g = 0.08
    p = PARAMS.with_values(regime0_wire_ns_per_byte=g)
    for n in (8, 1000):
        for b in ("pingpong", "isend", "recv_arrived"):
            base = simulate_benchmark(b, (n,), PARAMS).time_us[0]
            got = simulate_benchmark(b, (n,), p).time_us[0]
            assert got - base == pytest.approx(n * g * 1e-3 if b == "pingpong" else 0.0, abs=1e-9)


def detached_closed_form_us(p: SimParams, benchmark: str, n: int) -> float:
    """SMPI's detached send with LogGP's costs: the sender copies the payload aside and
    posts the header (``MPI_Isend`` = c + d + o_s); once matched, the receiver's progress
    engine posts a go-ahead (d) that crosses back, and the payload then crosses alone."""
    r = regime_of(p, n)
    d = p.post_header_delay_us
    c = copy_us(p, r, n)
    isend = c + d + r.send_overhead_us
    after_match = d + wire_us(p, H) + wire_us(p, n)  # go-ahead out, go-ahead across, payload
    times = {
        "isend": isend,
        "pingpong_send": isend + r.send_complete_us,
        "pingpong": isend + wire_us(p, H) + after_match + c + r.recv_overhead_us,
        "recv_arrived": after_match + c + r.recv_overhead_us + r.unexpected_us,
    }
    return times[benchmark]


@pytest.mark.parametrize("benchmark", ["pingpong", "pingpong_send", "isend", "recv_arrived"])
def test_detached_sends_pay_the_same_endpoint_costs(benchmark: str) -> None:
    """The detached protocol (``--like simgrid``'s small sends) charges o_s in the send
    call, o_c in the send's wait, o_r (and u when the message arrived first) in the
    receive's wait, like the other protocols."""
    detached = dataclasses.replace(REGIMES[0], protocol="detached", max_bytes=16384)
    p = dataclasses.replace(PARAMS, regimes=(detached, REGIMES[2]))
    sizes = (1, 1000, 16384)
    got = simulate_benchmark(benchmark, sizes, p).time_us
    want = [detached_closed_form_us(p, benchmark, n) for n in sizes]
    np.testing.assert_allclose(got, want, rtol=1e-9)
