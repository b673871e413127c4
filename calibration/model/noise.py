"""The noise model of a campaign's outputs: which likelihood family explains each output.

Every output ``i`` (one message size of one data set) has a data centre ``y_i`` (the
replicas' mean, median or trimmed mean, :func:`~mpiuq.calibration.data.observations.replica_summary`)
and a replica spread ``sigma_i``; the model predicts ``m_i = f_i(lambda) (1 + b_r)``
(:mod:`~mpiuq.calibration.model.discrepancy`) with a model-error variance ``d_i = (s_r f_i)^2``
and a surrogate error variance ``e_i`` (the chaos's LOO error, 0 for the simulator).
The data sets of a campaign choose their family (``[data] likelihood``) among the
registered ones (:mod:`~mpiuq.calibration.model.families.registry`): ``gaussian`` (eq. 7),
``student_t`` (one calibrated degrees-of-freedom parameter ``nu_<label>`` per data set)
and ``lognormal`` (multiplicative noise on the log replicas) are built in. A family's
shape parameters (``nu``) follow the discrepancy parameters in the parameter vector.

Positivity. Times and throughputs are positive, so the posterior predictive draws new
centres truncated to positive values (Gaussian, Student-t; ``positive = True``) or
log-normal ones, and its bands never go below zero. The *likelihood* is not truncated:
renormalising by ``Phi(m / sd)`` is nil where the model is many sd above zero, and where
it is not (a surrogate predicting a negative time in a corner of the prior) it would
reward the corner (a truncated normal with a negative mean still puts its mass near
zero), which made the stock job's surrogate MCMC wander there (importance k-hat 0.95
against 0.37 without it on a synthetic recovery).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.model.families.family import FamilyOutputs
from mpiuq.calibration.model.families.gaussian import gaussian_logpdf
from mpiuq.calibration.model.families.registry import (
    family_by_code,
    likelihood_family,
    likelihood_names,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
#: Code of the Gaussian family (the fast path when every output is Gaussian).
GAUSSIAN = likelihood_names().index("gaussian")


@dataclass(frozen=True, slots=True)
class NoiseModel:
    """Per-output likelihood family and the families' shape parameters (Student-t's ``nu``).

    Attributes
    ----------
    family
        Family code of every output (its index in
        :func:`~mpiuq.calibration.model.families.registry.likelihood_names`), shape (n_out,).
    nu_index
        Index into ``nu_names`` of the shape parameter of every output whose family has
        one (Student-t's degrees of freedom; -1 for the others), shape (n_out,).
    nu_names
        Names of the shape parameters (``<shape>_<label>``: ``nu_<label>``).
    nu_lower, nu_upper
        Their uniform prior bounds.
    log_mean, log_var
        Centre and squared spread of the log replicas of every output (used by
        log-normal outputs), shape (n_out,).
    positive
        The data are positive: Gaussian and Student-t predictive draws are truncated to
        positive values (a campaign's times and throughputs); False for generic models.
    """

    family: tuple[int, ...] = ()
    nu_index: tuple[int, ...] = ()
    nu_names: tuple[str, ...] = ()
    nu_lower: tuple[float, ...] = ()
    nu_upper: tuple[float, ...] = ()
    log_mean: tuple[float, ...] = ()
    log_var: tuple[float, ...] = ()
    positive: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the noise parameters."""
        return self.nu_names

    @property
    def dim(self) -> int:
        """Number of noise parameters."""
        return len(self.nu_names)

    @property
    def lower(self) -> FloatArray:
        """Lower prior bounds, shape (dim,)."""
        return np.asarray(self.nu_lower, dtype=np.float64)

    @property
    def upper(self) -> FloatArray:
        """Upper prior bounds, shape (dim,)."""
        return np.asarray(self.nu_upper, dtype=np.float64)

    @property
    def nominal(self) -> FloatArray:
        """Prior midpoints, shape (dim,)."""
        return (self.lower + self.upper) / 2.0

    @property
    def all_gaussian(self) -> bool:
        """Whether every output is Gaussian (the fast path)."""
        return all(f == GAUSSIAN for f in self.family)

    def outputs_of(self, k: int) -> tuple[int, ...]:
        """Outputs whose likelihood noise parameter ``k`` enters."""
        return tuple(i for i, j in enumerate(self.nu_index) if j == k)

    def loglik(
        self,
        mean: FloatArray,
        model_var: FloatArray,
        f: FloatArray,
        data_mean: FloatArray,
        data_var: FloatArray,
        surrogate_var: FloatArray,
        nu: FloatArray,
        outputs: tuple[int, ...],
    ) -> FloatArray:
        """Pointwise log-likelihood of the selected outputs, shape (n, n_sel).

        Parameters
        ----------
        mean, model_var
            Model mean ``m`` and discrepancy variance ``d`` of the selected outputs,
            shape (n, n_sel).
        f
            Model outputs of the selected outputs (for relative errors), shape (n, n_sel).
        data_mean, data_var, surrogate_var
            Data centre ``y``, replica variance ``sigma^2`` and surrogate variance ``e``
            of the selected outputs, shape (n_sel,).
        nu
            Noise parameters, shape (n, dim).
        outputs
            Indices of the selected outputs.
        """
        var = data_var + surrogate_var + model_var
        if not self.family or self.all_gaussian:
            return gaussian_logpdf(data_mean, mean, var)
        sel = list(outputs)
        fam = np.asarray(self.family, dtype=np.int64)[sel]
        var = np.broadcast_to(var, mean.shape)
        log_mean = np.asarray(self.log_mean, dtype=np.float64)[sel]
        log_var = np.asarray(self.log_var, dtype=np.float64)[sel]
        shape_index = np.asarray(self.nu_index, dtype=np.int64)[sel]
        out = np.empty_like(mean)
        for code in np.unique(fam):
            family = family_by_code(int(code))
            c = fam == code
            o = _outputs(c, family.shape is not None, mean, var, f, model_var, surrogate_var,
                         log_var, nu, shape_index)  # fmt: skip
            out[:, c] = family.logpdf(log_mean[c] if family.log_scale else data_mean[c], o)
        return out

    def draw(
        self,
        mean: FloatArray,
        model_var: FloatArray,
        f: FloatArray,
        data_var: FloatArray,
        surrogate_var: FloatArray,
        nu: FloatArray,
        rng: np.random.Generator,
    ) -> FloatArray:
        """Replicated data centres of every output at parameter draws, shape (n, n_out).

        Gaussian and Student-t draws are truncated to positive values when ``positive``;
        log-normal draws are positive by construction.
        """
        var = np.broadcast_to(data_var + surrogate_var + model_var, mean.shape)
        u = rng.random(mean.shape)
        fam = (
            np.asarray(self.family, dtype=np.int64)
            if self.family
            else np.zeros(mean.shape[1], dtype=np.int64)
        )
        log_var = np.asarray(self.log_var, dtype=np.float64)
        shape_index = np.asarray(self.nu_index, dtype=np.int64)
        out = np.empty_like(mean)
        for code in np.unique(fam):
            family = family_by_code(int(code))
            c = fam == code
            o = _outputs(c, family.shape is not None, mean, var, f, model_var, surrogate_var,
                         log_var if log_var.size else np.zeros(c.size), nu, shape_index)  # fmt: skip
            out[:, c] = family.draw(o, u[:, c], self.positive)
        return out


def _outputs(
    c: npt.NDArray[np.bool_],
    shaped: bool,
    mean: FloatArray,
    var: FloatArray,
    f: FloatArray,
    model_var: FloatArray,
    surrogate_var: FloatArray,
    log_var: FloatArray,
    nu: FloatArray,
    shape_index: IntArray,
) -> FamilyOutputs:
    """What the family of the outputs selected by ``c`` sees of them."""
    return FamilyOutputs(
        mean[:, c],
        var[:, c],
        f[:, c],
        model_var[:, c],
        surrogate_var[c],
        log_var[c],
        nu[:, shape_index[c]] if shaped else None,
    )


def noise_model(
    families: tuple[str, ...],
    dataset: npt.ArrayLike,
    labels: tuple[str, ...],
    nu_priors: tuple[tuple[float, float], ...],
    log_mean: npt.ArrayLike,
    log_var: npt.ArrayLike,
    positive: bool = True,
) -> NoiseModel:
    """The noise model of a campaign's data sets (positive observables by default).

    Parameters
    ----------
    families
        Likelihood family of every data set (a registered name).
    dataset
        Data set index of every output.
    labels
        Label of every data set (names ``<shape>_<label>``, ``nu_<label>``).
    nu_priors
        Prior ``(low, high)`` of every data set's shape parameter (used by families with
        one: Student-t's degrees of freedom).
    log_mean, log_var
        Log-scale centre and squared spread of every output.
    positive
        Truncate Gaussian and Student-t predictive draws to positive values.

    Examples
    --------
    >>> m = noise_model(("gaussian", "student_t"), [0, 1, 1], ("a", "b"), ((1, 30), (2, 20)),
    ...                 [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    >>> m.names, m.family, m.nu_index
    (('nu_b',), (0, 1, 1), (-1, 0, 0))
    """
    entries = [likelihood_family(name) for name in families]  # unknown names raise
    codes = likelihood_names()
    ds = np.asarray(dataset, dtype=np.int64)
    shapes = {k: fam.shape for k, fam in enumerate(entries) if fam.shape is not None}
    shaped = list(shapes)
    index = {k: j for j, k in enumerate(shaped)}
    return NoiseModel(
        family=tuple(codes.index(families[d]) for d in ds),
        nu_index=tuple(index.get(int(d), -1) for d in ds),
        nu_names=tuple(f"{shapes[k].name}_{labels[k]}" for k in shaped),
        nu_lower=tuple(float(nu_priors[k][0]) for k in shaped),
        nu_upper=tuple(float(nu_priors[k][1]) for k in shaped),
        log_mean=tuple(float(v) for v in np.asarray(log_mean, dtype=np.float64)),
        log_var=tuple(float(v) for v in np.asarray(log_var, dtype=np.float64)),
        positive=positive,
    )
