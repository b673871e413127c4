"""Markdown tables of the transfer checks (``transfer_check.py``'s JSON files).

Three tables, in-sample and out-of-sample apart: the held-out series of every fold
(leave one series out, and any extra fold such as osu_bw predicted from osu_latency
alone), the same-benchmark sizes not fitted in the fold that fits every series, and the
fitted sizes of that fold (in-sample). Each row: sizes inside the 90% posterior
predictive band, the median relative error of the predictive median, the Done-when
threshold and whether it is met, and the posterior's reliability (importance k-hat or
R-hat).

Usage::

    python experiments/checks/transfer_table.py results/validation/transfer_*.json \\
        > results/validation/transfer.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    held, unfitted, insample = [], [], []
    for name in sys.argv[1:]:
        report = json.loads(Path(name).read_text())
        for fold in report["folds"]:
            rel = f"{fold['method']} {fold['khat_or_rhat']:.2f}"
            for s in fold["scores"]:
                frac = f"{s['inside']}/{s['sizes']} ({100 * s['inside_fraction']:.0f}%)"
                err = f"{100 * s['median_rel_error']:.1f}%"
                row = (report["campaign"], fold["fold"], s["series"], frac, err, rel)
                if s["kind"] == "held-out series":
                    held.append((*row, "yes" if s["pass"] else "no"))
                elif s["kind"].startswith("same benchmark") and fold["fold"].startswith("all"):
                    unfitted.append((*row, "yes" if s["pass"] else "no"))
                elif fold["fold"].startswith("all"):
                    insample.append(row)
    out = ["## Held-out series (out of sample): >= 80% inside and median error <= 15%", ""]
    out += [
        "| data set | fold | series | inside 90% band | median rel. error | posterior (k-hat / R-hat) | met |"
    ]
    out += ["|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in held]
    out += ["", "## Same benchmark, sizes not fitted (out of sample): >= 90% inside", ""]
    out += [
        "| data set | fold | series | inside 90% band | median rel. error | posterior (k-hat / R-hat) | met |"
    ]
    out += ["|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in unfitted]
    out += ["", "## Fitted sizes (in sample)", ""]
    out += [
        "| data set | fold | series | inside 90% band | median rel. error | posterior (k-hat / R-hat) |"
    ]
    out += ["|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in insample]
    print("\n".join(out))


if __name__ == "__main__":
    main()
