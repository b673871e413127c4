"""Model comparison by PSIS-LOO (ArviZ) on the pointwise log-likelihood of every size.

Each calibrated size is one observation (its replica mean, eq. 7), so the pointwise
log-likelihood has one column per size; the expected log predictive density of
leaving one size out (``elpd_loo``) compares model variants (with and without
discrepancy) on the same data. With 18 sizes, some of which alone determine a parameter,
Pareto k-hat values above 0.7 can occur; they are reported per size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Loo:
    """PSIS-LOO of one model variant.

    Attributes
    ----------
    elpd, se
        Expected log pointwise predictive density and its standard error.
    p_loo
        Effective number of parameters.
    pareto_k
        Pareto k-hat per observation (size), shape (n_out,).
    pointwise
        elpd per size, shape (n_out,).
    """

    elpd: float
    se: float
    p_loo: float
    pareto_k: FloatArray
    pointwise: FloatArray


def _idata(loglik: FloatArray) -> Any:
    import arviz as az

    ll = np.asarray(loglik, dtype=np.float64)
    return az.from_dict(
        posterior={"dummy": np.zeros((1, ll.shape[0]))},
        log_likelihood={"y": ll[None]},
    )


def psis_loo(loglik: npt.ArrayLike) -> Loo:
    """PSIS-LOO of a pointwise log-likelihood of shape (n_draws, n_obs)."""
    import warnings

    import arviz as az

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # k-hat warnings are reported per size instead
        res = az.loo(_idata(np.asarray(loglik)), pointwise=True)
    return Loo(
        float(res["elpd_loo"]),
        float(res["se"]),
        float(res["p_loo"]),
        np.asarray(res["pareto_k"], dtype=np.float64),
        np.asarray(res["loo_i"], dtype=np.float64),
    )


def compare(variants: dict[str, npt.ArrayLike]) -> list[dict[str, Any]]:
    """ArviZ ``compare`` of variants by PSIS-LOO: one row per variant, best first.

    Each row has ``variant``, ``rank``, ``elpd_loo``, ``p_loo``, ``elpd_diff`` (to the
    best), ``se``, ``dse`` (standard error of the difference) and ``weight`` (stacking).
    """
    import warnings

    import arviz as az

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare({k: _idata(np.asarray(v)) for k, v in variants.items()}, ic="loo")
    rows = []
    for name, row in table.iterrows():
        rows.append(
            {
                "variant": str(name),
                "rank": int(row["rank"]),
                "elpd_loo": float(row["elpd_loo"]),
                "p_loo": float(row["p_loo"]),
                "elpd_diff": float(row["elpd_diff"]),
                "se": float(row["se"]),
                "dse": float(row["dse"]),
                "weight": float(row["weight"]),
            }
        )
    return rows
