"""The docs' tables of the registries other than the network models' (generated, checked in).

``docs/extending-simulator.md`` holds one table per registry between
``<!-- BEGIN <name> -->`` and ``<!-- END <name> -->`` markers; ``python -m
mpiuq.generate_networks`` rewrites them with the network-model table
(:func:`mpiuq.simulator.networks.generate.generated_files`), and its ``--check`` and the
registry tests fail while one is out of date.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mpiuq.simulator.collectives.registry import algorithm_table
from mpiuq.simulator.topologies.registry import topology_table

__all__ = ["REGISTRY_TABLES", "with_registry_tables"]

#: Marker name -> the function writing that registry's table.
REGISTRY_TABLES: dict[str, Callable[[], str]] = {
    "topologies": topology_table,
    "collective algorithms": algorithm_table,
}


def with_registry_tables(text: str) -> str:
    """``text`` with every table of :data:`REGISTRY_TABLES` whose markers it holds
    rewritten from its registry."""
    for name, table in REGISTRY_TABLES.items():
        begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
        block = f"{begin}\n\n{table()}\n\n{end}"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
        text = pattern.sub(lambda _, block=block: block, text, count=1)  # type: ignore[misc]
    return text
