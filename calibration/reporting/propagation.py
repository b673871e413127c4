"""Calibrated uncertainty carried through replay: summaries of quantities over posterior draws.

A replay of posterior draws (:func:`mpiuq.simulator.replay.draws.replay_draws`) gives
every quantity (simulated time, each part of the decomposition, per MPI call) once
per draw; :func:`draw_summary` reduces such a vector to its mean, standard deviation
and 90% highest-density interval, and :func:`paired_speedup` compares a baseline with
a scenario replayed under the *same* draws (paired, so the parameters' uncertainty
common to both largely cancels in the ratio).

Speed-up is ``T_baseline / T_scenario`` of the simulated run time (> 1: the scenario
is faster); ``P(speed-up > 1.05)`` is the posterior probability that the scenario
saves more than 5% of the run time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.reporting.summaries import hdi
from mpiuq.simulator.codes import CATEGORIES

FloatArray = npt.NDArray[np.float64]

#: Keys of the four parts of the decomposition, in the kernel's order.
PART_KEYS: tuple[str, ...] = tuple(f"{c}_s" for c in CATEGORIES)

#: Speed-up thresholds whose posterior probability is reported.
SPEEDUP_THRESHOLDS: tuple[float, ...] = (1.0, 1.05)


def draw_summary(values: npt.ArrayLike) -> dict[str, Any]:
    """Mean, sd, 90% HDI and the values of a quantity over draws.

    One draw gives a zero sd and the degenerate interval ``[x, x]``.

    Examples
    --------
    >>> s = draw_summary([1.0, 2.0, 3.0, 4.0])
    >>> s["mean"], s["hdi90"]
    (2.5, [1.0, 4.0])
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 1:
        v = float(x[0])
        return {"mean": v, "sd": 0.0, "hdi90": [v, v], "draws": [v]}
    lo, hi = hdi(x, 0.9)
    return {
        "mean": float(x.mean()),
        "sd": float(x.std(ddof=1)),
        "hdi90": [lo, hi],
        "draws": x.tolist(),
    }


def decomposition_summary(
    simulated_time_s: FloatArray,
    parts_s: FloatArray,
    per_call_s: FloatArray,
    call_names: tuple[str, ...],
) -> dict[str, Any]:
    """Summaries of one model's replay over draws (the ``replay.json`` entry of a model).

    Parameters
    ----------
    simulated_time_s
        ``(n_draws,)`` simulated run time, seconds.
    parts_s
        ``(n_draws, 4)`` compute, network, MPI stack, sync seconds summed over ranks.
    per_call_s
        ``(n_draws, n_calls, 4)`` the same per MPI call kind.
    call_names
        Names of the calls (rows of ``per_call_s``); calls with no time are left out.
    """
    totals = parts_s.sum(axis=1)
    safe = np.where(totals > 0, totals, 1.0)
    per_call: dict[str, Any] = {}
    for i, name in enumerate(call_names):
        block = per_call_s[:, i, :]
        if not np.any(block > 0):
            continue
        per_call[name] = {k: draw_summary(block[:, j]) for j, k in enumerate(PART_KEYS)}
    return {
        "simulated_time_s": draw_summary(simulated_time_s),
        "decomposition": {k: draw_summary(parts_s[:, j]) for j, k in enumerate(PART_KEYS)},
        "share": {
            k.removesuffix("_s"): draw_summary(parts_s[:, j] / safe)
            for j, k in enumerate(PART_KEYS)
        },
        "per_call": per_call,
    }


def paired_speedup(
    base_time_s: FloatArray,
    scenario_time_s: FloatArray,
    base_parts_s: FloatArray,
    scenario_parts_s: FloatArray,
) -> dict[str, Any]:
    """Speed-up of a scenario over the baseline under the same draws, and what moved.

    Parameters
    ----------
    base_time_s, scenario_time_s
        ``(n_draws,)`` simulated run times, draw ``k`` of both under the same parameters.
    base_parts_s, scenario_parts_s
        ``(n_draws, 4)`` parts summed over ranks.

    Returns
    -------
    dict
        ``speedup`` (summary of ``T_base / T_scenario``), ``probability`` of a speed-up
        above each of :data:`SPEEDUP_THRESHOLDS` (fraction of draws), ``time_saved_s``,
        and per part the change ``scenario - baseline`` (``change_s``) with its share of
        the total change (``moves``: which part of the time moves).
    """
    base = np.asarray(base_time_s, dtype=np.float64)
    scen = np.asarray(scenario_time_s, dtype=np.float64)
    ratio = base / np.where(scen > 0, scen, np.nan)
    ratio = np.where(np.isnan(ratio), 1.0, ratio)
    delta = np.asarray(scenario_parts_s) - np.asarray(base_parts_s)
    total_change = np.abs(delta).sum(axis=1)
    safe = np.where(total_change > 0, total_change, 1.0)
    return {
        "speedup": draw_summary(ratio),
        "probability": {f"speedup>{t:g}": float(np.mean(ratio > t)) for t in SPEEDUP_THRESHOLDS},
        "time_saved_s": draw_summary(base - scen),
        "change_s": {k: draw_summary(delta[:, j]) for j, k in enumerate(PART_KEYS)},
        "moves": {
            k.removesuffix("_s"): float(np.mean(np.abs(delta[:, j]) / safe))
            for j, k in enumerate(PART_KEYS)
        },
    }
