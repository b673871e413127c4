"""``--param NAME=VALUE`` options of one posterior point of a transfer check, for replay.

``experiments/checks/transfer_check.py`` samples a campaign's posterior on the simulator
and stores, per fold, the posterior median of every parameter. This prints the options
that make ``mpiuq replay`` and ``mpiuq whatif`` run that point: every scalar parameter and
every slot of the campaign's regime table (fixed values from the campaign file, calibrated
ones from the median), so that a campaign whose own run is not available (or not
trusted) can still be replayed at its point estimate.

Usage (from the repository root)::

    mpiuq replay TRACE $(python experiments/replay/point_params.py \\
        experiments/stampede-ib-joint.toml results/validation/transfer_stampede-ib.json)
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from mpiuq.calibration.config import parse_campaign, read_toml


def point_options(campaign_file: Path, transfer_json: Path, fold: str = "all") -> list[str]:
    """The ``--param`` options of the posterior median of ``fold``."""
    campaign = parse_campaign(read_toml(campaign_file), base_dir=campaign_file.parent)
    report = json.loads(transfer_json.read_text())
    entry = next(f for f in report["folds"] if f["fold"] == fold)
    median = {k: v for k, v in entry["posterior_median"].items() if k in campaign.parameters.names}
    params = campaign.simulator.base_params().with_values(**median)
    out: list[str] = []
    for name, value in params.as_dict().items():
        if isinstance(value, float) and math.isinf(value):
            continue  # the last regime's bound: a table described by slots leaves it out
        out += ["--param", f"{name}={value!r}"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("transfer_json", type=Path)
    ap.add_argument("--fold", default="all")
    a = ap.parse_args()
    print(" ".join(point_options(a.campaign, a.transfer_json, a.fold)))


if __name__ == "__main__":
    main()
