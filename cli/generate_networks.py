"""Regenerate what the network-model registry derives: ``python -m mpiuq.generate_networks``.

Writes the network-model block of ``simulator/codes.py``, the compiled dispatch
``simulator/networks/_dispatch.py`` and the models' table of
``docs/extending-simulator.md`` from the registry entries of ``simulator/networks/*.py``
(:mod:`mpiuq.simulator.networks.generate`), and that page's topology and
collective-algorithm tables from their registries (:mod:`mpiuq.simulator.registry_tables`). Run it after adding, removing or changing a
network model. ``--check`` writes nothing and exits 1 if a file is out of date;
``--module NAME`` also imports a model module outside ``simulator/networks/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m mpiuq.generate_networks", description=__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument(
        "--module", action="append", default=[], help="also import this model module"
    )
    args = parser.parse_args(argv)
    from mpiuq.simulator import codes
    from mpiuq.simulator.networks.generate import collect, generated_files, stale_files, write_files

    simulator_dir = Path(codes.__file__).resolve().parent
    files = generated_files(collect(args.module), simulator_dir, simulator_dir.parent / "docs")
    if args.check:
        stale = stale_files(files)
        for path in stale:
            print(f"out of date: {path} (run python -m mpiuq.generate_networks)")
        return 1 if stale else 0
    for path in write_files(files):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
