"""Replay a shared SimGrid TI trace with the calibrated platform (``smpirun -replay``).

The calibration's platform is two hosts and one link; an application of N ranks runs on
a cluster of N such hosts: every host has a private link of the calibrated bandwidth and
half the calibrated latency (a message crosses two, so it sees the calibrated latency),
joined by a backbone that is never the bottleneck (1 TB/s, no latency). The SMPI factors
(``smpi/bw-factor``, ``smpi/lat-factor``, ``smpi/os``, ``smpi/or``, ``smpi/ois``, thresholds)
are the calibration's.

It replays the trace at ``--draws`` draws of the Bayesian posterior (the spread of the
application's simulated time that the calibration leaves) and at the settings of SimGrid's
piecewise-fit procedure, and writes ``replay.json`` into the results folder.

Usage (from this folder; needs smpirun)::

    python replay.py stampede --results ../../results/simgrid-stampede \\
        [--trace ../../../shared/data/traces/ti_minife_16r] [--draws 20]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import piecewise_fit as pf  # noqa: E402
import smpi_pingpong as sp  # noqa: E402

REPLAYER = "/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain"
DEFAULT_TRACE = HERE.parents[2] / "shared" / "data" / "traces" / "ti_minife_16r"


def cluster_xml(settings: sp.SmpiSettings, n_hosts: int, speed: str) -> str:
    """A cluster of ``n_hosts`` whose host-to-host path has the calibrated link."""
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        f'  <cluster id="c" prefix="node-" suffix="" radical="0-{n_hosts - 1}" speed="{speed}" '
        f'bw="{float(settings.bw_Bps)!r}Bps" lat="{float(settings.lat_s) / 2.0!r}s" '
        'bb_bw="1e12Bps" bb_lat="0s"/>\n'
        "</platform>\n"
    )


def stage_trace(trace_dir: Path, work: Path) -> tuple[str, int]:
    """Copy the SimGrid-replayable index and rank files into ``work`` (gunzipped)."""
    index = next(trace_dir.glob("*_replayable.txt"), None) or next(
        p for p in trace_dir.glob("*.txt") if p.name != "README.md"
    )
    lines = index.read_text().split()
    for line in lines:
        src, dst = trace_dir / line, work / line
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.exists():
            shutil.copyfile(src, dst)
        else:
            with gzip.open(src.with_name(src.name + ".gz"), "rb") as fi, dst.open("wb") as fo:
                shutil.copyfileobj(fi, fo)
    shutil.copyfile(index, work / index.name)
    return index.name, len(lines)


def replay_time(settings: sp.SmpiSettings, trace_dir: Path, speed: str) -> float:
    """Simulated time of one replay, seconds."""
    smpirun = shutil.which("smpirun")
    if smpirun is None:
        raise RuntimeError("smpirun not found: install SimGrid (Debian: libsimgrid-dev)")
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        work = Path(tmp)
        index, n = stage_trace(trace_dir, work)
        (work / "platform.xml").write_text(cluster_xml(settings, n, speed))
        (work / "hostfile").write_text("".join(f"node-{i}\n" for i in range(n)))
        cfg = [c for c in settings.cfg() if "simulate-computation" not in c]
        cmd = [
            smpirun, "-np", str(n), "-platform", "platform.xml", "-hostfile", "hostfile",
            "--log=root.thres:critical", "--log=smpi.thres:info", *cfg,
            "-replay", index, REPLAYER,
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, cwd=work, capture_output=True, text=True, timeout=1800, check=False
        )
    if proc.returncode != 0:
        raise RuntimeError(f"smpirun -replay failed ({proc.returncode}): {proc.stderr[-1500:]}")
    found = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Simulation time" in ln]
    if not found:
        raise RuntimeError(f"no 'Simulation time' in the replay output: {proc.stderr[-800:]}")
    return float(found[-1].split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("machine", choices=sorted(sp.MACHINES))
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--speed", default="1Gf", help="host speed (the traces' acquisition speed)")
    args = ap.parse_args()

    import arviz as az

    from mpiuq.calibration.config import load_campaign

    machine = sp.MACHINES[args.machine]
    campaign = load_campaign(HERE / f"{args.machine}.toml")
    names = campaign.parameters.names
    post = az.from_netcdf(args.results / "posterior.nc").posterior
    draws = np.column_stack([post[n].values.ravel() for n in names])
    pick = np.linspace(0, draws.shape[0] - 1, min(args.draws, draws.shape[0])).round().astype(int)
    settings = [
        sp.settings_from_parameters(dict(zip(names, draws[i], strict=True)), machine) for i in pick
    ]
    data_dir = campaign.datasets[0].path.parent
    published = pf.fit(args.machine, machine, data_dir).settings
    from validate import smpi_3_32_fit

    adapted = smpi_3_32_fit(args.machine, machine, data_dir)
    # SimGrid's defaults on the same link as the posterior median, for scale
    median = dict(zip(names, np.median(draws, axis=0), strict=True))
    flat = sp.settings_from_parameters(
        {k: v for k, v in median.items() if k in ("bw_GBps", "link_ns_per_kB", "lat_us")}, machine
    )
    flat = replace(flat, async_bytes=machine.async_bytes, detached_bytes=machine.detached_bytes)
    runs = [*settings, published, adapted, flat]
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(args.workers) as pool:
        times = list(
            pool.map(replay_time, runs, [args.trace] * len(runs), [args.speed] * len(runs))
        )
    wall = time.perf_counter() - t0
    post_t = np.array(times[: len(settings)])
    doc = {
        "machine": args.machine,
        "trace": args.trace.name,
        "replays": len(runs),
        "wall_s": round(wall, 1),
        "posterior_draws": len(settings),
        "posterior_time_s": {
            "median": float(np.median(post_t)),
            "q05": float(np.quantile(post_t, 0.05)),
            "q95": float(np.quantile(post_t, 0.95)),
            "min": float(post_t.min()),
            "max": float(post_t.max()),
        },
        "piecewise_published_time_s": times[-3],
        "piecewise_smpi332_time_s": times[-2],
        "link_only_time_s": times[-1],
    }
    (args.results / "replay.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
