"""Allow ``python -m mpiuq``."""

from mpiuq.main import main

raise SystemExit(main())
