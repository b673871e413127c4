"""Readers of MPI traces (DUMPI, OTF2, SimGrid TI) into one compact representation."""
