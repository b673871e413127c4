"""The honesty checks of a calibration and the held-out validation (series and sizes
left out of the fit, leave-one-series-out)."""
