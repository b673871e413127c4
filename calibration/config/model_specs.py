"""What a campaign calibrates: the simulator and its fixed values, the calibrated
parameters, the data tables and the model variants, as validated frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.external_spec import ExternalSpec
from mpiuq.simulator.parameters import SimParams, parameter_names
from mpiuq.simulator.regimes import Regime


@dataclass(frozen=True, slots=True)
class SimulatorSpec:
    """Which benchmark the simulator runs and which parameters it holds fixed.

    Attributes
    ----------
    benchmark
        ``"pingpong"`` or ``"stream"``.
    window
        Messages in flight of the streaming benchmark (ignored for ping-pong).
    fixed
        ``(name, value)`` pairs of fixed simulator parameters, in file order.
    regimes
        The protocol regimes of ``[[simulator.regimes]]`` (empty: the default table of
        ``small_max_bytes`` and ``eager_max_bytes``); a calibrated per-regime value holds
        its prior midpoint here.
    regime_priors
        ``(name, low, high)`` of the calibrated per-regime parameters
        (``regime<k>_<field>``), in file order.
    external
        A user's simulator (``callable`` or ``command``) instead of mpiuq's own
        (:mod:`~mpiuq.calibration.config.external_spec`); ``benchmark`` is then ``"external"``.
    """

    benchmark: str = "pingpong"
    window: int = 64
    fixed: tuple[tuple[str, float | int], ...] = ()
    regimes: tuple[Regime, ...] = ()
    regime_priors: tuple[tuple[str, float, float], ...] = ()
    external: ExternalSpec | None = None

    def base_params(self) -> SimParams:
        """Simulator parameters with the fixed values and the regimes applied on the defaults."""
        values: dict[str, Any] = dict(self.fixed)
        if self.regimes:
            values["regimes"] = self.regimes
        return SimParams.from_mapping(values)

    def thresholds(self) -> tuple[int, ...]:
        """Largest message size of every regime but the last, ascending."""
        if self.external is not None:
            return self.external.regime_max_bytes
        return self.base_params().thresholds()

    def regime_of(self, size_bytes: int) -> str:
        """Name of the regime (protocol, or external regime) of a message size."""
        if self.external is not None:
            return self.external.regime_of(size_bytes)
        return self.base_params().protocol_of(size_bytes)


@dataclass(frozen=True, slots=True)
class ParameterSpec:
    """Calibrated parameters with their uniform prior ranges (eq. 6) and nominal values.

    Attributes
    ----------
    names
        Canonical simulator names, in file order.
    lower, upper
        Prior bounds, in the parameters' own units (see ``UNITS``).
    nominal
        Value used for a parameter outside the group being sampled (eq. 9);
        the prior midpoint unless configured in ``[calibration.nominal]``.
    """

    names: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    nominal: tuple[float, ...]

    @property
    def dim(self) -> int:
        """Number of calibrated parameters."""
        return len(self.names)


@dataclass(frozen=True, slots=True)
class DataSpec:
    """Where the measurements are and how replicas are reduced (eq. 7).

    Attributes
    ----------
    path
        Path of the CSV (``run,msg_size_bytes,value,unit,benchmark``): relative to the
        campaign file in the file, absolute once loaded.
    benchmark
        Benchmark label selected in the CSV, e.g. ``"pingpong_half_rtt"``.
    sizes
        Explicit message sizes in bytes, or None when ``sizes_per_protocol`` is used.
    sizes_per_protocol
        Number of log-spaced sizes per protocol regime, or None.
    observable
        ``"time_us"`` or ``"throughput_MBps"`` (MB/s = bytes / us).
    drop_warmup
        Drop the first iteration of every burst (``run % burst_length == 0``).
    aggregate_bursts
        Replace every burst of ``burst_length`` consecutive runs by its mean.
    burst_length
        Iterations per burst (10 for the SimGrid calibration data).
    sd_floor_rel
        Floor of the replica standard deviation, relative to the mean; 0 = no floor.
    min_size_bytes, max_size_bytes
        Range of sizes considered by ``sizes_per_protocol`` (inclusive).
    label
        Name of the data set in output names and reports (unique within a campaign).
    model
        Simulator benchmark that produces the observable (one of
        :data:`~mpiuq.simulator.benchmarks.kinds.BENCHMARKS`).
    window
        Messages per window of the ``stream`` benchmark.
    likelihood
        Error model of the per-size summaries, a registered likelihood family
        (:mod:`~mpiuq.calibration.model.families.registry`): ``"gaussian"``, ``"student_t"``,
        ``"lognormal"`` built in.
    summary
        Replica summary: ``"mean"`` (sd with ddof=1), ``"median"`` (sd = 1.4826 MAD) or
        ``"trimmed_mean"`` (winsorized sd / (1 - 2 trim)).
    trim
        Fraction trimmed from each end by ``"trimmed_mean"``.
    nu
        Uniform prior ``(low, high)`` of the Student-t degrees of freedom (the shape
        parameter of the table's family, if it has one).
    """

    path: Path
    benchmark: str
    sizes: tuple[int, ...] | None = None
    sizes_per_protocol: int | None = None
    observable: str = "time_us"
    drop_warmup: bool = False
    aggregate_bursts: bool = False
    burst_length: int = 10
    sd_floor_rel: float = 0.0
    min_size_bytes: int = 1
    max_size_bytes: int = 2**62
    label: str = "data"
    model: str = "pingpong"
    window: int = 64
    likelihood: str = "gaussian"
    summary: str = "mean"
    trim: float = 0.2
    nu: tuple[float, float] = (1.0, 30.0)


@dataclass(frozen=True, slots=True)
class VariantSpec:
    """A model variant compared with the campaign's model by PSIS-LOO (``[[variants]]``).

    The variant is the campaign with some fixed simulator values changed (a discrete
    parameter such as a protocol threshold ``regime1_max_bytes``, a whole different value
    of a fixed parameter); it is calibrated on the same data (same sizes) and scored on
    the same pointwise log-likelihood.

    Attributes
    ----------
    name
        Label of the variant in the comparison.
    fixed
        ``(name, value)`` simulator values that differ from the campaign's.
    """

    name: str
    fixed: tuple[tuple[str, float | int | str], ...]

    def simulator(self, base: SimulatorSpec) -> SimulatorSpec:
        """The campaign's simulator with this variant's values."""

        params = SimParams.from_mapping(dict(self.fixed), base=base.base_params())
        scalars = set(parameter_names())
        fixed = dict(base.fixed) | {
            k: v for k, v in self.fixed if k in scalars and not isinstance(v, str)
        }
        if params.regimes:
            fixed = {
                k: v for k, v in fixed.items() if k not in ("small_max_bytes", "eager_max_bytes")
            }
        return replace(base, fixed=tuple(fixed.items()), regimes=params.regimes)
