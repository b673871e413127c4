"""Figures of ``mpiuq replay``: the time decomposition per network model (cf. Fig. 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from mpiuq.simulator.replay.run import ReplayResult
from mpiuq.surrogate.store.atomic_write import save_figure_atomically

#: Category label and colour, in stacking order (bottom to top).
PARTS: tuple[tuple[str, str, str], ...] = (
    ("compute_s", "compute", "#4c72b0"),
    ("network_s", "network", "#dd8452"),
    ("mpi_stack_s", "MPI stack", "#55a868"),
    ("sync_s", "synchronisation", "#c44e52"),
)


def plot_decomposition(result: ReplayResult, path: Path, calibration: str = "") -> None:
    """Stacked bars of the rank-summed time per category, one bar per network model.

    Parameters
    ----------
    result
        Replay of one trace under several network models.
    path
        PNG file to write.
    calibration
        Which parameters were used (shown in the title).
    """
    names = [m.model for m in result.models]
    parts = [m.decomposition.as_dict() for m in result.models]
    fig, (ax, axs) = plt.subplots(1, 2, figsize=(10, 4.2))
    for axis, share in ((ax, False), (axs, True)):
        bottom = [0.0] * len(names)
        for key, label, colour in PARTS:
            values = []
            for d in parts:
                total = sum(d.values())
                v = d[key]
                values.append(v / total * 100 if share and total > 0 else v)
            axis.bar(names, values, bottom=bottom, label=label, color=colour, width=0.6)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        axis.set_ylabel("share of rank time (%)" if share else "time summed over ranks (s)")
    ax.set_title("time summed over ranks")
    axs.set_title("share")
    axs.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    name = Path(result.source).name or result.source
    times = ", ".join(f"{m.model} {m.simulated_time_s:.4g} s" for m in result.models)
    save_figure(
        fig,
        path,
        f"{name}: {result.n_ranks} ranks, compute scale {result.setup.compute_scale:g}; "
        f"simulated time {times}\n{calibration}",
    )


def save_figure(fig: Figure, path: Path, title: str) -> None:
    """Give ``fig`` its two-line title, lay it out, write it to ``path`` and close it."""
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=120)
    plt.close(fig)


def _errors(summaries: list[dict[str, Any]]) -> tuple[list[float], list[list[float]]]:
    """Means and ``[below, above]`` distances to the 90% HDI ends (matplotlib ``yerr``)."""
    means = [s["mean"] for s in summaries]
    below = [max(s["mean"] - s["hdi90"][0], 0.0) for s in summaries]
    above = [max(s["hdi90"][1] - s["mean"], 0.0) for s in summaries]
    return means, [below, above]


def plot_decomposition_draws(data: dict[str, Any], path: Path, calibration: str) -> None:
    """Parts of the rank-summed time per model, and the simulated run time, over draws.

    Bars are the posterior means, error bars the 90% HDIs (``replay.json`` of draws).

    Parameters
    ----------
    data
        The ``replay.json`` of a replay of posterior draws.
    path
        PNG file to write.
    calibration
        Which calibration's draws were replayed (shown in the title).
    """
    models = list(data["models"])
    fig, (ax, axt) = plt.subplots(
        1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [3, max(1, len(models))]}
    )
    width = 0.8 / len(models)
    for i, name in enumerate(models):
        parts = data["models"][name]["decomposition"]
        means, yerr = _errors([parts[key] for key, _l, _c in PARTS])
        xs = [k + (i - (len(models) - 1) / 2) * width for k in range(len(PARTS))]
        ax.bar(xs, means, width=width, label=name, yerr=yerr, capsize=3)
    ax.set_xticks(range(len(PARTS)), [label for _k, label, _c in PARTS])
    ax.set_ylabel("time summed over ranks (s)")
    ax.set_title("decomposition: posterior mean, 90% HDI")
    ax.legend(fontsize=8)
    means, yerr = _errors([data["models"][m]["simulated_time_s"] for m in models])
    axt.bar(models, means, yerr=yerr, capsize=4, color="#777777", width=0.6)
    for k, m in enumerate(models):
        s = data["models"][m]["simulated_time_s"]
        axt.annotate(
            f"{s['mean']:.4g} s\n[{s['hdi90'][0]:.4g}, {s['hdi90'][1]:.4g}]",
            (k, s["hdi90"][1]),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    axt.set_ylabel("simulated run time (s)")
    axt.set_title("simulated run time")
    axt.margins(y=0.25)
    t = data["trace"]
    name = Path(t["source"]).name or t["source"]
    save_figure(
        fig,
        path,
        f"{name}: {t['ranks']} ranks, compute scale {data['settings']['compute_scale']:g}\n"
        f"{calibration}",
    )
