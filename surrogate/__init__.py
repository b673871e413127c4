"""Surrogate models of any vector-valued function of a box of named parameters.

This layer knows nothing of MPI: sparse-grid designs, Legendre polynomial chaos,
leave-one-out errors, Sobol indices and design runs through a pluggable executor.
"""
