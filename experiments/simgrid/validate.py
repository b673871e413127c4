"""Size-by-size predictive coverage of the Bayesian SimGrid calibration next to SimGrid's
own piecewise-fit calibration, on the sizes the campaign used (in-sample) and on every
other measured size (out-of-sample).

For every measured size (490 per series) of the three series the campaign calibrates
(ping-pong half round trip, MPI_Send, MPI_Isend):

* **Bayesian**: SimGrid (smpirun) at ``--draws`` draws of the campaign's posterior
  (``posterior.nc``), then the campaign's own predictive replication (discrepancy of
  the size's regime and data set, log-normal noise of the size's replica spread,
  :func:`mpiuq.calibration.reporting.predictive.replicate`): the 90% band;
* **piecewise (published)**: SimGrid at the settings of SimGrid's calibration procedure
  (:mod:`piecewise_fit`) with the same noise: the 90% band of a point prediction;
* **piecewise (SMPI 3.32 accounting)**: the same lines, with the ping-pong's network part
  taken as ``half round trip - os - or`` below the detached threshold (what SMPI 3.32
  adds to a detached message), not ``(round trip - or) / 2``.

A size is covered when the data centre (median of the replicas, as in the campaign) lies
inside its band. Writes ``validation.json``, ``validation_sizes.csv`` and
``validation.png`` into the results folder and prints a Markdown table.

Usage (from this folder; needs smpirun and a finished campaign)::

    python validate.py stampede --results ../../results/simgrid-stampede [--draws 40]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import piecewise_fit as pf  # noqa: E402
import smpi_pingpong as sp  # noqa: E402

SERIES = ("pingpong", "send", "isend")
BENCH = {"pingpong": "pingpong_half_rtt", "send": "pingpong_send", "isend": "isend"}


def smpi_3_32_fit(name: str, machine: sp.Machine, data_dir: Path) -> sp.SmpiSettings:
    """The procedure's lines with SMPI 3.32's accounting of a detached ping-pong:
    half round trip = os + or + network below the detached threshold, network above."""
    fit = pf.fit(name, machine, data_dir)
    _eager, detached, bw_exp, lat_exp = pf.AUTHOR_CONFIG[name]
    lines = fit.lines
    bwf, latf = [], []
    for k, line in enumerate(lines["pingpong"]):
        assert line is not None
        start, end, pp_i, pp_s = line
        net_i, net_s = pp_i / 2.0, pp_s / 2.0
        if end <= detached:
            for series in ("send", "recv"):
                other = lines[series][k]
                if other is not None:
                    net_i -= other[2]
                    net_s -= other[3]
        bwf.append((start, 1.0 / (net_s * bw_exp) if net_s > 0 else pf.MIN_FACTOR))
        latf.append((start, net_i / lat_exp if net_i > 0 else pf.MIN_FACTOR))
    return replace(fit.settings, bw_factor=tuple(bwf), lat_factor=tuple(latf))


def run_all(settings: list[sp.SmpiSettings], sizes: list[int], workers: int) -> np.ndarray:
    """SimGrid outputs, shape (n_settings, 3 series x n_sizes), series by series."""
    exe = sp.binary()
    with cf.ProcessPoolExecutor(workers) as pool:
        rows = list(pool.map(sp.run_smpi, settings, [sizes] * len(settings), [exe] * len(settings)))
    out = np.empty((len(settings), len(SERIES) * len(sizes)))
    for i, r in enumerate(rows):
        arr = np.asarray(r)  # (n_sizes, 4): half, send, isend, recv
        out[i] = np.concatenate([arr[:, sp.SERIES[s]] for s in SERIES])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("machine", choices=sorted(sp.MACHINES))
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--draws", type=int, default=40, help="posterior draws run on all sizes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import arviz as az

    from mpiuq.calibration.config import load_campaign
    from mpiuq.calibration.data.observations import load_observations
    from mpiuq.calibration.model.discrepancy import Discrepancy
    from mpiuq.calibration.pipeline.campaign import discrepancy_for, noise_for
    from mpiuq.calibration.reporting.predictive import replicate
    from mpiuq.calibration.sampling.posterior import Problem

    t_start = time.perf_counter()
    machine = sp.MACHINES[args.machine]
    campaign = load_campaign(HERE / f"{args.machine}.toml")
    data_dir = campaign.datasets[0].path.parent
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv

    all_sizes = sorted(
        set(read_benchmark_csv(data_dir / "data.csv", "pingpong_half_rtt").size_bytes.tolist())
    )
    used = {s for spec in campaign.datasets for s in (spec.sizes or ())}
    specs = tuple(replace(spec, sizes=tuple(all_sizes)) for spec in campaign.datasets)
    wide = replace(campaign, datasets=specs)
    obs = load_observations(specs, wide.simulator.thresholds())
    disc = discrepancy_for(wide, obs)
    noise = noise_for(wide, obs)
    names = campaign.parameters.names

    idata = az.from_netcdf(args.results / "posterior.nc")
    post = idata.posterior
    all_names = [*names, *disc.names, *noise.names]
    draws = np.column_stack([post[n].values.ravel() for n in all_names])
    rng = np.random.default_rng(args.seed)
    pick = np.linspace(0, draws.shape[0] - 1, min(args.draws, draws.shape[0])).round().astype(int)
    sub = draws[pick]

    def problem(d: Discrepancy) -> Problem:
        n = len(all_names) if d.enabled else len(names)
        lower = np.concatenate([campaign.parameters.lower, d.lower, noise.lower])
        upper = np.concatenate([campaign.parameters.upper, d.upper, noise.upper])
        return Problem(
            predictor=None,  # type: ignore[arg-type]
            names=tuple(all_names[:n]) if d.enabled else names + noise.names,
            lower=lower,
            upper=upper,
            nominal=(lower + upper) / 2,
            data_mean=obs.mean,
            data_var=obs.var,
            loo_rmse=np.zeros_like(obs.mean),
            discrepancy=d,
            noise=noise,
        )

    settings = [
        sp.settings_from_parameters(dict(zip(names, row[: len(names)], strict=True)), machine)
        for row in sub
    ]
    published = pf.fit(args.machine, machine, data_dir)
    adapted = smpi_3_32_fit(args.machine, machine, data_dir)
    t0 = time.perf_counter()
    f_all = run_all([*settings, published.settings, adapted], all_sizes, args.workers)
    sim_s = time.perf_counter() - t0
    f_post, f_pub, f_adp = f_all[: len(settings)], f_all[-2], f_all[-1]

    reps = 50  # noise replicates per posterior draw
    _, y = replicate(
        problem(disc), np.repeat(f_post, reps, axis=0), np.repeat(sub, reps, axis=0), rng
    )
    bayes_lo, bayes_hi = np.quantile(y, [0.05, 0.95], axis=0)
    plain = problem(Discrepancy())
    bands = {}
    for key, f in (("piecewise_published", f_pub), ("piecewise_smpi332", f_adp)):
        _, yp = replicate(
            plain, np.repeat(f[None], 4000, axis=0), np.zeros((4000, len(names))), rng
        )
        bands[key] = (*np.quantile(yp, [0.05, 0.95], axis=0), f)
    bands["bayesian"] = (bayes_lo, bayes_hi, np.median(f_post, axis=0))

    sizes = obs.sizes_bytes
    series_of = np.array([SERIES[d] for d in obs.dataset])
    in_sample = np.array([int(s) in used for s in sizes])
    rows = []
    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for key, (lo, hi, centre) in bands.items():
        inside = (obs.mean >= lo) & (obs.mean <= hi)
        rel = np.abs(centre - obs.mean) / obs.mean
        table[key] = {}
        for s in SERIES:
            sel = series_of == s
            table[key][s] = {
                "in_sample": [int(inside[sel & in_sample].sum()), int((sel & in_sample).sum())],
                "out_of_sample": [
                    int(inside[sel & ~in_sample].sum()),
                    int((sel & ~in_sample).sum()),
                ],
                "median_rel_error": float(np.median(rel[sel])),
                "median_rel_band_width": float(np.median(((hi - lo) / obs.mean)[sel])),
            }
        for i in range(sizes.size):
            rows.append(
                [
                    key,
                    series_of[i],
                    int(sizes[i]),
                    bool(in_sample[i]),
                    float(obs.mean[i]),
                    float(np.sqrt(obs.var[i])),
                    float(centre[i]),
                    float(lo[i]),
                    float(hi[i]),
                    bool(inside[i]),
                ]
            )
    out = args.results
    with (out / "validation_sizes.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "calibration",
                "series",
                "size_bytes",
                "in_sample",
                "data_median_us",
                "data_sd_us",
                "prediction_us",
                "q05_us",
                "q95_us",
                "inside_90",
            ]
        )
        w.writerows(rows)
    doc = {
        "machine": args.machine,
        "posterior_draws_run": len(settings),
        "smpirun_runs": int(len(settings) + 2),
        "smpirun_wall_s": round(sim_s, 1),
        "sizes_per_series": len(all_sizes),
        "in_sample_sizes": len(used),
        "coverage": table,
        "piecewise_published": {
            "cfg": published.settings.cfg(),
            "clipped": list(published.clipped),
        },
        "piecewise_smpi332": {"cfg": adapted.cfg()},
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    (out / "validation.json").write_text(json.dumps(doc, indent=2) + "\n")
    plot(out / "validation.png", args.machine, sizes, series_of, obs, bands)
    print(
        "| calibration | series | in-sample inside 90% | out-of-sample inside 90% "
        "| median relative error | median 90% band width |"
    )
    print("|---|---|---|---|---|---|")
    for key in ("bayesian", "piecewise_published", "piecewise_smpi332"):
        for s in SERIES:
            c = table[key][s]
            print(
                f"| {key} | {s} | {c['in_sample'][0]}/{c['in_sample'][1]} | {c['out_of_sample'][0]}/{c['out_of_sample'][1]} | {100 * c['median_rel_error']:.1f}% | {100 * c['median_rel_band_width']:.0f}% |"
            )
    print(
        f"{len(settings) + 2} smpirun runs in {sim_s:.0f} s; total {time.perf_counter() - t_start:.0f} s"
    )


def plot(
    path: Path, machine: str, sizes: np.ndarray, series_of: np.ndarray, obs: object, bands: dict
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mean = obs.mean  # type: ignore[attr-defined]
    fig, axes = plt.subplots(
        2, 3, figsize=(15, 7.5), sharex=True, gridspec_kw={"height_ratios": [2, 1.2]}
    )
    colours = {
        "bayesian": "tab:blue",
        "piecewise_published": "tab:red",
        "piecewise_smpi332": "tab:orange",
    }
    for j, s in enumerate(SERIES):
        sel = series_of == s
        x = sizes[sel].astype(float)
        ax, axr = axes[0][j], axes[1][j]
        ax.plot(x, mean[sel], ".", color="k", ms=3, label="data (median of replicas)")
        for key, (lo, hi, centre) in bands.items():
            c = colours[key]
            if key == "bayesian":
                ax.fill_between(
                    x, lo[sel], hi[sel], color=c, alpha=0.3, label="Bayesian 90% predictive"
                )
            ax.plot(x, centre[sel], "-", color=c, lw=1, label=key.replace("_", " "))
            axr.plot(x, (centre[sel] - mean[sel]) / mean[sel] * 100, "-", color=c, lw=1)
            if key == "bayesian":
                axr.fill_between(
                    x,
                    (lo[sel] - mean[sel]) / mean[sel] * 100,
                    (hi[sel] - mean[sel]) / mean[sel] * 100,
                    color=c,
                    alpha=0.2,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{machine}: {s}")
        axr.set_xscale("log")
        axr.axhline(0, color="k", lw=0.5)
        axr.set_ylim(-60, 60)
        axr.set_xlabel("message size (B)")
        if j == 0:
            ax.set_ylabel("time (us)")
            axr.set_ylabel("prediction - data (% of data)")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
