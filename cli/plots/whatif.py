"""Figure of ``mpiuq whatif``: speed-up distributions and what moves, per scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from mpiuq.plots.replay import PARTS, save_figure


def plot_whatif(data: dict[str, Any], path: Path, calibration: str) -> None:
    """Speed-up over the draws per scenario (violins, 90% HDI, the 5% line) and the mean
    change of each part of the rank-summed time with its 90% HDI.

    Parameters
    ----------
    data
        The ``whatif.json`` of ``mpiuq whatif``.
    path
        PNG file to write.
    calibration
        Which calibration's draws were used (shown in the title).
    """
    names = list(data["scenarios"])
    fig, (ax, axc) = plt.subplots(1, 2, figsize=(11, 4.4))
    series = [data["scenarios"][n]["speedup"]["draws"] for n in names]
    pos = list(range(len(names)))
    if all(len(s) > 1 and max(s) > min(s) for s in series):
        ax.violinplot(series, positions=pos, showextrema=False)
    for k, n in enumerate(names):
        s = data["scenarios"][n]["speedup"]
        lo, hi = s["hdi90"]
        ax.errorbar(k, s["mean"], yerr=[[s["mean"] - lo], [hi - s["mean"]]], fmt="o", capsize=4)
        p = data["scenarios"][n]["probability"]["speedup>1.05"]
        ax.annotate(f"P(>5%)={p:.0%}", (k, hi), ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(1.05, color="grey", lw=0.8, ls="--")
    ax.set_xticks(pos, names)
    ax.set_ylabel("speed-up T_baseline / T_scenario")
    ax.set_title("speed-up over paired posterior draws (90% HDI)")
    width = 0.8 / len(PARTS)
    for i, (key, label, colour) in enumerate(PARTS):
        means, below, above = [], [], []
        for n in names:
            c = data["scenarios"][n]["change_s"][key]
            means.append(c["mean"])
            below.append(max(c["mean"] - c["hdi90"][0], 0.0))
            above.append(max(c["hdi90"][1] - c["mean"], 0.0))
        xs = [k + (i - (len(PARTS) - 1) / 2) * width for k in pos]
        axc.bar(xs, means, width=width, color=colour, label=label, yerr=[below, above], capsize=2)
    axc.axhline(0.0, color="grey", lw=0.8)
    axc.set_xticks(pos, names)
    axc.set_ylabel("change, scenario - baseline (s, summed over ranks)")
    axc.set_title("what moves")
    axc.legend(fontsize=7)
    t = data["trace"]
    base = data["baseline"]["simulated_time_s"]
    save_figure(
        fig,
        path,
        f"{Path(t['source']).name}: {t['ranks']} ranks, model {data['model']}, baseline "
        f"{base['mean']:.4g} s [{base['hdi90'][0]:.4g}, {base['hdi90'][1]:.4g}]\n{calibration}",
    )
