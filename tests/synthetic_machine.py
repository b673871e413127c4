"""A synthetic machine for the end-to-end campaign tests: known parameter values, benchmark
CSV files simulated from them with noise, and the campaign tables that fit them.

The campaigns calibrate four endpoint and network parameters (:data:`TRUTH`) inside the
prior boxes of :data:`PRIOR_BOXES`, with the protocol thresholds of :data:`FIXED` held at
their true values; a test builds its campaign file from :func:`campaign_head`, data tables
(:data:`PINGPONG_DATA`, :func:`stream_data`) and :func:`sampling_tables`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from mpiuq.main import main

#: The machine's true parameter values.
TRUTH = {
    "post_header_delay_us": 0.8,
    "memory_bw_GBps": 6.0,
    "link_bw_GBps": 5.0,
    "rdma_pin_latency_us": 3.0,
}
#: Protocol thresholds, held fixed at their true values by the campaigns.
FIXED = {"small_max_bytes": 1024, "eager_max_bytes": 16384}
#: Uniform prior box of each calibrated parameter (each holds its true value).
PRIOR_BOXES = {
    "post_header_delay_us": (0.2, 2.0),
    "memory_bw_GBps": (2.0, 12.0),
    "link_bw_GBps": (2.0, 10.0),
    "rdma_pin_latency_us": (0.5, 8.0),
}
#: The ping-pong series ``pp.csv`` as a campaign data table.
PINGPONG_DATA = """
[[data]]
label = "pp"
path = "pp.csv"
benchmark = "pingpong_half_rtt"
sizes_per_protocol = 3
"""


def simulate_csv(
    folder: Path,
    benchmark: str,
    sizes: Sequence[int],
    csv_name: str,
    seed: int,
    truth: Mapping[str, float] = TRUTH,
) -> Path:
    """``folder/csv_name``: ``mpiuq simulate`` of ``benchmark`` at ``sizes`` on the machine
    ``truth`` (with :data:`FIXED`), 30 replicas per size with 3% noise."""
    params = [a for k, v in (dict(truth) | FIXED).items() for a in ("--param", f"{k}={v}")]
    args = ["simulate", "--benchmark", benchmark, "--sizes", ",".join(map(str, sizes)), *params]
    args += ["--replicas", "30", "--noise-cv", "0.03", "--seed", str(seed)]
    assert main([*args, "--csv", str(folder / csv_name)]) == 0
    return folder / csv_name


def campaign_head(name: str, seed: int) -> str:
    """A campaign's name, seed, fixed thresholds and prior boxes (TOML)."""
    fixed = "".join(f"{k} = {v}\n" for k, v in FIXED.items())
    boxes = "".join(f"{k} = [{lo}, {hi}]\n" for k, (lo, hi) in PRIOR_BOXES.items())
    return f'\nname = "{name}"\nseed = {seed}\n[simulator.fixed]\n{fixed}[parameters]\n{boxes}'


def stream_data(label: str) -> str:
    """The streaming-bandwidth series ``LABEL.csv`` as a campaign data table."""
    return f"""
[[data]]
label = "{label}"
path = "{label}.csv"
benchmark = "stream_bw"
observable = "throughput_MBps"
likelihood = "lognormal"
sizes_per_protocol = 3
"""


def sampling_tables(walkers: int) -> str:
    """The surrogate, sampler, refinement and exact-posterior tables of a small campaign."""
    return f"""
[surrogate]
level = 3
order = 3
[calibration]
walkers = {walkers}
steps = 300
burn = 200
max_steps = 4000
[refinement]
rounds = 1
level = 3
[exact]
draws = 800
proposal_draws = 1600
move_steps = 10
"""
