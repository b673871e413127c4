"""The shipped validation campaigns parse and split as their comments say: what is fitted,
what is held out and how many measured sizes each scored group has (the data files are
in the repository)."""

from __future__ import annotations

from pathlib import Path

from mpiuq.calibration.checking.validation import split_campaign
from mpiuq.calibration.config import parse_campaign, read_toml

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_ucx_latency_only_campaign_fits_osu_latency_and_holds_out_osu_bw() -> None:
    path = EXPERIMENTS / "validation" / "openmpi-ucx-ib-latency-only.toml"
    campaign = parse_campaign(read_toml(path), base_dir=path.parent)
    split = split_campaign(campaign)
    assert [t.label for t in split.fit.datasets] == ["latency"]
    assert [t.benchmark for t in split.fit.datasets] == ["osu_latency"]
    groups = {g.name: g for g in split.groups}
    held = groups["bandwidth"]
    assert held.kind == "held-out series"
    assert held.spec.benchmark == "osu_bw"
    # osu_bw: 23 sizes, 1 B to 4 MiB, every one scored
    assert held.sizes_bytes == tuple(2**k for k in range(23))
    # osu_latency: 24 sizes (0 B to 4 MiB), 6 per regime fitted from 1 B; the rest scored
    unselected = groups["latency (unselected)"]
    assert unselected.kind == "unselected sizes"
    fitted = split.fitted_sizes["latency"]
    assert len(fitted) == 18
    assert set(fitted).isdisjoint(unselected.sizes_bytes)
    assert len(fitted) + len(unselected.sizes_bytes) == 24
