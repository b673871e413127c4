"""A box of named parameters and its affine map to the reference cube [-1, 1]^d."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mpiuq.surrogate.errors import SurrogateInputError


@dataclass(frozen=True, slots=True)
class ParameterBox:
    """Independent uniform ranges ``[lower_j, upper_j]`` of named parameters.

    Parameters
    ----------
    names : tuple of str
        Unique, non-empty parameter names (their order fixes the column order).
    lower, upper : numpy.ndarray
        Finite bounds in the parameters' own units, ``lower < upper`` element-wise.

    Raises
    ------
    SurrogateInputError
        If a name is empty or repeated, or a bound is non-finite or not increasing;
        the message names the parameter.

    Examples
    --------
    >>> box = ParameterBox.from_bounds({"latency_ns": (100.0, 300.0), "bw_GBps": (1.0, 3.0)})
    >>> box.to_unit([200.0, 3.0]).tolist()
    [0.0, 1.0]
    >>> box.from_unit([-1.0, 0.0]).tolist()
    [100.0, 2.0]
    """

    names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        names = tuple(self.names)
        if not names:
            raise SurrogateInputError("a parameter box needs at least one parameter, got none")
        for name in names:
            if not isinstance(name, str) or not name.strip():
                raise SurrogateInputError(
                    f"parameter names must be non-empty strings, got {name!r}"
                )
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise SurrogateInputError(f"parameter name {name!r} is repeated")
            seen.add(name)
        lower = np.array(self.lower, dtype=float).reshape(-1)
        upper = np.array(self.upper, dtype=float).reshape(-1)
        if lower.shape != (len(names),) or upper.shape != (len(names),):
            raise SurrogateInputError(
                f"expected {len(names)} lower and upper bounds for parameters {names}, "
                f"got {lower.size} and {upper.size}"
            )
        for name, lo, hi in zip(names, lower, upper, strict=True):
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise SurrogateInputError(
                    f"parameter {name!r}: bounds must be finite, got [{lo}, {hi}]"
                )
            if not lo < hi:
                raise SurrogateInputError(
                    f"parameter {name!r}: expected LOW < HIGH, got LOW={lo} HIGH={hi}"
                )
            if not math.isfinite(float(hi) - float(lo)):
                raise SurrogateInputError(
                    f"parameter {name!r}: range [{lo}, {hi}] is too wide: expected "
                    "HIGH - LOW to be a finite float (rescale the unit)"
                )
        lower.setflags(write=False)
        upper.setflags(write=False)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParameterBox):
            return NotImplemented
        return (
            self.names == other.names
            and np.array_equal(self.lower, other.lower)
            and np.array_equal(self.upper, other.upper)
        )

    def __hash__(self) -> int:
        return hash((self.names, self.lower.tobytes(), self.upper.tobytes()))

    @classmethod
    def from_bounds(cls, bounds: Mapping[str, tuple[float, float]]) -> ParameterBox:
        """Build a box from ``{name: (low, high)}`` (insertion order is kept)."""
        names = tuple(bounds)
        pairs = [bounds[n] for n in names]
        for name, pair in zip(names, pairs, strict=True):
            if len(pair) != 2:
                raise SurrogateInputError(
                    f"parameter {name!r}: expected a (low, high) pair, got {pair!r}"
                )
        return cls(
            names=names,
            lower=np.array([p[0] for p in pairs], dtype=float),
            upper=np.array([p[1] for p in pairs], dtype=float),
        )

    @property
    def dim(self) -> int:
        """Number of parameters."""
        return len(self.names)

    @property
    def half_width(self) -> np.ndarray:
        """``(upper - lower) / 2``: box units per unit of the reference cube."""
        return np.asarray((self.upper - self.lower) / 2.0)

    def bounds(self) -> dict[str, tuple[float, float]]:
        """Return ``{name: (low, high)}``, the inverse of :meth:`from_bounds`."""
        return {
            n: (float(lo), float(hi))
            for n, lo, hi in zip(self.names, self.lower, self.upper, strict=True)
        }

    def _check_points(self, x: ArrayLike) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if arr.ndim not in (1, 2) or arr.shape[-1] != self.dim:
            raise SurrogateInputError(
                f"expected points of shape (n, {self.dim}) or ({self.dim},) for parameters "
                f"{self.names}, got shape {arr.shape}"
            )
        return arr

    def to_unit(self, x: ArrayLike) -> np.ndarray:
        """Map points from the box to the reference cube ``[-1, 1]^dim``.

        Parameters
        ----------
        x : array_like, shape (n, dim) or (dim,)
            Points in the parameters' own units.

        Returns
        -------
        numpy.ndarray
            ``2 (x - lower) / (upper - lower) - 1``, same shape as ``x``.
        """
        arr = self._check_points(x)
        return np.asarray((arr - self.lower) / self.half_width - 1.0)

    def from_unit(self, u: ArrayLike) -> np.ndarray:
        """Map points from ``[-1, 1]^dim`` back to the box (inverse of :meth:`to_unit`)."""
        arr = self._check_points(u)
        return np.asarray(self.lower + (arr + 1.0) * self.half_width)

    def contains(self, x: ArrayLike, rtol: float = 1e-12) -> np.ndarray:
        """Boolean mask of the points inside the box (bounds widened by ``rtol`` widths)."""
        arr = self._check_points(x)
        slack = rtol * (self.upper - self.lower)
        inside = (arr >= self.lower - slack) & (arr <= self.upper + slack)
        return np.asarray(inside.all(axis=-1))


def box_from_names(names: Sequence[str], lower: ArrayLike, upper: ArrayLike) -> ParameterBox:
    """Build a :class:`ParameterBox` from parallel sequences (convenience for file readers)."""
    return ParameterBox(
        names=tuple(names),
        lower=np.asarray(lower, dtype=float),
        upper=np.asarray(upper, dtype=float),
    )
