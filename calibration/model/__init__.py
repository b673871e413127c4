"""The statistical model: likelihood families (:mod:`.families`) and the noise model,
the per-regime discrepancy, the joint model over several data sets, the log-posterior
and the simulator target, and the transfer of discrepancy terms to new predictions."""
