"""Bayesian calibration of the simulator against measured benchmark data."""
