"""What a likelihood family is: its shape parameter, what it sees of the outputs, its
density and draws (the registry of families: :mod:`~mpiuq.calibration.model.families.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ShapeParameter:
    """A calibrated parameter of a family, one per data table using it (Student-t's ``nu``).

    Attributes
    ----------
    name
        Data-table key of its prior ``[low, high]`` and prefix of the parameter's name
        (``<name>_<label>``).
    lowest, highest
        Range a prior's bounds must lie in.
    default
        Prior ``(low, high)`` when the data table gives none.
    meaning
        What it is, for the validator's messages (``"degrees of freedom"``).
    """

    name: str
    lowest: float
    highest: float
    default: tuple[float, float]
    meaning: str


@dataclass(frozen=True, slots=True)
class FamilyOutputs:
    """What a family sees of the outputs it models, each of shape (n, n_sel) or (n_sel,).

    Attributes
    ----------
    mean
        Model mean ``m`` (simulator or surrogate output with the discrepancy's bias).
    var
        Total variance ``v = sigma^2 + e + d`` (replica, surrogate and model error).
    f
        Model outputs (for relative errors).
    model_var, surrogate_var
        Discrepancy variance ``d`` and surrogate variance ``e``.
    log_var
        Squared spread of the log replicas (families on the log scale).
    shape
        The family's shape parameter at every draw and output, or None for a family without one.
    """

    mean: FloatArray
    var: FloatArray
    f: FloatArray
    model_var: FloatArray
    surrogate_var: FloatArray
    log_var: FloatArray
    shape: FloatArray | None


#: ``logpdf(y, outputs)``: pointwise log density of the data centres ``y`` (n_sel,),
#: shape (n, n_sel).
LogPdf = Callable[[FloatArray, FamilyOutputs], FloatArray]
#: ``draw(outputs, u, positive)``: inverse-CDF draws of new data centres from uniforms
#: ``u`` (n, n_sel), positive ones when ``positive``.
Draw = Callable[[FamilyOutputs, FloatArray, bool], FloatArray]


@dataclass(frozen=True, slots=True)
class LikelihoodFamily:
    """One likelihood family of the per-size data summaries.

    Attributes
    ----------
    name
        Its ``[data] likelihood`` value.
    summary
        One line for the reference tables.
    logpdf, draw
        Its log density and predictive draws (:data:`LogPdf`, :data:`Draw`).
    shape
        Its calibrated per-data-set parameter, if any.
    log_scale
        The data centre is taken on the log replicas (``y`` is then their centre's
        logarithm and the family reads ``log_var``).
    """

    name: str
    summary: str
    logpdf: LogPdf
    draw: Draw
    shape: ShapeParameter | None = None
    log_scale: bool = False
