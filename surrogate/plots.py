"""Sensitivity heat map (edge module: only the CLI imports it; matplotlib, Agg canvas)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mpiuq.surrogate.store.atomic_write import save_figure_atomically


def save_sensitivity_heatmap(
    total: np.ndarray,
    output_names: Sequence[str],
    parameter_names: Sequence[str],
    path: str | os.PathLike[str],
    title: str = "Total Sobol indices",
) -> None:
    """Save an outputs x parameters heat map of total indices (cf. Fig. 5 of paper 004).

    Parameters
    ----------
    total : numpy.ndarray, shape (n_out, dim)
        Total Sobol indices in [0, 1].
    output_names, parameter_names : sequence of str
        Row and column labels.
    path : path-like
        Image file (format from the suffix, e.g. ``.png``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = np.asarray(total, dtype=float)
    n_out, dim = data.shape
    fig = Figure(figsize=(1.0 + 0.9 * dim, 1.2 + 0.35 * n_out), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(data, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    ax.set_xticks(range(dim), labels=list(parameter_names), rotation=45, ha="right")
    ax.set_yticks(range(n_out), labels=list(output_names))
    if n_out * dim <= 400:
        for i in range(n_out):
            for j in range(dim):
                ax.text(
                    j,
                    i,
                    f"{data[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if data[i, j] < 0.5 else "black",
                )
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="total index")
    save_figure_atomically(fig, Path(path), dpi=120)
