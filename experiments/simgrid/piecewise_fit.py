"""SimGrid's own calibration procedure (platform-calibration's ``Analysis.Rmd``), in Python.

The procedure the SimGrid team applies to the same measurements (re-implemented here
from its description; no uncertainty):

1. outliers: within every burst of 10 back-to-back iterations of a size, the values
   below the 10% or above the 90% quantile of the burst are dropped (``outliers_threshold
   = 0.1`` of the authors' configuration), for MPI_Send, MPI_Isend and MPI_Recv;
2. the sizes are cut into segments at the authors' breakpoints (data READMEs);
3. per segment, an ordinary least-squares line ``duration ~ size``:

   * ``smpi/os`` from the MPI_Send durations of the ping-pong, ``smpi/ois`` from the
     MPI_Isend durations, both for the segments that end at or below the detached
     threshold (0 above);
   * ``smpi/or`` from the MPI_Recv of an arrived message, for the segments that end below
     the detached threshold (0 above);
   * the ping-pong ``Send + Recv`` (= 2 half round trips), every segment; its network part
     ``delay = (pingpong - or) / 2`` gives ``smpi/lat-factor = delay intercept /
     expected latency`` and ``smpi/bw-factor = 1 / (delay slope x expected bandwidth)``;

4. ``smpi/async-small-thresh`` = the eager threshold, ``smpi/send-is-detached-thresh`` = the
   detached threshold of the authors' configuration.

A factor the lines make negative (SimGrid cannot run with it) is clipped to a small
positive value and reported in ``clipped``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smpi_pingpong import Machine, SmpiSettings

#: The authors' configurations (``testplatform.xml``, ``taurus.xml``; data READMEs):
#: eager and detached thresholds, expected bandwidth (B/s) and latency (s).
AUTHOR_CONFIG: dict[str, tuple[int, int, float, float]] = {
    "stampede": (17420, 110000, 1e9, 5e-5),
    "taurus": (65536, 320000, 1.25e9, 2.4e-5),
}
#: Outlier quantile within a burst (``outliers_threshold``) and the burst length.
OUTLIER_Q = 0.1
BURST = 10
#: Smallest factor SimGrid is given when a fitted one is not positive.
MIN_FACTOR = 1e-3


@dataclass(frozen=True, slots=True)
class PiecewiseFit:
    """The procedure's result: SMPI settings and the lines behind them.

    Attributes
    ----------
    settings
        What smpirun is given.
    lines
        ``{series: [(from_bytes, to_bytes, intercept_s, slope_s_per_B) or None]}`` per segment.
    clipped
        Factors the lines made non-positive, as ``"smpi/lat-factor segment 0: -2.3"``.
    """

    settings: SmpiSettings
    lines: dict[str, list[tuple[int, int, float, float] | None]]
    clipped: tuple[str, ...]


def drop_burst_outliers(run: np.ndarray, size: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Mask of the values kept: inside the [10%, 90%] quantiles of their burst."""
    keep = np.ones(value.size, dtype=bool)
    key = size.astype(np.int64) * (1 << 20) + run // BURST
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for idx in np.split(order, bounds):
        lo, hi = np.quantile(value[idx], [OUTLIER_Q, 1 - OUTLIER_Q])
        keep[idx] = (value[idx] >= lo) & (value[idx] <= hi)
    return keep


def segment_lines(
    size: np.ndarray, value: np.ndarray, edges: list[int], use: list[bool]
) -> list[tuple[int, int, float, float] | None]:
    """OLS ``value ~ size`` within every segment ``[edges[k], edges[k+1])`` that is used."""
    out: list[tuple[int, int, float, float] | None] = []
    for k in range(len(edges) - 1):
        sel = (size >= edges[k]) & (size < edges[k + 1])
        if not use[k] or sel.sum() < 2:
            out.append(None)
            continue
        slope, intercept = np.polyfit(size[sel].astype(float), value[sel], 1)
        out.append((edges[k], edges[k + 1], float(intercept), float(slope)))
    return out


def fit(machine_name: str, machine: Machine, data_dir: Path) -> PiecewiseFit:
    """Apply the procedure to a machine's ping-pong, Isend and Recv data (seconds)."""
    from mpiuq.calibration.data.benchmark_csv import read_benchmark_csv

    eager, detached, bw_exp, lat_exp = AUTHOR_CONFIG[machine_name]
    edges = [0, *machine.breakpoints, 2**31 - 1]
    limits = edges[1:]
    series = {
        "send": read_benchmark_csv(data_dir / "extra.csv", "pingpong_send"),
        "isend": read_benchmark_csv(data_dir / "extra.csv", "isend"),
        "recv": read_benchmark_csv(data_dir / "extra.csv", "recv_arrived"),
        "pingpong": read_benchmark_csv(data_dir / "data.csv", "pingpong_half_rtt"),
    }
    lines: dict[str, list[tuple[int, int, float, float] | None]] = {}
    for name, m in series.items():
        value = m.value * 1e-6  # us -> s
        size = m.size_bytes
        if name == "pingpong":
            value = 2.0 * value  # Send + Recv of the ping-pong
            use = [True] * len(limits)
        else:
            keep = drop_burst_outliers(m.run, size, value)
            size, value = size[keep], value[keep]
            if name == "recv":
                use = [lim < detached for lim in limits]
            else:
                use = [lim <= detached for lim in limits]
        lines[name] = segment_lines(size, value, edges, use)

    def coef(name: str, k: int) -> tuple[float, float]:
        line = lines[name][k]
        return (0.0, 0.0) if line is None else (line[2], line[3])

    clipped: list[str] = []
    bwf, latf = [], []
    for k in range(len(limits)):
        pp_i, pp_s = coef("pingpong", k)
        or_i, or_s = coef("recv", k)
        delay_i, delay_s = (pp_i - or_i) / 2.0, (pp_s - or_s) / 2.0
        b = 1.0 / (delay_s * bw_exp) if delay_s > 0 else -1.0
        lf = delay_i / lat_exp
        if b <= 0:
            clipped.append(f"smpi/bw-factor segment {k}: delay slope {delay_s:.3g} s/B")
            b = MIN_FACTOR
        if lf <= 0:
            clipped.append(f"smpi/lat-factor segment {k}: {lf:.3g}")
            lf = MIN_FACTOR
        bwf.append((edges[k], b))
        latf.append((edges[k], lf))

    def overhead(name: str) -> tuple[tuple[int, float, float], ...]:
        rows = []
        for k in range(len(limits)):
            i, s = coef(name, k)
            if i < 0:
                clipped.append(
                    f"smpi/{name if name != 'send' else 'os'} segment {k}: offset {i:.3g} s"
                )
                i = 0.0
            rows.append((edges[k], i, max(s, 0.0)))
        return tuple(rows)

    settings = SmpiSettings(
        bw_exp,
        lat_exp,
        tuple(bwf),
        tuple(latf),
        overhead("send"),
        overhead("recv"),
        overhead("isend"),
        eager,
        detached,
    )
    return PiecewiseFit(settings, lines, tuple(clipped))
