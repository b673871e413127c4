"""The posterior pair plot is readable at print size: labelled diagonals, fonts scaled to
the number of panels, no label running into another."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from mpiuq.plots import campaign as campaign_plots
from mpiuq.plots.campaign import PAIRS_PRINT_WIDTH_IN, PAIRS_WIDTH_PX, pair_fonts, pair_plot
from mpiuq.simulator.parameters import CONTINUOUS_PARAMETERS

#: The simulator's parameters, then longer names such as regime slots and other models'.
NAMES = [*CONTINUOUS_PARAMETERS, "eager_rdma_threshold_bytes", "regime1_copy_bw_GBps", "x_us"]


def test_fonts_shrink_with_the_panel_count_within_readable_bounds() -> None:
    sizes = [pair_fonts(k)["labels"] for k in range(1, 16)]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] == 9.0 and sizes[6] == pytest.approx(7.55) and sizes[-1] == 6.5


def _draw(k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path]:
    figures: list[Any] = []
    monkeypatch.setattr(campaign_plots.plt, "close", figures.append)
    rng = np.random.default_rng(k)
    draws = rng.normal(size=(2000, k)) * 0.1 + 1.0
    draws[:, 1] = np.minimum(draws[:, 0], draws[:, 1])
    ranges = [(0.5, 1.5)] * k
    path = tmp_path / f"pairs{k}.png"
    combo = [("min", NAMES[0], NAMES[1], 0.95, (0.85, 1.05))]
    pair_plot(draws, NAMES[:k], ranges, combo, "test: pairs", path)
    return figures[0], path


@pytest.mark.parametrize("k", [2, 7, 11])
def test_pairs_are_labelled_and_nothing_overlaps(
    k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fig, path = _draw(k, tmp_path, monkeypatch)
    assert Image.open(path).size[0] == pytest.approx(PAIRS_WIDTH_PX, abs=2)
    # laid out at print size: a portrait page's text width, a landscape one's at most
    assert PAIRS_PRINT_WIDTH_IN <= fig.get_figwidth() <= 10.0
    fonts = pair_fonts(k)
    axes = np.array(fig.axes).reshape(k, k)
    renderer = fig.canvas.get_renderer()
    for a in range(k):
        diagonal = axes[a][a]
        title = diagonal.get_title(loc="right" if a == k - 1 else "left")
        assert title.startswith(NAMES[a] + "\n") and "[" in title  # name, median [90% HDI]
    xlabels = [axes[k - 1][b].xaxis.label for b in range(k)]
    ylabels = [axes[a][0].yaxis.label for a in range(1, k)]
    ticks = [
        t
        for ax in fig.axes
        if ax.axison
        for t in ax.get_xticklabels() + ax.get_yticklabels()
        if t.get_text() and t.get_visible()
    ]
    for text in [*xlabels, *ylabels]:
        assert text.get_text() and text.get_fontsize() == fonts["labels"] >= 6.5
    assert {t.get_fontsize() for t in ticks} == {fonts["ticks"]} and fonts["ticks"] >= 6.0
    for group in (xlabels, ylabels):
        boxes = [t.get_window_extent(renderer) for t in group]
        for one, other in combinations(boxes, 2):
            assert not one.overlaps(other), "axis labels run into each other"
