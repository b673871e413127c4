"""Likelihood families of the per-size data summaries, one registered entry each
(:mod:`~mpiuq.calibration.model.families.registry`): Gaussian, Student-t and log-normal built in."""
