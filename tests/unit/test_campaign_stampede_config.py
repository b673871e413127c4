"""The shipped Stampede campaign files load, and their data selections match their designs:
the ping-pong-only campaign (the reference paper's design) and the joint campaign (the four
series of the same runs, one model per protocol regime)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpiuq.calibration.config import load_campaign
from mpiuq.calibration.pipeline.campaign import observations_for
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_pingpong_campaign_loads_and_selects_six_sizes_per_protocol() -> None:
    c = load_campaign(EXPERIMENTS / "stampede-ib.toml")
    assert c.name == "stampede-ib"
    assert set(c.parameters.names) == set(CONTINUOUS_PARAMETERS) - {"hop_latency_ns"}
    base = c.simulator.base_params()
    assert (base.small_max_bytes, base.eager_max_bytes) == (150, 17408)
    obs = observations_for(c)
    protocols = [base.protocol_of(int(s)) for s in obs.sizes_bytes]
    assert [protocols.count(p) for p in ("small", "eager", "rendezvous")] == [6, 6, 6]
    # the README's rendezvous switch (17,498 B) and largest size are selected
    assert 17498 in obs.sizes_bytes and obs.sizes_bytes[-1] == 989921
    # warm-up iterations (run % 10 == 0) dropped: 45 of 50 replicas remain at 989,921 B
    assert obs.n_replicas[-1] == 45
    assert np.all(obs.var > 0)


def test_joint_campaign_fits_the_four_series_over_five_regimes() -> None:
    c = load_campaign(EXPERIMENTS / "stampede-ib-joint.toml")
    assert c.name == "stampede-ib-joint"
    assert [(d.label, d.model) for d in c.datasets] == [
        ("pingpong", "pingpong"),
        ("send", "pingpong_send"),
        ("isend", "isend"),
        ("recv", "recv_arrived"),
    ]
    table = c.simulator.base_params().regime_table()
    assert [r.label for r in table] == [
        "small",
        "eager",
        "eager_large",
        "rendezvous",
        "rendezvous_large",
    ]
    assert [r.max_bytes for r in table[:-1]] == [150, 5000, 17408, 110000]
    costs = ("recv_overhead_us", "unexpected_us", "send_complete_us")
    per_regime = {f"regime{k}_{cost}" for k in range(5) for cost in costs}
    # the injection link is held at FDR's line rate; the call timings free the hop latency
    assert set(c.parameters.names) == per_regime | {
        "hop_latency_ns",
        "link_bw_GBps",
        "memory_bw_GBps",
        "post_header_delay_us",
        "rdma_pin_latency_us",
    }
    # the bottleneck bandwidth's prior stops at FDR's data rate (6.8 GB/s, data README)
    assert c.parameters.upper[c.parameters.names.index("link_bw_GBps")] == 6.8
    obs = observations_for(c)
    for k in range(4):
        sizes = obs.sizes_bytes[obs.outputs_of(k)]
        regimes = [c.simulator.base_params().protocol_of(int(s)) for s in sizes]
        assert [regimes.count(r.label) for r in table] == [6] * 5, c.datasets[k].label
        assert sizes[0] == 1 and sizes[-1] == 989921
    assert np.all(obs.var > 0)
