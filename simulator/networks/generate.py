"""What the network-model registry generates: the codes block, the compiled dispatch, the docs' table.

numba cannot loop over a Python registry inside a compiled loop, and the command line
must list the model names without importing numba; so three checked-in texts are
written from the registry entries (:mod:`.registry`) instead of by hand:

* the block between ``# BEGIN GENERATED network models`` and ``# END GENERATED network
  models`` of ``simulator/codes.py``: ``NETWORK_MODELS`` (a model's integer code is its
  position), ``PLATFORM_MODELS``, ``NETWORK_COST_ORDER`` and ``NETWORK_MODULES``;
* ``simulator/networks/_dispatch.py``: :func:`start_transfer`, the kernel's one call into
  the models' compiled units, an ``if`` per model on ``net.kind``;
* the table between ``<!-- BEGIN network models -->`` and ``<!-- END network models -->``
  of ``docs/extending-simulator.md`` (when the docs are there), with the other
  registries' tables of that page (:mod:`mpiuq.simulator.registry_tables`).

Codes stay stable: the models of the current ``NETWORK_MODELS`` keep their positions, a
new model is appended (new ones in name order), a removed one's later models move up.
``python -m mpiuq.generate_networks`` writes them; ``--check`` (and a unit test) fails
when a checked-in text differs from what the registry generates.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from mpiuq.simulator import codes
from mpiuq.simulator.networks.registry import (
    GENERATE_COMMAND,
    NETWORK_REGISTRY,
    NetworkModelEntry,
)
from mpiuq.simulator.registry_tables import with_registry_tables

__all__ = [
    "codes_block",
    "collect",
    "dispatch_source",
    "docs_table",
    "generated_files",
    "stale_files",
    "write_files",
]

#: Markers of the generated block of ``codes.py`` and of the docs' table.
CODES_BEGIN = "# BEGIN GENERATED network models"
CODES_END = "# END GENERATED network models"
DOCS_BEGIN = "<!-- BEGIN network models -->"
DOCS_END = "<!-- END network models -->"

#: Modules of the networks package that register no model (not imported by :func:`collect`).
_NOT_MODELS = ("generate",)


def collect(extra_modules: Iterable[str] = ()) -> list[NetworkModelEntry]:
    """Import every module of ``simulator/networks/`` (and ``extra_modules``) and return the
    registered entries in code order (see the module docstring)."""
    from mpiuq.simulator import networks

    for info in pkgutil.iter_modules(networks.__path__):
        if not info.name.startswith("_") and info.name not in _NOT_MODELS:
            importlib.import_module(f"{networks.__name__}.{info.name}")
    for module in extra_modules:
        importlib.import_module(module)
    entries = {e.name: e for e in NETWORK_REGISTRY}
    kept = [name for name in codes.NETWORK_MODELS if name in entries]
    new = sorted(set(entries) - set(kept))
    return [entries[name] for name in (*kept, *new)]


def _tuple(names: Sequence[str], indent: str = "") -> str:
    if len(", ".join(f'"{n}"' for n in names)) < 60:
        inner = ", ".join(f'"{n}"' for n in names)
        return f"({inner}{',' if len(names) == 1 else ''})"
    lines = "".join(f'{indent}    "{n}",\n' for n in names)
    return f"(\n{lines}{indent})"


def codes_block(entries: Sequence[NetworkModelEntry]) -> str:
    """The generated block of ``codes.py`` (markers included)."""
    by_cost = sorted(entries, key=lambda e: (e.cost_rank, e.name))
    names = [e.name for e in entries]
    platform = [e.name for e in by_cost if e.on_platform]
    modules = [e.model.__module__ for e in entries]
    return "\n".join(
        [
            f"{CODES_BEGIN}: `{GENERATE_COMMAND}` writes this",
            "# block from the registry entries of simulator/networks/*.py; do not edit it by hand.",
            "#: Registry names of the network models, in code order (a model's code is its position).",
            f"NETWORK_MODELS: tuple[str, ...] = {_tuple(names)}",
            "#: Network models that run on a SimGrid platform file (its cluster is a flow network).",
            f"PLATFORM_MODELS: tuple[str, ...] = {_tuple(platform)}",
            "#: Models in the order a replay starts several at once (the costliest first).",
            f"NETWORK_COST_ORDER: tuple[str, ...] = {_tuple([e.name for e in by_cost])}",
            "#: Module registering each model, in code order (imported by ``mpiuq.simulator.networks``).",
            f"NETWORK_MODULES: tuple[str, ...] = {_tuple(modules)}",
            CODES_END,
        ]
    )


def dispatch_source(entries: Sequence[NetworkModelEntry]) -> str:
    """Source of ``networks/_dispatch.py``: :func:`start_transfer` over the entries' units.

    The units are inlined into the event loop (``inline="always"``); a model with
    ``kernel_events`` (the flow network) starts its transfers in the kernel before this
    call, and reaches it only for ranks on one node. The last unit is the ``else``
    branch (every branch returns a float; ``kind`` is one of the generated codes).
    """
    units = [(i, e) for i, e in enumerate(entries) if e.start is not None]
    if not units:
        raise ValueError("no network model has a compiled start unit")
    imports = sorted(
        [
            "from mpiuq.simulator.runtime.jit import njit",
            *(
                f"from {e.start.py_func.__module__} import {e.start.py_func.__name__} as _start_{i}"
                for i, e in units
            ),
        ]
    )
    lines = [
        '"""The kernel\'s one call into the network models\' compiled units (generated).',
        "",
        f"Written by `{GENERATE_COMMAND}` from the network-model registry",
        "(``mpiuq.simulator.networks.registry``); do not edit it by hand: a unit test fails",
        "when it differs from what the registry generates.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        *imports,
        "",
        "",
        '@njit(inline="always", error_model="numpy")',
        "def start_transfer(t, src, dst, nbytes, flow, net, state, rates):  # type: ignore[no-untyped-def]",
        '    """Start moving ``nbytes`` from rank ``src`` to rank ``dst`` at time ``t``.',
        "",
        "    Returns the arrival time, or -1 for a model whose flow ``flow`` the caller then",
        "    starts with a packet event at ``t``. Ranks on the same node exchange through",
        "    memory (no network time).",
        '    """',
        "    a = net.node_of[src]",
        "    b = net.node_of[dst]",
        "    if a == b:",
        "        return t",
        "    kind = net.kind",
    ]
    for n, (i, e) in enumerate(units):
        call = f"_start_{i}(t, a, b, nbytes, flow, state, rates, net.tables)"
        if n < len(units) - 1:
            lines += [f"    if kind == {i}:  # {e.name}", f"        return {call}"]
        else:
            lines += [f"    return {call}  # {e.name}"]
    return "\n".join(lines) + "\n"


def docs_table(entries: Sequence[NetworkModelEntry]) -> str:
    """The docs' Markdown table of the models (markers included)."""
    rows = [
        f"| `{e.name}` | {i} | `{e.model.__module__.removeprefix('mpiuq.simulator.')}` | "
        f"{'yes' if e.on_platform else 'no'} | "
        f"{'kernel events' if e.kernel_events else '`' + e.start.py_func.__name__ + '`'} | "
        f"{e.description} |"
        for i, e in enumerate(entries)
    ]
    return "\n".join(
        [
            DOCS_BEGIN,
            "",
            "| model | code | module | on a platform | compiled unit | description |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            DOCS_END,
        ]
    )


def _replace_between(text: str, begin: str, end: str, block: str, where: Path) -> str:
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{where}: no block between {begin!r} and {end!r}")
    return pattern.sub(lambda _: block, text, count=1)


def generated_files(
    entries: Sequence[NetworkModelEntry], simulator_dir: Path, docs_dir: Path | None
) -> dict[Path, str]:
    """Each generated file under ``simulator_dir`` (and ``docs_dir``, if given and there)
    with the text it must have."""
    codes_py = simulator_dir / "codes.py"
    out = {
        codes_py: _replace_between(
            codes_py.read_text(encoding="utf-8"),
            CODES_BEGIN,
            CODES_END,
            codes_block(entries),
            codes_py,
        ),
        simulator_dir / "networks" / "_dispatch.py": dispatch_source(entries),
    }
    docs = docs_dir / "extending-simulator.md" if docs_dir is not None else None
    if docs is not None and docs.is_file():
        text = _replace_between(
            docs.read_text(encoding="utf-8"), DOCS_BEGIN, DOCS_END, docs_table(entries), docs
        )
        out[docs] = with_registry_tables(text)  # the topologies' and collectives' tables
    return out


def stale_files(files: dict[Path, str]) -> list[Path]:
    """The files of ``files`` whose text differs from the one given (or that are missing)."""
    stale = []
    for path, text in files.items():
        try:
            if path.read_text(encoding="utf-8") != text:
                stale.append(path)
        except OSError:
            stale.append(path)
    return stale


def write_files(files: dict[Path, str]) -> list[Path]:
    """Write the stale files of ``files``; returns them."""
    stale = stale_files(files)
    for path in stale:
        path.write_text(files[path], encoding="utf-8")
    return stale
