"""Model discrepancy per protocol regime: relative bias and relative spread of the model error.

The simulator's protocol model is a simplification; where it cannot reproduce the data
(a regime whose per-byte cost differs, a step the model lacks) a likelihood that knows
only the replica noise makes the parameters overconfident (Kennedy & O'Hagan 2001;
Brynjarsdottir & O'Hagan 2014). The discrepancy model here is the simplest one the data
can inform: for every protocol regime ``r`` (mailbox ``small``, ``eager``, ``rendezvous``)
of the calibrated sizes,

    y_i = f_i(lambda) * (1 + b_r) + e_i,    e_i ~ N(0, sigma_i^2 + (s_r * f_i(lambda))^2)

with ``b_r`` a relative bias (uniform prior on ``[-bias_rel, bias_rel]``; left out when
``bias_rel = 0``) and ``s_r`` a relative standard deviation of the model error (uniform
prior on ``[0, sd_rel]``). Relative terms, because the outputs span 1 us to 200 us and a
model error of a given kind (a wrong per-byte cost) grows with the time. The error term
is integrated out analytically, so the likelihood stays Gaussian per size and its
pointwise values are those PSIS-LOO compares.

Why not a Gaussian process over log size: with six sizes per regime, the length scale and
variance of a GP are barely informed by the data, and a GP spanning the regime
boundaries would smooth over the steps that are the model's main feature; the
per-regime terms are identifiable and say directly where the model misses. Note that a
relative bias in the rendezvous regime is exactly confounded with the bandwidths
(``(1 + b) * N / bw = N / (bw / (1 + b))``), which is why the stock setting uses the
spread terms only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: Discrepancy models a campaign may choose.
DISCREPANCY_MODELS: tuple[str, ...] = ("none", "regime")


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """Per-regime relative bias and spread terms over a fixed set of outputs.

    Attributes
    ----------
    regimes
        Regime names present among the outputs, in order of first appearance.
    output_regime
        Index into ``regimes`` of every output, shape (n_out,).
    bias_rel
        Half-width of the uniform prior of every bias ``b_r`` (0: no bias terms).
    sd_rel
        Upper bound of the uniform prior of every spread ``s_r`` (0: no spread terms).
    """

    regimes: tuple[str, ...] = ()
    output_regime: tuple[int, ...] = ()
    bias_rel: float = 0.0
    sd_rel: float = 0.0

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names: ``bias_rel_<regime>`` then ``sd_rel_<regime>``."""
        bias = tuple(f"bias_rel_{r}" for r in self.regimes) if self.bias_rel > 0 else ()
        sd = tuple(f"sd_rel_{r}" for r in self.regimes) if self.sd_rel > 0 else ()
        return bias + sd

    @property
    def dim(self) -> int:
        """Number of discrepancy parameters."""
        return len(self.names)

    @property
    def enabled(self) -> bool:
        """Whether the model has any parameter."""
        return self.dim > 0

    @property
    def lower(self) -> FloatArray:
        """Lower prior bounds, shape (dim,)."""
        n = len(self.regimes)
        bias = [-self.bias_rel] * n if self.bias_rel > 0 else []
        sd = [0.0] * n if self.sd_rel > 0 else []
        return np.asarray(bias + sd, dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        """Upper prior bounds, shape (dim,)."""
        n = len(self.regimes)
        bias = [self.bias_rel] * n if self.bias_rel > 0 else []
        sd = [self.sd_rel] * n if self.sd_rel > 0 else []
        return np.asarray(bias + sd, dtype=np.float64)

    @property
    def nominal(self) -> FloatArray:
        """No discrepancy: zero bias and zero spread, shape (dim,)."""
        return np.zeros(self.dim)

    def outputs_of(self, k: int) -> tuple[int, ...]:
        """Outputs that discrepancy parameter ``k`` acts on (those of its regime)."""
        regime = k % len(self.regimes)
        return tuple(i for i, r in enumerate(self.output_regime) if r == regime)

    def mean_and_var(
        self, f: FloatArray, delta: FloatArray, outputs: tuple[int, ...] | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """Model mean ``f (1 + b)`` and discrepancy variance ``(s f)^2`` of the outputs.

        Parameters
        ----------
        f
            Simulator (or surrogate) outputs of the selected outputs, shape (n, n_sel).
        delta
            Discrepancy parameters, shape (n, dim).
        outputs
            Indices of the selected outputs (default: all).

        Returns
        -------
        (mean, var)
            Both of shape (n, n_sel), in the observable's unit (squared for ``var``).
        """
        if not self.enabled:
            return f, np.zeros_like(f)
        sel = list(range(len(self.output_regime))) if outputs is None else list(outputs)
        reg = np.asarray(self.output_regime, dtype=np.int64)[sel]
        n = len(self.regimes)
        d = np.atleast_2d(delta)
        mean = f
        k = 0
        if self.bias_rel > 0:
            mean = f * (1.0 + d[:, k : k + n][:, reg])
            k += n
        var = np.zeros_like(f)
        if self.sd_rel > 0:
            var = (d[:, k : k + n][:, reg] * f) ** 2
        return mean, var


def regime_key(series: str, regime: str, several: bool) -> str:
    """Name of the discrepancy regime of a data series' outputs in one protocol regime.

    With one data series the regime's name alone (``sd_rel_eager``); with several, one
    term per series and regime (``sd_rel_<series>_eager``): their model errors differ.

    Examples
    --------
    >>> regime_key("latency", "eager", True), regime_key("latency", "eager", False)
    ('latency_eager', 'eager')
    """
    return f"{series}_{regime}" if several else regime


def regime_discrepancy(
    protocols: tuple[str, ...], model: str, bias_rel: float, sd_rel: float
) -> Discrepancy:
    """The discrepancy of a campaign's ``[discrepancy]`` table for outputs of ``protocols``.

    Parameters
    ----------
    protocols
        Protocol regime of every output (``SimParams.protocol_of`` of its size).
    model
        ``"none"`` (no discrepancy) or ``"regime"``.
    bias_rel, sd_rel
        Prior half-width of the relative biases and upper bound of the relative spreads.

    Examples
    --------
    >>> d = regime_discrepancy(("small", "small", "eager"), "regime", 0.0, 0.2)
    >>> d.names, d.output_regime
    (('sd_rel_small', 'sd_rel_eager'), (0, 0, 1))
    """
    if model == "none":
        return Discrepancy()
    regimes: list[str] = []
    for p in protocols:
        if p not in regimes:
            regimes.append(p)
    index = tuple(regimes.index(p) for p in protocols)
    return Discrepancy(tuple(regimes), index, float(bias_rel), float(sd_rel))
