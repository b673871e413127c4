"""Surrogate models of any vector-valued function of a box of named parameters.

This layer knows nothing of MPI: sparse-grid designs, Legendre polynomial chaos,
leave-one-out errors, Sobol indices and design runs through a pluggable executor.
Plotting (:mod:`mpiuq.surrogate.plots`) and CSV files (:mod:`mpiuq.surrogate.chaos.tables`)
are edge modules, not imported here.

The error types are imported with the package; everything else (NumPy, SciPy,
chaospy, Dask behind it) on first use, so that importing a light module such as
:mod:`mpiuq.surrogate.budget` or :mod:`mpiuq.surrogate.errors` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mpiuq.surrogate.errors import (
    BudgetError,
    DesignMismatchError,
    DesignRunError,
    ExecutorConfigError,
    IncompleteDesignError,
    RankDeficiencyWarning,
    RankDeficientError,
    SimulatorRunError,
    StoreError,
    StoreWriteError,
    SurrogateInputError,
)

if TYPE_CHECKING:
    from mpiuq.surrogate.chaos.pce import PolynomialChaos, fit_pce
    from mpiuq.surrogate.design.box import ParameterBox
    from mpiuq.surrogate.design.design_run import (
        DesignProgress,
        design_status,
        evaluate_design,
        load_design_outputs,
        run_design,
    )
    from mpiuq.surrogate.design.designs import random_design, sparse_grid_design
    from mpiuq.surrogate.executors import (
        DaskExecutor,
        Executor,
        InProcessExecutor,
        ProcessExecutor,
        make_executor,
        map_ordered,
    )
    from mpiuq.surrogate.store.storage import load_pce, save_pce

#: Public names imported on first use, and the module of each.
_LAZY = {
    "ParameterBox": "design.box",
    "DesignProgress": "design.design_run",
    "design_status": "design.design_run",
    "evaluate_design": "design.design_run",
    "load_design_outputs": "design.design_run",
    "run_design": "design.design_run",
    "random_design": "design.designs",
    "sparse_grid_design": "design.designs",
    "DaskExecutor": "executors",
    "Executor": "executors",
    "InProcessExecutor": "executors",
    "ProcessExecutor": "executors",
    "make_executor": "executors",
    "map_ordered": "executors",
    "PolynomialChaos": "chaos.pce",
    "fit_pce": "chaos.pce",
    "load_pce": "store.storage",
    "save_pce": "store.storage",
}

__all__ = [
    "BudgetError",
    "DaskExecutor",
    "DesignMismatchError",
    "DesignProgress",
    "DesignRunError",
    "Executor",
    "ExecutorConfigError",
    "InProcessExecutor",
    "IncompleteDesignError",
    "ParameterBox",
    "PolynomialChaos",
    "ProcessExecutor",
    "RankDeficiencyWarning",
    "RankDeficientError",
    "SimulatorRunError",
    "StoreError",
    "StoreWriteError",
    "SurrogateInputError",
    "design_status",
    "evaluate_design",
    "fit_pce",
    "load_design_outputs",
    "load_pce",
    "make_executor",
    "map_ordered",
    "random_design",
    "run_design",
    "save_pce",
    "sparse_grid_design",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
