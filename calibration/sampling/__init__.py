"""Sampling the posterior: the emcee ensembles and their moves, Sobol grouping, the
surrogate posterior and its local refinement, the posterior path (direct MCMC on the
simulator or importance weights and resample-move), MAP search, diagnostics and
exchangeable-parameter symmetry."""
