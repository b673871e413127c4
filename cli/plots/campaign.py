"""Figures of a calibration campaign (matplotlib Agg, PNG), written by the CLI layer only.

``sensitivity.png`` (Fig. 5: total Sobol indices, outputs x parameters),
``predictive.png`` (Fig. 6: simulator-computed posterior predictive against the data, over
log message size with the protocol boundaries, one pair of panels per data set; the variant
without discrepancy too),
``marginals.png`` (Fig. 7: final and grouped marginal posteriors, zoomed on the posterior),
``pairs.png`` (pair plot of the final posterior with 50%/90% contours and the identified
combinations' level sets), ``discrepancy.png`` (the discrepancy terms' posterior), and
``validation.png`` with a ``[validation]`` table (:mod:`mpiuq.plots.validation`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from mpiuq.calibration.checking.validation_result import ValidationResult
from mpiuq.calibration.reporting.campaign_result import CampaignResult
from mpiuq.simulator.parameters import UNITS
from mpiuq.surrogate.store.atomic_write import save_figure_atomically


def write_figures(result: CampaignResult, out: Path) -> list[Path]:
    """Write every figure into ``out``; returns the paths written."""
    for old in out.glob("pairs_group*.png"):  # figures of an older layout
        old.unlink()
    paths = [
        _sensitivity(result, out / "sensitivity.png"),
        _predictive(result, out / "predictive.png"),
        _marginals(result, out / "marginals.png"),
        _pairs(result, out / "pairs.png"),
    ]
    if result.main.problem.discrepancy.enabled:
        paths.append(_discrepancy(result, out / "discrepancy.png"))
    if result.validation is not None:
        paths.append(_validation(result, result.validation, out / "validation.png"))
    return paths


def _validation(r: CampaignResult, v: ValidationResult, path: Path) -> Path:
    """Held-out and unselected data against the predictive (:mod:`mpiuq.plots.validation`)."""
    from mpiuq.calibration.checking.validation_report import validation_dict
    from mpiuq.plots.validation import plot_validation

    obs, pred = r.observations, r.main.predictive
    fitted = {
        label: (
            obs.sizes_bytes[idx].tolist(),
            obs.mean[idx].tolist(),
            pred.post_lo[idx].tolist(),
            pred.post_hi[idx].tolist(),
        )
        for k, label in enumerate(obs.labels)
        for idx in (obs.outputs_of(k),)
    }
    return plot_validation(validation_dict(v)["groups"], fitted, path, r.campaign.name)


def _sensitivity(r: CampaignResult, path: Path) -> Path:
    s = r.sobol_total
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * s.shape[1], 1.0 + 0.32 * s.shape[0]))
    im = ax.imshow(s, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(s.shape[1]), r.problem.model_names, rotation=40, ha="right", fontsize=8)
    obs = r.observations
    sim = r.campaign.simulator
    prefix = [f"{obs.labels[d]}: " if len(obs.labels) > 1 else "" for d in obs.dataset]
    labels = [
        f"{p}{int(b)} B ({sim.regime_of(int(b))})"
        for p, b in zip(prefix, obs.sizes_bytes, strict=True)
    ]
    ax.set_yticks(range(s.shape[0]), labels, fontsize=7)
    for i in range(s.shape[0]):
        for j in range(s.shape[1]):
            ax.text(
                j,
                i,
                f"{s[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=6,
                color="w" if s[i, j] < 0.6 else "k",
            )
    fig.colorbar(im, ax=ax, label="total Sobol index")
    ax.set_title(f"{r.campaign.name}: sensitivity of each output")
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=110)
    plt.close(fig)
    return path


def _predictive(r: CampaignResult, path: Path) -> Path:
    obs = r.observations
    n_sets = len(obs.labels)
    fig, axes = plt.subplots(
        2 * n_sets,
        1,
        figsize=(9, 7.5 * n_sets),
        squeeze=False,
        gridspec_kw={"height_ratios": [2, 1.3] * n_sets},
    )
    for k in range(n_sets):
        _predictive_panel(r, k, axes[2 * k][0], axes[2 * k + 1][0])
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=110)
    plt.close(fig)
    return path


def _predictive_panel(r: CampaignResult, k: int, ax: Axes, axr: Axes) -> None:
    """Data set ``k``: posterior predictive bands and data (top), standardised misfit (bottom)."""
    obs = r.observations
    idx = obs.outputs_of(k)
    sizes = obs.sizes_bytes[idx].astype(float)
    mean, sd = obs.mean[idx], obs.sd[idx]
    spec = r.campaign.datasets[k]
    variants = [r.main, *r.alternatives]
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for v, colour in zip(variants, colours, strict=False):
        pred = v.predictive
        ax.fill_between(
            sizes,
            pred.post_lo[idx],
            pred.post_hi[idx],
            color=colour,
            alpha=0.3 if v is r.main else 0.15,
            label=f"90% posterior predictive, simulator ({v.name})",
        )
        ax.plot(sizes, pred.model_median[idx], "-", color=colour, lw=1)
    ax.errorbar(
        sizes,
        mean,
        yerr=sd,
        fmt="o",
        color="k",
        ms=3,
        capsize=2,
        label=f"data {spec.summary} +- replica spread ({spec.likelihood} likelihood)",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel(f"{obs.observables[k]} ({spec.model})")
    ax.set_title(
        f"{r.campaign.name} / {spec.label}: posterior predictive computed by the simulator",
        fontsize=10,
    )
    sim = r.campaign.simulator
    thresholds = sim.thresholds()
    names = (
        [sim.regime_of(int(b)) for b in thresholds] + [sim.regime_of(int(thresholds[-1]) + 1)]
        if thresholds
        else []
    )
    for axis in (ax, axr):
        for b in thresholds:
            axis.axvline(b, color="0.4", ls=":", lw=1)
        axis.grid(True, which="major", alpha=0.3)
    ymin = ax.get_ylim()[0]
    for i, b in enumerate(thresholds):
        ax.text(
            b,
            ymin,
            f" {names[i]} | {names[i + 1]}",
            fontsize=7,
            rotation=90,
            va="bottom",
        )
    ax.legend(fontsize=7, loc="upper left")
    for j, (v, colour) in enumerate(zip(variants, colours, strict=False)):
        pred = v.predictive
        z = (pred.model_median[idx] - mean) / sd
        lo = (pred.post_lo[idx] - mean) / sd
        hi = (pred.post_hi[idx] - mean) / sd
        shift = 1.0 + 0.06 * (j - 0.5 * (len(variants) - 1))
        inside = int(pred.inside[idx].sum())
        axr.errorbar(
            sizes * shift,
            z,
            yerr=[z - lo, hi - z],
            fmt="s",
            ms=3,
            color=colour,
            capsize=2,
            label=f"{v.name}: {inside}/{idx.size} inside",
        )
    axr.set_xscale("log")
    axr.set_xlim(ax.get_xlim())
    axr.axhline(0.0, color="k", lw=0.8)
    axr.axhspan(-1, 1, color="0.9")
    axr.set_ylabel("(model - data) / data sd\nbars: 90% predictive")
    axr.set_xlabel("message size (B, log scale)")
    axr.legend(fontsize=7)


def _zoom(x: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    a, b = np.quantile(x, [0.002, 0.998])
    pad = 0.15 * max(b - a, 1e-9 * (hi - lo))
    return max(lo, a - pad), min(hi, b + pad)


def _marginals(r: CampaignResult, path: Path) -> Path:
    names = r.main.problem.names
    n = len(names)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    draws = r.main.exact.draws
    grouped = r.posterior.draws.reshape(-1, n)
    est = r.estimates
    for j, name in enumerate(names):
        ax = axes[j // cols][j % cols]
        lo, hi = r.main.problem.lower[j], r.main.problem.upper[j]
        a, b = _zoom(np.concatenate([draws[:, j], grouped[:, j]]), lo, hi)
        bins = np.linspace(a, b, 41)
        ax.hist(
            draws[:, j], bins=bins, density=True, color="tab:blue", alpha=0.6, label="posterior"
        )
        ax.hist(
            grouped[:, j],
            bins=bins,
            density=True,
            histtype="step",
            color="k",
            label="grouped (surrogate)",
        )
        ax.axhline(1.0 / (hi - lo), color="0.5", ls="--", label="prior density")
        h = est.marginals[j].hdi90
        ax.axvspan(h[0], h[1], color="tab:blue", alpha=0.08)
        ax.axvline(est.median[j], color="tab:blue", lw=1, label="median")
        if est.map is not None:
            ax.axvline(est.map[j], color="tab:red", lw=1, label="MAP")
        ax.set_xlim(a, b)
        ax.set_xlabel(f"{name} ({UNITS.get(name, 'relative')})", fontsize=8)
        ax.set_yticks([])
        info = est.identifiability.parameters[j]
        ax.set_title(
            f"{info.label}: sd ratio {info.sd_ratio:.2f}, prior [{lo:.3g}, {hi:.3g}]", fontsize=7
        )
        ax.tick_params(labelsize=7)
        if j == 0:
            ax.legend(fontsize=6)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(f"{r.campaign.name}: marginal posteriors (zoomed; shaded: 90% HDI)")
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=110)
    plt.close(fig)
    return path


def _contours(
    ax: Axes, x: np.ndarray, y: np.ndarray, xr: tuple[float, float], yr: tuple[float, float]
) -> None:
    """Filled 2-D histogram with contours enclosing 50% and 90% of the draws."""
    from scipy.ndimage import gaussian_filter

    h, xe, ye = np.histogram2d(x, y, bins=30, range=[xr, yr])
    h = gaussian_filter(h, 1.0)
    flat = np.sort(h.ravel())[::-1]
    cum = np.cumsum(flat) / max(float(flat.sum()), 1.0)
    at = [min(int(np.searchsorted(cum, q)), flat.size - 1) for q in (0.9, 0.5)]
    levels = sorted({float(flat[k]) for k in at})
    xc, yc = (xe[:-1] + xe[1:]) / 2, (ye[:-1] + ye[1:]) / 2
    ax.plot(x, y, ".", ms=0.6, alpha=0.15, color="tab:blue")
    if len(levels) >= 1 and h.max() > 0:
        ax.contour(
            xc,
            yc,
            h.T,
            levels=[lv for lv in levels if lv > 0] or [h.max() / 2],
            colors="k",
            linewidths=0.7,
        )


def _pairs(r: CampaignResult, path: Path) -> Path:
    p = r.main.problem
    k = p.n_model
    names = list(p.names[:k])
    ranges = [_zoom(r.main.exact.draws[:, a], p.lower[a], p.upper[a]) for a in range(k)]
    combos = [
        c for c in r.estimates.identifiability.identified_combinations if c.kind in ("min", "max")
    ]
    return pair_plot(
        r.main.exact.draws[:, :k],
        names,
        ranges,
        [(c.kind, c.first, c.second, c.median, c.hdi90) for c in combos],
        f"{r.campaign.name}: posterior pairs (contours: 50%/90% of the draws)",
        path,
    )


#: Width (inches) of a pair plot: a portrait page's text width, wider (up to a landscape
#: page's, about 10 in for 11 panels) only when the panels would be too narrow for their
#: names. The figure is laid out at its print size: its fonts are points on paper.
PAIRS_PRINT_WIDTH_IN = 7.0
#: Width of a pair plot's PNG in pixels (about 210 dpi at 7 in).
PAIRS_WIDTH_PX = 1500


def pair_fonts(k: int) -> dict[str, float]:
    """Font sizes (points at print size) of a pair plot of ``k`` parameters: 9 pt names
    for 3 panels or fewer, 7.5 pt for 7, 6.5 pt from 10 panels on (tick labels 0.5 pt
    smaller, the title 2.5 pt larger)."""
    labels = min(9.0, max(6.5, 10.0 - 0.35 * k))
    return {"ticks": labels - 0.5, "labels": labels, "title": labels + 2.5}


def _marginal_panel(
    ax: Axes,
    x: np.ndarray,
    name: str,
    value_range: tuple[float, float],
    fonts: dict[str, float],
    *,
    last: bool,
) -> None:
    """A pair plot's diagonal panel: the histogram of one parameter's draws ``x``, its
    median (solid) and 90% HDI (dashed), titled with them and the parameter's unit
    (right-aligned for the ``last`` panel, left-aligned otherwise)."""
    from mpiuq.calibration.reporting.summaries import hdi

    ax.hist(x, bins=40, range=value_range, color="tab:blue", alpha=0.7)
    med, (lo, hi) = float(np.median(x)), hdi(x)
    ax.axvline(med, color="k", lw=1.0)
    for edge in (lo, hi):
        ax.axvline(edge, color="k", lw=0.8, ls="--")
    ax.set_title(
        f"{name}\n{med:.3g} [{lo:.3g}, {hi:.3g}] {UNITS.get(name, '')}",
        fontsize=fonts["labels"],
        loc="right" if last else "left",
    )
    ax.set_yticks([])


def pair_plot(
    draws: np.ndarray,
    names: list[str],
    ranges: list[tuple[float, float]],
    combinations: list[tuple[str, str, str, float, tuple[float, float]]],
    title: str,
    path: Path,
) -> Path:
    """Corner plot of posterior draws, readable when printed at a page's width.

    Diagonal: each parameter's histogram, titled with its name, unit, median and 90%
    HDI (lines). Lower triangle: draws with contours enclosing 50% and 90% of them; the
    level sets of identified ``min``/``max`` combinations in red. Tick labels only on
    the outer panels. Laid out at its print size (:data:`PAIRS_PRINT_WIDTH_IN`, wider
    only when the panels would be too narrow for their names) with the fonts of
    :func:`pair_fonts` (smaller for more panels), :data:`PAIRS_WIDTH_PX` pixels wide.

    Parameters
    ----------
    draws
        Posterior draws, shape (n_draws, k).
    names
        Parameter names (k).
    ranges
        Axis range per parameter (k pairs).
    combinations
        ``(kind, first, second, median, (hdi_lo, hdi_hi))`` of identified ``min``/``max``
        combinations of two of the parameters.
    title, path
        Figure title; PNG file to write.
    """
    from matplotlib.ticker import MaxNLocator

    k = len(names)
    pt = pair_fonts(k)
    scale = pt["labels"] / 7.0
    # a panel holds a two-line name (about 11 characters a line) under it
    panel_in = 11 * 0.6 * pt["labels"] / 72 + 0.1
    margin_in = 0.85 * scale  # room for the tick labels and names of the outer panels
    width_in = max(PAIRS_PRINT_WIDTH_IN, 1.12 * k * panel_in + margin_in + 0.15)
    fig, axes = plt.subplots(k, k, figsize=(width_in, width_in), squeeze=False)
    fig.subplots_adjust(
        left=margin_in / width_in,
        bottom=margin_in / width_in,
        right=1.0 - 0.15 / width_in,
        top=1.0 - 0.55 * scale / width_in,
        wspace=0.12,
        hspace=0.62,
    )
    for a in range(k):
        for b in range(k):
            ax = axes[a][b]
            if b > a:
                ax.axis("off")
                continue
            if a == b:  # the last has nothing to its right: its title extends to the left
                _marginal_panel(ax, draws[:, a], names[a], ranges[a], pt, last=a == k - 1)
            else:
                _contours(ax, draws[:, b], draws[:, a], ranges[b], ranges[a])
                for kind, first, second, level, (c_lo, c_hi) in combinations:
                    if {first, second} == {names[a], names[b]}:
                        for value, style in ((level, "-"), (c_lo, "--"), (c_hi, "--")):
                            _combination_level(ax, kind, value, ranges[b], ranges[a], style)
                ax.set_ylim(ranges[a])
            ax.set_xlim(ranges[b])
            ax.xaxis.set_major_locator(MaxNLocator(3))
            ax.yaxis.set_major_locator(MaxNLocator(3))
            ax.tick_params(
                labelsize=pt["ticks"],
                labelbottom=a == k - 1,
                labelleft=b == 0 and a > 0,
                length=2.5 * scale,
            )
            if a == k - 1:
                ax.set_xlabel(_two_lines(names[b]), fontsize=pt["labels"])
                plt.setp(ax.get_xticklabels(), rotation=35, ha="right")
            if b == 0 and a > 0:
                ax.set_ylabel(_two_lines(names[a]), fontsize=pt["labels"])
    notes = ["diagonal: each parameter's median", "(solid) and 90% HDI (dashed)"]
    for kind, first, second, *_ in combinations:
        notes += [f"red: {kind}({first},", f"{second}) at its median and HDI"]
    fig.text(
        1.0 - 0.2 / width_in,
        1.0 - 0.75 * scale / width_in,
        "\n".join(notes),
        ha="right",
        va="top",
        fontsize=pt["labels"],
    )
    fig.suptitle(title, fontsize=pt["title"])
    save_figure_atomically(fig, path, dpi=PAIRS_WIDTH_PX / width_in)
    plt.close(fig)
    return path


def _two_lines(name: str) -> str:
    """``name`` broken at the underscore nearest its middle (axis labels of narrow panels)."""
    cuts = [i for i, ch in enumerate(name) if ch == "_"]
    if len(name) <= 12 or not cuts:
        return name
    cut = min(cuts, key=lambda i: abs(i - len(name) / 2))
    return f"{name[: cut + 1]}\n{name[cut + 1 :]}"


def _combination_level(
    ax: Axes,
    kind: str,
    level: float,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    style: str,
) -> None:
    """The level set ``min(x, y) = level`` (an L opening up-right) or ``max(x, y) = level``."""
    if kind == "min":
        xs, ys = [level, level, x_range[1]], [y_range[1], level, level]
    else:
        xs, ys = [level, level, x_range[0]], [y_range[0], level, level]
    ax.plot(xs, ys, style, color="tab:red", lw=1)


def _discrepancy(r: CampaignResult, path: Path) -> Path:
    p = r.main.problem
    nm = p.n_model
    names = p.names[nm : nm + p.discrepancy.dim]
    draws = r.main.exact.draws[:, nm : nm + p.discrepancy.dim]
    fig, axes = plt.subplots(1, len(names), figsize=(3.0 * len(names), 2.6), squeeze=False)
    for k, name in enumerate(names):
        ax = axes[0][k]
        ax.hist(
            draws[:, k],
            bins=40,
            range=(p.lower[nm + k], p.upper[nm + k]),
            density=True,
            color="tab:purple",
            alpha=0.7,
        )
        med = float(np.median(draws[:, k]))
        ax.axvline(med, color="k", lw=1)
        ax.set_xlabel(name, fontsize=8)
        ax.set_yticks([])
        ax.set_title(f"median {med:.3g} (relative)", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(
        f"{r.campaign.name}: model discrepancy per protocol regime (posterior over the prior)",
        fontsize=9,
    )
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=110)
    plt.close(fig)
    return path
