"""Surrogate models of any vector-valued function of a box of named parameters.

This layer knows nothing of MPI: sparse-grid designs, Legendre polynomial chaos,
leave-one-out errors, Sobol indices and design runs through a pluggable executor.
Plotting (:mod:`mpiuq.surrogate.plots`) and CSV files (:mod:`mpiuq.surrogate.tables`)
are edge modules, not imported here.
"""

from mpiuq.surrogate.box import ParameterBox
from mpiuq.surrogate.design_run import (
    DesignProgress,
    design_status,
    evaluate_design,
    load_design_outputs,
    run_design,
)
from mpiuq.surrogate.designs import random_design, sparse_grid_design
from mpiuq.surrogate.errors import (
    BudgetError,
    DesignMismatchError,
    DesignRunError,
    ExecutorConfigError,
    IncompleteDesignError,
    RankDeficiencyWarning,
    RankDeficientError,
    StoreError,
    StoreWriteError,
    SurrogateInputError,
)
from mpiuq.surrogate.executors import (
    DaskExecutor,
    Executor,
    InProcessExecutor,
    ProcessExecutor,
    make_executor,
    map_ordered,
)
from mpiuq.surrogate.pce import PolynomialChaos, fit_pce
from mpiuq.surrogate.storage import load_pce, save_pce

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
