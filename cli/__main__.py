"""Allow ``python -m mpiuq``."""

from mpiuq.console import run

run()
