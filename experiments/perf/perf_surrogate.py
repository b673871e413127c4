"""Surrogate speed on the reference study's problem size.

Prints
* seconds to build the 7-D level-4 Clenshaw-Curtis sparse grid (2465 nodes);
* seconds to fit a total-order-4 Legendre chaos (330 terms) to 18 outputs at once,
  including the closed-form leave-one-out errors, and to compute first-order and total
  Sobol indices for all outputs (target: <= 2 s together on a 2-core machine);
* seconds to evaluate the surrogate (18 outputs) at 10^6 points, and its gradient at 10^4.

The outputs are a smooth synthetic 7-D function family (exponentials of linear forms
plus products of sines), evaluated on the sparse grid.

Run: ``python experiments/perf/perf_surrogate.py [--chaospy]``; ``--chaospy`` also times
chaospy's regression fit of one output for comparison.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mpiuq.surrogate import ParameterBox, fit_pce, sparse_grid_design

N_OUT = 18
REPEATS = 3


def synthetic_outputs(u: np.ndarray) -> np.ndarray:
    """18 smooth outputs of the unit-cube coordinates ``u`` in [-1, 1]^7."""
    weights = np.random.default_rng(0).uniform(-1.0, 1.0, (N_OUT, 7))
    cols = [
        np.exp(0.4 * u @ w) + 0.3 * np.sin(2.0 * u[:, k % 7]) * u[:, (k + 3) % 7]
        for k, w in enumerate(weights)
    ]
    return np.stack(cols, axis=1)


def best_of(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chaospy", action="store_true", help="also time chaospy (one output)")
    args = parser.parse_args()
    print(
        f"cores: {os.cpu_count()}, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, best of {REPEATS}"
    )
    box = ParameterBox.from_bounds({f"lambda{j + 1}": (1.0, 2.0 + j) for j in range(7)})
    t_grid, x = best_of(lambda: sparse_grid_design(box, 4))
    print(f"sparse grid level 4 in 7-D: {x.shape[0]} nodes in {t_grid:.3f} s")
    y = synthetic_outputs(box.to_unit(x))

    t_fit, pce = best_of(lambda: fit_pce(x, y, box, order=4))
    t_sobol, _ = best_of(lambda: (pce.sobol_first(), pce.sobol_total()))
    print(
        f"fit + LOO: {x.shape[0]} points x {pce.n_terms} terms x {N_OUT} outputs in "
        f"{t_fit:.3f} s (rank {pce.rank}); Sobol first + total: {t_sobol * 1e3:.2f} ms; "
        f"total {t_fit + t_sobol:.3f} s (target <= 2 s)"
    )
    print(
        f"LOO error / std: median {np.median(pce.loo_rel_error):.2e}, "
        f"max {pce.loo_rel_error.max():.2e}"
    )

    xs = np.random.default_rng(1).uniform(box.lower, box.upper, (1_000_000, 7))
    t_pred, _ = best_of(lambda: pce.predict(xs))
    print(f"predict 10^6 points x {N_OUT} outputs: {t_pred:.2f} s ({t_pred:.2f} us per point)")
    t_grad, _ = best_of(lambda: pce.gradient(xs[:10_000]))
    print(f"gradient at 10^4 points (x 7 parameters x {N_OUT} outputs): {t_grad:.3f} s")

    if args.chaospy:
        import chaospy

        dist = chaospy.J(*[chaospy.Uniform(lo, hi) for lo, hi in box.bounds().values()])
        t0 = time.perf_counter()
        expansion = chaospy.generate_expansion(4, dist)
        chaospy.fit_regression(expansion, x.T, y[:, 0])
        print(f"chaospy fit_regression, one output: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
