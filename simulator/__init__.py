"""Deterministic discrete-event simulator of MPI ranks and their point-to-point protocols."""
