"""Measured data: the benchmark CSV format, per-size replica summaries (eq. 7), size
selection per protocol regime, synthetic data and the reuse of earlier design outputs."""
