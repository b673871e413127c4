"""A user's own simulator kept outside the repository, for the external-simulator
campaign tests: a toy ping-pong model (three parameters, :data:`TRUTH`) as a Python
callable and as a command, synthetic data at the truth, and two campaign files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

TRUTH = {"lat_us": 2.0, "bw_GBps": 5.0, "rndv_us": 4.0}
SIZES = (1, 64, 512, 4096, 8192, 16384, 65536, 262144, 1048576)

# t(s) = lat + s / (1e3 bw) + rndv [s > 8192]: microseconds for s bytes at bw GB/s
MODEL = """
import numpy as np
SIZES = np.array({sizes}, dtype=float)
def simulate(x):
    lat, bw, rndv = x[:, :1], x[:, 1:2], x[:, 2:3]
    return lat + SIZES / (1e3 * bw) + rndv * (SIZES > 8192)
"""

COMMAND = """
import csv, sys
SIZES = {sizes}
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write(",".join(map(str, SIZES)) + "\\n")
    for r in rows:
        lat, bw, rndv = float(r["lat_us"]), float(r["bw_GBps"]), float(r["rndv_us"])
        f.write(",".join(repr(lat + s / (1e3 * bw) + (rndv if s > 8192 else 0.0))
                         for s in SIZES) + "\\n")
"""

CAMPAIGN = """
name = "{name}"
seed = 3
[simulator]
{simulator}
output_sizes = [{sizes}]
regime_max_bytes = [8192]
regime_names = ["eager", "rendezvous"]
max_simulator_runs = 600
[parameters]
lat_us = [0.5, 5.0]
bw_GBps = [3.0, 8.0]
rndv_us = [0.0, 10.0]
[data]
path = "data.csv"
benchmark = "pingpong_half_rtt"
[surrogate]
level = 3
order = 3
[calibration]
walkers = 12
steps = 200
burn = 150
max_steps = 3000
[refinement]
rounds = 1
error_draws = 50
[exact]
draws = 104
proposal_draws = 300
move_steps = 5
[posterior]
target_rhat = 1.1
"""


def write_data(folder: Path) -> None:
    """Synthetic ping-pong data at TRUTH: 30 replicas per size, 3% Gaussian noise."""
    rng = np.random.default_rng(3)
    s = np.array(SIZES, dtype=float)
    mean = TRUTH["lat_us"] + s / (1e3 * TRUTH["bw_GBps"]) + TRUTH["rndv_us"] * (s > 8192)
    lines = ["run,msg_size_bytes,value,unit,benchmark"]
    for size, m in zip(SIZES, mean, strict=True):
        for r in range(30):
            value = m * (1 + 0.03 * rng.standard_normal())
            lines.append(f"{r},{size},{value:.7g},us,pingpong_half_rtt")
    (folder / "data.csv").write_text("\n".join(lines) + "\n")


def make_user_folder(d: Path) -> Path:
    """Fill ``d`` as a user's folder: ``my_sim.py`` (callable), ``my_sim_cmd.py``
    (command), ``data.csv`` and the campaigns ``callable.toml`` and ``command.toml``."""
    sizes = ", ".join(map(str, SIZES))
    (d / "my_sim.py").write_text(MODEL.format(sizes=list(SIZES)))
    (d / "my_sim_cmd.py").write_text(COMMAND.format(sizes=list(SIZES)))
    write_data(d)
    callable_toml = CAMPAIGN.format(
        name="toy-callable", simulator='callable = "my_sim:simulate"', sizes=sizes
    )
    command = json.dumps([sys.executable, "my_sim_cmd.py", "{input}", "{output}"])
    command_toml = CAMPAIGN.format(
        name="toy-command", simulator=f"command = {command}\nbatch_size = 8", sizes=sizes
    )
    (d / "callable.toml").write_text(callable_toml)
    (d / "command.toml").write_text(command_toml)
    return d
