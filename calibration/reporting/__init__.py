"""What a campaign reports: estimates and summaries, predictive and predictions,
propagation over posterior draws, model comparison, identifiability, bounds, the
result files, the summary and the calibrated values handed to replay."""
