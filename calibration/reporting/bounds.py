"""Posteriors pressing against a prior bound: the data want a value the prior excludes.

A uniform prior's bounds are physical or plausibility limits (a bandwidth at the line
rate, a delay at zero). When the posterior piles up at a bound, the likelihood keeps
rising beyond it: either the bound is too tight, or the model attributes to this
parameter a cost that belongs elsewhere (a bandwidth past the line rate absorbing
software costs). The posterior *presses* against a bound when more than
:data:`PRESSING_SHARE` of its draws lie within :data:`EDGE_FRACTION` of the prior range
from it, five times what a flat posterior puts there; a parameter the data do not
inform (posterior = prior) does not trip it, however its interval ends.

Checked: both bounds of every simulator parameter; the upper bound of every
discrepancy spread (the model error is larger than the prior allows) and both bounds of
every discrepancy bias. A spread at zero (no model error) and the Student-t degrees of
freedom at their bounds are not physical limits and are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.checking.checks import Check

FloatArray = npt.NDArray[np.float64]

#: Width of the band next to a bound, as a fraction of the prior range.
EDGE_FRACTION = 0.01
#: Share of the draws in that band above which the posterior presses against the bound.
PRESSING_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class BoundShare:
    """Share of a parameter's posterior draws next to each of its prior bounds.

    Attributes
    ----------
    name
        Parameter name.
    lower, upper
        Prior bounds.
    lower_share, upper_share
        Share of draws within :data:`EDGE_FRACTION` of the range from the bound (None: that
        bound is not checked).
    """

    name: str
    lower: float
    upper: float
    lower_share: float | None
    upper_share: float | None

    def pressed(self) -> list[tuple[str, float, float]]:
        """``(side, bound, share)`` of every bound the posterior presses against."""
        out = []
        for side, bound, share in (
            ("lower", self.lower, self.lower_share),
            ("upper", self.upper, self.upper_share),
        ):
            if share is not None and share > PRESSING_SHARE:
                out.append((side, bound, share))
        return out


def bound_shares(
    draws: FloatArray,
    names: tuple[str, ...],
    lower: FloatArray,
    upper: FloatArray,
    n_model: int,
    n_discrepancy: int,
) -> tuple[BoundShare, ...]:
    """Edge shares of the simulator and discrepancy parameters (see the module docstring).

    Parameters
    ----------
    draws
        Posterior draws, shape (n, dim).
    names, lower, upper
        Names and prior bounds of the ``dim`` columns.
    n_model, n_discrepancy
        The first ``n_model`` columns are simulator parameters, the next
        ``n_discrepancy`` discrepancy terms (``bias_rel_*``, ``sd_rel_*``).
    """
    x = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    out = []
    for j in range(n_model + n_discrepancy):
        lo, hi = float(lower[j]), float(upper[j])
        edge = EDGE_FRACTION * (hi - lo)
        near_lo = float(np.mean(x[:, j] <= lo + edge))
        near_hi = float(np.mean(x[:, j] >= hi - edge))
        spread = j >= n_model and names[j].startswith("sd_rel_")
        out.append(BoundShare(names[j], lo, hi, None if spread else near_lo, near_hi))
    return tuple(out)


def bounds_check(shares: tuple[BoundShare, ...], units: dict[str, str]) -> Check:
    """The ``prior_bounds`` warning: which parameters press against which bound."""
    pressed = [(s.name, side, b, share) for s in shares for side, b, share in s.pressed()]
    if not pressed:
        message = (
            f"no posterior presses against a prior bound (more than {PRESSING_SHARE:.0%} of "
            f"draws within {EDGE_FRACTION:.0%} of the range from it)"
        )
    else:
        parts = [
            f"{name} at its {side} bound {b:g}{(' ' + units[name]) if units.get(name) else ''} "
            f"({share:.0%} of draws within {EDGE_FRACTION:.0%} of the range)"
            for name, side, b, share in pressed
        ]
        message = (
            "posterior presses against a prior bound: "
            + "; ".join(parts)
            + ": the data want a value beyond it (the bound is too tight, or the model puts "
            "other costs on this parameter)"
        )
    worst = max((share for *_, share in pressed), default=0.0)
    return Check("prior_bounds", not pressed, "warn", worst, PRESSING_SHARE, message)
