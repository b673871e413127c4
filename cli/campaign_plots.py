"""Figures of a calibration campaign (matplotlib Agg, PNG), written by the CLI layer only.

``sensitivity.png`` (Fig. 5: total Sobol indices, outputs x parameters),
``predictive.png`` (Fig. 6: simulator-computed posterior predictive against the data, over
log message size with the protocol boundaries, one pair of panels per data set; the variant
without discrepancy too),
``marginals.png`` (Fig. 7: exact and grouped marginal posteriors, zoomed on the posterior),
``pairs.png`` (pair plot of the exact posterior with 50%/90% contours and the identified
combinations' level sets), and ``discrepancy.png`` (the discrepancy terms' posterior).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from mpiuq.calibration.campaign_result import CampaignResult
from mpiuq.simulator.parameters import UNITS


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
    return paths


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
    fig.savefig(path, dpi=110)
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
    fig.savefig(path, dpi=110)
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
        ax.hist(draws[:, j], bins=bins, density=True, color="tab:blue", alpha=0.6, label="exact")
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
    fig.savefig(path, dpi=110)
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
    cols = list(range(p.n_model))
    d = r.main.exact.draws[:, cols]
    k = len(cols)
    names = [p.names[j] for j in cols]
    ranges = [_zoom(d[:, a], p.lower[cols[a]], p.upper[cols[a]]) for a in range(k)]
    combos = r.estimates.identifiability.identified_combinations
    fig, axes = plt.subplots(k, k, figsize=(1.9 * k, 1.9 * k), squeeze=False)
    for a in range(k):
        for b in range(k):
            ax = axes[a][b]
            if a == b:
                ax.hist(d[:, a], bins=40, range=ranges[a], color="tab:blue", alpha=0.7)
                ax.set_xlim(ranges[a])
                ax.set_yticks([])
            elif a > b:
                _contours(ax, d[:, b], d[:, a], ranges[b], ranges[a])
                for cmb in combos:
                    if {cmb.first, cmb.second} == {names[a], names[b]} and cmb.kind in (
                        "min",
                        "max",
                    ):
                        for level, style in (
                            (cmb.median, "-"),
                            (cmb.hdi90[0], "--"),
                            (cmb.hdi90[1], "--"),
                        ):
                            lo_x, hi_x = ranges[b]
                            lo_y, hi_y = ranges[a]
                            if cmb.kind == "min":
                                ax.plot(
                                    [level, level, hi_x],
                                    [hi_y, level, level],
                                    style,
                                    color="tab:red",
                                    lw=1,
                                )
                            else:
                                ax.plot(
                                    [level, level, lo_x],
                                    [lo_y, level, level],
                                    style,
                                    color="tab:red",
                                    lw=1,
                                )
                        ax.set_title(
                            f"red: {cmb.expression.split('(')[0]} = median, 90% HDI", fontsize=5
                        )
                ax.set_xlim(ranges[b])
                ax.set_ylim(ranges[a])
            else:
                ax.axis("off")
            if a == k - 1:
                ax.set_xlabel(names[b], fontsize=6)
            if b == 0 and a > 0:
                ax.set_ylabel(names[a], fontsize=6)
            ax.tick_params(labelsize=5)
    fig.suptitle(
        f"{r.campaign.name}: exact posterior pairs (contours: 50%/90% of the draws)", fontsize=9
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


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
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
