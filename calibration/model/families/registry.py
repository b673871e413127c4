"""The registry of likelihood families: one entry per family of a data table's noise.

A family (:class:`LikelihoodFamily`) holds everything the rest of the calibration needs
of it: its name (the value of ``[data] likelihood``), the optional per-data-set shape
parameter it calibrates (its campaign key, prior range and meaning), its log-density and
its posterior predictive draws. The campaign validator, the noise model
(:mod:`~mpiuq.calibration.model.noise`), the sampler dimensions and the generated campaign-key
reference read the registry, so adding a family is one module (its functions and its
:class:`~mpiuq.calibration.model.families.family.LikelihoodFamily`) plus its name in the
built-in table below, or, outside the package, one :func:`register_likelihood` call
(``docs/extending-calibration.md`` walks through one).
"""

from __future__ import annotations

from mpiuq.calibration.model.families.family import LikelihoodFamily, ShapeParameter
from mpiuq.calibration.model.families.gaussian import GAUSSIAN
from mpiuq.calibration.model.families.lognormal import LOGNORMAL
from mpiuq.calibration.model.families.student_t import STUDENT_T
from mpiuq.calibration.registry import Registry

#: The registered families; the built-in ones first (codes 0, 1, 2), in this order.
_FAMILIES: Registry[LikelihoodFamily] = Registry(
    "likelihood",
    (GAUSSIAN, STUDENT_T, LOGNORMAL),
    lambda name, known: f"likelihood {name!r} is unknown: expected one of {known}",
)


def register_likelihood(family: LikelihoodFamily) -> LikelihoodFamily:
    """Add a family to the registry (its code is its position); returns it.

    Raises
    ------
    SamplerError
        If another family already has its name.
    """
    return _FAMILIES.register(family)


def unregister_likelihood(name: str) -> None:
    """Remove a registered family (a test's temporary family); unknown names are ignored."""
    _FAMILIES.unregister(name)


def likelihood_names() -> tuple[str, ...]:
    """Names of the registered families, in code order."""
    return _FAMILIES.names()


def likelihood_family(name: str) -> LikelihoodFamily:
    """The registered family called ``name``.

    Raises
    ------
    SamplerError
        If no family has that name (lists the registered ones).
    """
    return _FAMILIES.get(name)


def family_by_code(code: int) -> LikelihoodFamily:
    """The family with code ``code`` (its registration order)."""
    return _FAMILIES.entries()[code]


def shape_parameters() -> tuple[tuple[ShapeParameter, str], ...]:
    """Every registered shape parameter with the name of its family."""
    return tuple((f.shape, f.name) for f in _FAMILIES.entries() if f.shape is not None)
