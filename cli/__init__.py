"""mpiuq: Bayesian calibration and uncertainty quantification of an MPI simulator.

The distribution has three layers, mapped into one import namespace:

* :mod:`mpiuq.simulator` -- deterministic discrete-event simulator of MPI ranks;
* :mod:`mpiuq.surrogate` -- sparse-grid designs and polynomial-chaos surrogates;
* :mod:`mpiuq.calibration` -- Bayesian calibration against measured benchmarks.

The modules of this root package (folder ``cli/``) are the command-line edge: the
only code that prints, plots or writes result files. Importing it has no side effects.
"""

__version__ = "0.1.0"
