"""The Legendre polynomial chaos: its basis, least-squares fit with LOO error, Sobol
indices and the coefficient tables."""
