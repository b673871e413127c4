"""Figures of a calibration campaign (matplotlib Agg, PNG), written by the CLI layer only.

``sensitivity.png`` (Fig. 5: total Sobol indices, outputs x parameters),
``predictive.png`` (Fig. 6: prior and posterior predictive bands against the data),
``marginals.png`` (Fig. 7: marginal posteriors over the prior), and
``pairs_group<k>.png`` (pair plot of each sensitivity group).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from mpiuq.calibration.campaign_result import CampaignResult
from mpiuq.simulator.parameters import UNITS


def write_figures(result: CampaignResult, out: Path) -> list[Path]:
    """Write every figure into ``out``; returns the paths written."""
    paths = [
        _sensitivity(result, out / "sensitivity.png"),
        _predictive(result, out / "predictive.png"),
        _marginals(result, out / "marginals.png"),
    ]
    for k, g in enumerate(result.posterior.groups):
        if len(g.parameters) >= 2:
            paths.append(_pairs(result, g.parameters, out / f"pairs_group{k}.png"))
    return paths


def _sensitivity(r: CampaignResult, path: Path) -> Path:
    s = r.sobol_total
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * s.shape[1], 1.0 + 0.32 * s.shape[0]))
    im = ax.imshow(s, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(s.shape[1]), r.problem.names, rotation=40, ha="right", fontsize=8)
    labels = [
        f"{int(b)} B ({r.campaign.simulator.base_params().protocol_of(int(b))})"
        for b in r.observations.sizes_bytes
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
    obs, pred = r.observations, r.predictive
    x = np.arange(obs.sizes_bytes.size)
    fig, (ax, axr) = plt.subplots(
        2, 1, figsize=(9, 7), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    ax.fill_between(x, pred.prior_lo, pred.prior_hi, color="0.85", label="prior predictive 90%")
    ax.fill_between(
        x,
        pred.post_lo,
        pred.post_hi,
        color="tab:blue",
        alpha=0.35,
        label="posterior predictive 90%",
    )
    ax.plot(x, pred.post_mean, "-", color="tab:blue", lw=1, label="posterior predictive mean")
    for i, rep in enumerate(obs.replicas):
        ax.plot(
            np.full(rep.size, x[i]) + np.linspace(-0.15, 0.15, rep.size),
            rep,
            ".",
            color="k",
            ms=1.5,
            alpha=0.4,
        )
    ax.errorbar(
        x, obs.mean, yerr=obs.sd, fmt="o", color="tab:red", ms=3, capsize=2, label="data mean +- sd"
    )
    ax.set_yscale("log")
    ax.set_ylabel(obs.observable)
    ax.legend(fontsize=8)
    ax.set_title(f"{r.campaign.name}: prior and posterior predictive")
    z = (pred.post_mean - obs.mean) / obs.sd
    axr.axhspan(-1, 1, color="0.9")
    axr.bar(x, z, color=np.where(np.abs(z) <= 1, "tab:green", "tab:orange"))
    axr.set_ylabel("(post. mean - data) / data sd")
    axr.set_xticks(x, [f"{int(s)}" for s in obs.sizes_bytes], rotation=60, fontsize=7)
    axr.set_xlabel("message size (B)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _marginals(r: CampaignResult, path: Path) -> Path:
    names = r.problem.names
    n = len(names)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.5 * rows), squeeze=False)
    draws = r.posterior.draws.reshape(-1, n)
    joint = r.joint.draws.reshape(-1, n) if r.joint is not None else None
    for j, name in enumerate(names):
        ax = axes[j // cols][j % cols]
        lo, hi = r.problem.lower[j], r.problem.upper[j]
        bins = np.linspace(lo, hi, 41)
        ax.hist(
            draws[:, j],
            bins=bins,
            density=True,
            color="tab:blue",
            alpha=0.6,
            label="grouped" if joint is not None else "posterior",
        )
        if joint is not None:
            ax.hist(joint[:, j], bins=bins, density=True, histtype="step", color="k", label="joint")
        ax.axhline(1.0 / (hi - lo), color="0.5", ls="--", label="prior")
        ax.axvline(r.estimates.map[j], color="tab:red", lw=1, label="MAP")
        ax.set_xlabel(f"{name} ({UNITS.get(name, '')})", fontsize=8)
        ax.set_yticks([])
        if not r.estimates.constrained[j]:
            ax.set_title("unconstrained", fontsize=8)
        if j == 0:
            ax.legend(fontsize=6)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(f"{r.campaign.name}: marginal posteriors over the prior")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _pairs(r: CampaignResult, cols: tuple[int, ...], path: Path) -> Path:
    d = r.posterior.draws.reshape(-1, len(r.problem.names))[:, list(cols)]
    k = len(cols)
    fig, axes = plt.subplots(k, k, figsize=(2.2 * k, 2.2 * k), squeeze=False)
    for a in range(k):
        for b in range(k):
            ax = axes[a][b]
            ja, jb = cols[a], cols[b]
            if a == b:
                ax.hist(d[:, a], bins=40, color="tab:blue", alpha=0.7)
                ax.set_xlim(r.problem.lower[ja], r.problem.upper[ja])
            elif a > b:
                ax.plot(d[:, b], d[:, a], ".", ms=1, alpha=0.2, color="tab:blue")
                ax.set_xlim(r.problem.lower[jb], r.problem.upper[jb])
                ax.set_ylim(r.problem.lower[ja], r.problem.upper[ja])
            else:
                ax.axis("off")
            if a == k - 1:
                ax.set_xlabel(r.problem.names[jb], fontsize=7)
            if b == 0 and a > 0:
                ax.set_ylabel(r.problem.names[ja], fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle(f"{r.campaign.name}: posterior pairs of one group", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
