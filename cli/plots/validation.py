"""``validation.png``: the posterior predictive band against data the fit did not see.

One pair of panels per scored group (held-out series, held-out sizes, unselected sizes of
a fitted series), drawn from the ``validation`` section of ``summary.json`` so that a
campaign's figure and a leave-one-series-out figure are the same drawing: the 90%
predictive band and its median over log message size with the data (green inside, red
outside), the fitted sizes of the same series with their in-sample bands (black); below,
everything relative to the predictive median.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from mpiuq.surrogate.store.atomic_write import save_figure_atomically

#: In-sample rows of one series: sizes, data, 5% and 95% of the in-sample predictive.
InSampleRows = Mapping[
    str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]
]


def in_sample_rows(predictive_sizes: Sequence[Mapping[str, Any]]) -> InSampleRows:
    """Per series, the fitted sizes' data and bands from ``summary["predictive"]["sizes"]``."""
    out: dict[str, tuple[list[float], list[float], list[float], list[float]]] = {}
    for row in predictive_sizes:
        s, d, lo, hi = out.setdefault(str(row["data_set"]), ([], [], [], []))
        s.append(float(row["size_bytes"]))
        d.append(float(row["data_mean"]))
        lo.append(float(row["post_q05"]))
        hi.append(float(row["post_q95"]))
    return out


def plot_validation(
    groups: Sequence[Mapping[str, Any]], in_sample: InSampleRows, path: Path, title: str
) -> Path:
    """Draw the groups (``summary["validation"]["groups"]`` entries) into ``path``."""
    n = max(len(groups), 1)
    fig, axes = plt.subplots(
        2 * n,
        1,
        figsize=(9, 6.0 * n),
        squeeze=False,
        gridspec_kw={"height_ratios": [2, 1.2] * n},
    )
    for k, g in enumerate(groups):
        _panel(g, in_sample.get(str(g["series"])), axes[2 * k][0], axes[2 * k + 1][0], title)
    if not groups:
        axes[0][0].text(0.5, 0.5, "nothing scored", ha="center")
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=100)
    plt.close(fig)
    return path


def _panel(
    g: Mapping[str, Any],
    fitted: tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]] | None,
    ax: Axes,
    axr: Axes,
    title: str,
) -> None:
    cols = g["sizes"]
    order = np.argsort(np.asarray(cols["size_bytes"], dtype=np.float64))
    size = np.asarray(cols["size_bytes"], dtype=np.float64)[order]
    data = np.asarray(cols["data"], dtype=np.float64)[order]
    lo = np.asarray(cols["q05"], dtype=np.float64)[order]
    med = np.asarray(cols["median"], dtype=np.float64)[order]
    hi = np.asarray(cols["q95"], dtype=np.float64)[order]
    inside = np.asarray(cols["inside_90"], dtype=bool)[order]
    ax.fill_between(size, lo, hi, color="tab:blue", alpha=0.25, label="90% posterior predictive")
    ax.plot(size, med, "-", color="tab:blue", lw=1, label="predictive median")
    ax.plot(size[inside], data[inside], "o", color="tab:green", ms=2.5, label="data inside")
    ax.plot(size[~inside], data[~inside], "o", color="tab:red", ms=2.5, label="data outside")
    axr.fill_between(size, 100 * (lo / med - 1), 100 * (hi / med - 1), color="tab:blue", alpha=0.25)
    axr.plot(size, 100 * (data / med - 1), ".", color="k", ms=2)
    if fitted is not None and fitted[0]:
        fs, fd, flo, fhi = (np.asarray(a, dtype=np.float64) for a in fitted)
        ax.errorbar(
            fs,
            fd,
            yerr=[np.maximum(fd - flo, 0), np.maximum(fhi - fd, 0)],
            fmt="D",
            color="k",
            ms=3,
            capsize=2,
            label="fitted sizes (in-sample band)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel(f"{g['observable']} ({g['model']})")
    verdict = "passed" if g["passed"] else "FAILED"
    ax.set_title(
        f"{title} / {g['kind']} {g['name']}: {g['n_inside_90']}/{g['n_sizes']} inside "
        f"(>= {g['threshold']}: {verdict}), median error {100 * g['median_relative_error']:.1f}%",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    axr.set_xscale("log")
    axr.set_xlim(ax.get_xlim())
    axr.axhline(0.0, color="k", lw=0.8)
    axr.set_ylabel("relative to the\npredictive median (%)")
    axr.set_xlabel("message size (B, log scale)")
    axr.grid(True, which="major", alpha=0.3)
