"""Allow ``python -m mpiuq``."""

from mpiuq.main import run

run()
