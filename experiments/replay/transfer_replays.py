"""The README's replay and what-if table under two calibrations: ping-pong only and joint.

For the traces of the README's worked example (``ti_lulesh_512r`` with compute x 0.1,
``ti_nekbone_64r``, ``otf2_tracer_stencil4d_64r``; analytic model, two hops), this runs
``mpiuq replay`` and ``mpiuq whatif`` at one posterior point of each calibration and
writes the shares of the rank-summed time (network, MPI stack, synchronisation) and the
speed-ups of "net 2x" and "stack / 2":

* ping-pong only: the posterior median of a campaign result folder fitted to the
  ping-pong alone (``--pingpong``, e.g. the committed ``results/stampede-ib`` before the
  joint campaign replaced it: ``git worktree`` or ``git show`` an older revision);
* joint: the posterior median of the four-series fit of
  ``experiments/checks/transfer_check.py`` (``--joint``), through
  ``experiments/replay/point_params.py``.

"stack / 2" halves every software cost of the MPI stack either calibration has: the
global post, get-post and registration delays and, per regime, the receive overhead, the
unexpected-message cost and the send completion (all 0 in the ping-pong-only
calibration, whose stack is the three global delays). Copies are not halved in either.

Usage (from the repository root; ../shared/data must exist)::

    python experiments/replay/transfer_replays.py --pingpong results/stampede-ib \\
        --joint results/validation/transfer_stampede-ib.json --out results/transfer
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from point_params import point_options

TRACES = Path("../shared/data/traces")
CASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ti_lulesh_512r", ("--compute-scale", "0.1")),
    ("ti_nekbone_64r", ()),
    ("otf2_tracer_stencil4d_64r", ()),
)
NET = "net2x: link_bw_GBps*=2, injection_bw_GBps*=2"


def stack_half(n_regimes: int) -> str:
    """The "stack / 2" scenario over every software cost of ``n_regimes`` regimes."""
    items = ["post_header_delay_us*=0.5", "post_rdma_delay_us*=0.5", "rdma_pin_latency_us*=0.5"]
    for k in range(n_regimes):
        for cost in ("send_overhead_us", "recv_overhead_us", "unexpected_us", "send_complete_us"):
            items.append(f"regime{k}_{cost}*=0.5")
    return "stack/2: " + ", ".join(items)


def run_json(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(["mpiuq", *args, "--json", "-q"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"mpiuq {' '.join(args[:2])} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def shares(replay: dict[str, Any]) -> dict[str, float]:
    d = replay["models"]["analytic"]["decomposition"]
    total = sum(d.values())
    return {k.removesuffix("_s"): v / total for k, v in d.items()}


def speedups(whatif: dict[str, Any]) -> dict[str, float]:
    return {name: float(sc["speedup"]["mean"]) for name, sc in whatif["scenarios"].items()}


def n_regimes(replay: dict[str, Any]) -> int:
    return sum(1 for k in replay["params"] if k.endswith("_protocol"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pingpong", type=Path, required=True, help="ping-pong-only result folder")
    ap.add_argument("--joint", type=Path, required=True, help="transfer_check JSON, joint fit")
    ap.add_argument("--campaign", type=Path, default=Path("experiments/stampede-ib-joint.toml"))
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    joint = point_options(a.campaign, a.joint)
    calibrations = {
        "ping-pong only": ["--params", str(a.pingpong), "--estimate", "median"],
        "joint": joint,
    }
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for trace, extra in CASES:
        for label, params in calibrations.items():
            path = str(TRACES / trace)
            rep = run_json(["replay", path, "--model", "analytic", *extra, *params])
            stack = stack_half(n_regimes(rep))
            wi = run_json(["whatif", path, *extra, *params, "--scenario", NET, "--scenario", stack])
            row = {"trace": trace, "calibration": label, "shares": shares(rep), **speedups(wi)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    (a.out / "transfer_replays.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = [
        "| trace | calibration | network | MPI stack | sync | net 2x speed-up | stack / 2 speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["shares"]
        lines.append(
            f"| {r['trace']} | {r['calibration']} | {100 * s['network']:.1f}% | "
            f"{100 * s['mpi_stack']:.1f}% | {100 * s['sync']:.1f}% | {r['net2x']:.4f} | "
            f"{r['stack/2']:.4f} |"
        )
    (a.out / "transfer_replays.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
