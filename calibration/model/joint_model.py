"""Several batch models over the same parameters as one: the outputs of all data sets.

A campaign with several data tables (``[[data]]``) calibrates one set of parameters
against all of them; its model is the concatenation of one benchmark model per data
table (a ping-pong's half round trips, then a streaming benchmark's throughputs, ...).
Designs, surrogates, Sobol grouping and likelihood then see one output vector, so a
group of eq. (9) can span outputs of several data sets.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from mpiuq.simulator.benchmarks.run import SimulationWork

FloatArray = npt.NDArray[np.float64]


class NamedModel(Protocol):
    """A batch model ``f(X) -> Y`` with output names and a fingerprint (``BenchmarkModel``)."""

    @property
    def output_names(self) -> tuple[str, ...]:
        """One name per output."""
        ...

    @property
    def model_id(self) -> str:
        """Fingerprint of everything that defines the outputs."""
        ...

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs at the rows of ``x``, shape (n, n_out)."""
        ...


@dataclass(frozen=True)
class JointModel:
    """The outputs of ``parts`` side by side; output names are prefixed ``"<label>:"``.

    Picklable (for worker processes) when its parts are.

    Examples
    --------
    >>> from mpiuq.simulator.benchmarks.run import BenchmarkModel
    >>> a = BenchmarkModel("pingpong", (1, 4096), ("post_header_delay_us",))
    >>> b = BenchmarkModel("stream", (65536,), ("post_header_delay_us",), observable="throughput_MBps")
    >>> m = JointModel((a, b), ("pp", "bw"))
    >>> m.output_names
    ('pp:pingpong_time_us@1B', 'pp:pingpong_time_us@4096B', 'bw:stream_throughput_MBps@65536B')
    >>> m([[0.4], [0.5]]).shape
    (2, 3)
    """

    parts: tuple[NamedModel, ...]
    labels: tuple[str, ...]

    @property
    def output_names(self) -> tuple[str, ...]:
        """``"<label>:<part output name>"`` for every output of every part."""
        return tuple(
            f"{label}:{name}"
            for part, label in zip(self.parts, self.labels, strict=True)
            for name in part.output_names
        )

    @property
    def model_id(self) -> str:
        """Fingerprint of the parts and their labels."""
        text = repr(
            tuple((p.model_id, lab) for p, lab in zip(self.parts, self.labels, strict=True))
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs of every part at the rows of ``x``, concatenated, shape (n, n_out)."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        return np.concatenate([np.asarray(p(xs), dtype=np.float64) for p in self.parts], axis=1)


def model_work(model: object, x: npt.ArrayLike) -> SimulationWork | None:
    """The built-in simulator's counted work of evaluating ``model`` at the rows of ``x``
    (:meth:`BenchmarkModel.work`, summed over the parts of a :class:`JointModel`), or None
    for a model that does not count its work."""
    from mpiuq.simulator.benchmarks.run import SimulationWork  # the kernel loads where it runs

    parts = model.parts if isinstance(model, JointModel) else (model,)
    total = SimulationWork(0, 0, 0)
    for part in parts:
        count = getattr(part, "work", None)
        if not callable(count):
            return None
        total = total + count(x)
    return total


def joint(parts: list[NamedModel], labels: list[str]) -> NamedModel:
    """One part as itself (its names and fingerprint unchanged), several as a :class:`JointModel`."""
    if len(parts) == 1:
        return parts[0]
    return JointModel(tuple(parts), tuple(labels))
