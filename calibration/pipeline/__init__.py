"""The campaign pipeline (:func:`.campaign.run_campaign`), its stages and variants, and
the run plans and budgets of mpiuq's own and external simulators."""
