"""Figures of ``mpiuq replay``: the time decomposition per network model (cf. Fig. 8)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from mpiuq.simulator.replay import ReplayResult

#: Category label and colour, in stacking order (bottom to top).
PARTS: tuple[tuple[str, str, str], ...] = (
    ("compute_s", "compute", "#4c72b0"),
    ("network_s", "network", "#dd8452"),
    ("mpi_stack_s", "MPI stack", "#55a868"),
    ("sync_s", "synchronisation", "#c44e52"),
)


def plot_decomposition(result: ReplayResult, path: Path) -> None:
    """Stacked bars of the rank-summed time per category, one bar per network model.

    Parameters
    ----------
    result
        Replay of one trace under several network models.
    path
        PNG file to write.
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
    fig.suptitle(f"{name}: {result.n_ranks} ranks, compute scale {result.setup.compute_scale:g}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
