"""Reuse of a design's simulator runs by campaigns that fit a subset of its outputs.

A leave-one-series-out validation fits the same campaign several times, each time
without one data series: every fit's global design (the same sparse grid over the same
prior box) needs the simulator's outputs at the sizes of the series it keeps, which the
design of all series already holds. :class:`DesignColumns` keeps that design with one
key per output, the fingerprint of the single-output benchmark model (benchmark,
window, size, observable, parameter names and fixed simulator values), so a fit takes
its columns by key instead of running the simulator again, and takes none if anything
that defines an output differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config import Campaign
from mpiuq.calibration.data.observations import Observations

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class DesignColumns:
    """A design's inputs and outputs, one key per output column.

    Attributes
    ----------
    x
        Design points, shape (n, dim).
    y
        Simulator outputs, shape (n, n_out).
    keys
        One :func:`output_keys` key per column of ``y``.
    """

    x: FloatArray
    y: FloatArray
    keys: tuple[str, ...]

    def select(self, x: FloatArray, keys: tuple[str, ...]) -> FloatArray | None:
        """The outputs of ``keys`` at the design ``x``, or None unless all are held here
        at exactly these points."""
        if x.shape != self.x.shape or not np.array_equal(x, self.x):
            return None
        index = {k: j for j, k in enumerate(self.keys)}
        if not all(k in index for k in keys):
            return None
        return self.y[:, [index[k] for k in keys]]


def output_keys(campaign: Campaign, observations: Observations) -> tuple[str, ...]:
    """One key per output of a campaign: the fingerprint of the output's own benchmark model."""
    from mpiuq.simulator.benchmarks.run import BenchmarkModel

    base = campaign.simulator.base_params()
    keys = []
    for d, s in zip(observations.dataset, observations.sizes_bytes, strict=True):
        spec = campaign.datasets[int(d)]
        keys.append(
            BenchmarkModel(
                benchmark=spec.model,
                sizes_bytes=(int(s),),
                names=campaign.parameters.names,
                base=base,
                observable=spec.observable,
                window=spec.window,
            ).model_id
        )
    return tuple(keys)
