"""Do two calibration runs give the same replay conclusions? Compare two ``replay.json``.

Both files come from ``mpiuq replay TRACE --params results/<run> --out DIR`` over
posterior draws of two calibration runs (e.g. results/stampede-ib and
results/stampede-ib-seed2, the same campaign with seeds 1 and 2). For every model,
the simulated time and every part of the decomposition (and its share), it prints both
90% HDIs and whether they overlap, and ends with the count of non-overlapping ones.

Usage::

    python experiments/replay/compare_calibrations.py A/replay.json B/replay.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"model quantity": summary}`` of a replay.json of draws."""
    out = {}
    for model, m in data["models"].items():
        out[f"{model} simulated_time_s"] = m["simulated_time_s"]
        for key, s in m["decomposition"].items():
            out[f"{model} {key}"] = s
        for key, s in m["share"].items():
            out[f"{model} share {key}"] = s
    return out


def main() -> None:
    a_path, b_path = (Path(p) for p in sys.argv[1:3])
    a, b = rows(json.loads(a_path.read_text())), rows(json.loads(b_path.read_text()))
    print(f"A = {a_path}\nB = {b_path}")
    print(f"{'quantity':<34}{'A mean [90% HDI]':>36}{'B mean [90% HDI]':>36}  overlap")
    apart = 0
    for key in a:
        sa, sb = a[key], b[key]
        (la, ha), (lb, hb) = sa["hdi90"], sb["hdi90"]
        overlap = la <= hb and lb <= ha
        apart += not overlap
        print(
            f"{key:<34}{sa['mean']:>12.5g} [{la:.5g}, {ha:.5g}]".ljust(70)
            + f"{sb['mean']:>12.5g} [{lb:.5g}, {hb:.5g}]".ljust(36)
            + f"  {'yes' if overlap else 'NO'}"
        )
    print(f"{apart} of {len(a)} intervals do not overlap")


if __name__ == "__main__":
    main()
