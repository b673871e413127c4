"""Designs of the surrogate: the parameter box, Clenshaw-Curtis sparse grids and random
designs, and their resumable runs (checkpointed in an HDF5 design store)."""
