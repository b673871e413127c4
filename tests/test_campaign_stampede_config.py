"""The shipped stampede-ib campaign file loads, and its data selection matches the paper's design."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpiuq.calibration.campaign import observations_for
from mpiuq.calibration.config import load_campaign
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS

CAMPAIGN = Path(__file__).resolve().parents[1] / "experiments" / "stampede-ib.toml"


def test_stampede_campaign_loads_and_selects_six_sizes_per_protocol() -> None:
    c = load_campaign(CAMPAIGN)
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
