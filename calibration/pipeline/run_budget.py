"""Every run of an external simulator: through the executor, checkpointed, counted.

:class:`SimulatorRuns` is the campaign's only door to a user's simulator. It behaves as
the batch model ``f(X) -> Y`` the stages call (design, refinement, importance weights,
moves), and every call

* runs only the distinct parameter sets of the batch (MCMC draws repeat) that no earlier
  call ran (their outputs are remembered: a set runs once per campaign),
* is a design run (:func:`~mpiuq.surrogate.design.design_run.run_design`) into its own HDF5
  checkpoint ``runs/<call>-<stage>.h5`` (the global design: ``design.h5``), on the
  executor it was given (in process, local processes or Dask), with ``keep_going``: a
  failed run is reported after the others are saved, so nothing is lost and a second
  attempt runs only what is missing,
* is counted against ``max_simulator_runs`` per stage *before* it runs
  (:class:`~mpiuq.calibration.errors.RunBudgetError` if it does not fit).

The stages' parameter sets are deterministic functions of the campaign's seed and of
earlier outputs, so a campaign started again after a kill repeats the same calls and
finds their results in the checkpoints: it resumes where it stopped.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import RunBudgetError
from mpiuq.calibration.model.joint_model import NamedModel
from mpiuq.surrogate.design.design_run import DesignProgress, load_design_outputs, run_design
from mpiuq.surrogate.executors import Executor

FloatArray = npt.NDArray[np.float64]

#: Folder of the per-call checkpoints, inside the campaign's results folder.
RUNS_DIR = "runs"


@dataclass(frozen=True, slots=True)
class StageRuns:
    """Runs of one stage.

    Attributes
    ----------
    stage
        ``"design"``, ``"refinement"``, ``"exact"``, ...
    runs
        Parameter sets the stage ran (each counts once against the budget).
    computed
        Of those, the ones evaluated by this process (the rest came from checkpoints).
    calls
        Batches (checkpoints) of the stage.
    """

    stage: str
    runs: int
    computed: int
    calls: int


class SimulatorRuns:
    """A budgeted, checkpointed batch model around an external simulator.

    Parameters
    ----------
    model
        The picklable simulator (outputs in the campaign's output order).
    folder
        The campaign's results folder (checkpoints go to ``<folder>/runs/``).
    executor
        Where runs execute; the caller owns it.
    budget
        ``max_simulator_runs`` (None: no limit).
    batch_size
        Parameter sets per executor task.
    on_progress
        Receives ``(stage, progress)`` after every finished batch.
    """

    def __init__(
        self,
        model: NamedModel,
        folder: Path,
        executor: Executor | None,
        budget: int | None,
        batch_size: int = 1,
        on_progress: Callable[[str, DesignProgress], None] | None = None,
    ) -> None:
        self.model = model
        self.folder = Path(folder)
        self.executor = executor
        self.budget = budget
        self.batch_size = batch_size
        self.on_progress = on_progress
        self.stage = "design"
        # fixed for the whole campaign: a model edited mid-run changes no stage's identity
        self._model_id = model.model_id
        self._calls = 0
        self._stages: dict[str, StageRuns] = {}
        self._memory: dict[bytes, FloatArray] = {}

    @property
    def output_names(self) -> tuple[str, ...]:
        """The simulator's output names."""
        return self.model.output_names

    @property
    def model_id(self) -> str:
        """The simulator's fingerprint (taken when the campaign started)."""
        return self._model_id

    @property
    def spent(self) -> int:
        """Runs counted so far."""
        return sum(s.runs for s in self._stages.values())

    def remaining(self) -> int | None:
        """Runs left in the budget (None: no limit)."""
        return None if self.budget is None else self.budget - self.spent

    def stages(self) -> tuple[StageRuns, ...]:
        """Runs per stage, in the order the stages started."""
        return tuple(self._stages.values())

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs at the rows of ``x`` (counted against the current :attr:`stage`)."""
        return self.run(x, self.stage)

    def run(self, x: npt.ArrayLike, stage: str, store: Path | None = None) -> FloatArray:
        """Run the simulator at the distinct rows of ``x``; outputs for every row.

        Parameters
        ----------
        x
            Parameter sets, shape (n, n_params).
        stage
            Stage the runs are counted against.
        store
            Checkpoint file (default ``runs/<call>-<stage>.h5``).

        Raises
        ------
        RunBudgetError
            If the distinct sets do not fit in what the budget leaves (nothing runs).
        SimulatorRunError
            If runs failed (after the others were saved).
        """
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if xs.shape[0] == 0:
            return np.empty((0, len(self.output_names)))
        distinct = np.unique(xs, axis=0)
        unique = np.array([row for row in distinct if row.tobytes() not in self._memory])
        n = unique.shape[0]
        if n == 0:
            return self._recall(xs)
        left = self.remaining()
        if left is not None and n > left:
            spent = ", ".join(f"{s.stage} {s.runs}" for s in self._stages.values()) or "none"
            raise RunBudgetError(
                f"the {stage} stage needs {n} simulator runs but max_simulator_runs = "
                f"{self.budget} leaves {left} (spent: {spent}): raise [simulator] "
                "max_simulator_runs or lower the stage's settings"
            )
        self._calls += 1
        if store is None:
            store = self.folder / RUNS_DIR / f"{self._calls:04d}-{stage.replace(' ', '_')}.h5"
        store.parent.mkdir(parents=True, exist_ok=True)
        computed = 0
        for p in run_design(
            self.model,
            unique,
            store,
            executor=self.executor,
            chunk_size=self.batch_size,
            output_names=self.output_names,
            model_id=self.model_id,
            keep_going=True,
        ):
            computed = p.n_computed
            if self.on_progress is not None:
                self.on_progress(stage, p)
        _, y, _ = load_design_outputs(store)
        for row, out in zip(unique, np.asarray(y, dtype=np.float64), strict=True):
            self._memory[row.tobytes()] = out
        before = self._stages.get(stage, StageRuns(stage, 0, 0, 0))
        self._stages[stage] = StageRuns(
            stage, before.runs + n, before.computed + computed, before.calls + 1
        )
        return self._recall(xs)

    def _recall(self, xs: FloatArray) -> FloatArray:
        """The remembered outputs of every row of ``xs``."""
        return np.stack([self._memory[row.tobytes()] for row in xs])


def discard_runs(folder: Path) -> None:
    """Remove the run checkpoints of a results folder (``runs/``); the next run repeats them."""
    shutil.rmtree(Path(folder) / RUNS_DIR, ignore_errors=True)
