"""Architecture rules of the code base: import direction and no import cycles.

The rules come from the README ("Dependencies point one way: calibration -> surrogate,
simulator; surrogate knows nothing of MPI; simulator knows nothing of statistics").
The import graph is read from the source (every ``import``, including those inside
functions), so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Source folder of each top-level part of the ``mpiuq`` namespace (pyproject package-dir).
PACKAGES = {
    "mpiuq": ROOT / "cli",
    "mpiuq.simulator": ROOT / "simulator",
    "mpiuq.surrogate": ROOT / "surrogate",
    "mpiuq.calibration": ROOT / "calibration",
}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for prefix, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([prefix, *parts])] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        for t in targets:
            while t and t not in known:  # "import mpiuq.simulator.x.y" names module x.y
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_graph_reader_sees_the_package() -> None:
    graph = _graph()
    assert "mpiuq.calibration.pipeline.campaign" in graph
    assert "mpiuq.simulator.benchmarks" in graph["mpiuq.calibration.pipeline.campaign_stages"]


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], f"import cycles: {cycles}"


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("mpiuq.simulator", ("mpiuq.calibration", "mpiuq.surrogate")),
        ("mpiuq.surrogate", ("mpiuq.calibration", "mpiuq.simulator")),
    ],
)
def test_layers_point_one_way(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = _graph()
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if m.startswith(layer + ".") or m == layer
        for t in targets
        if t.startswith(forbidden)
    )
    assert bad == []


def test_library_layers_never_import_the_cli() -> None:
    graph = _graph()
    cli = {m for m in graph if m.count(".") == 1 or m == "mpiuq"} - {
        "mpiuq.simulator",
        "mpiuq.surrogate",
        "mpiuq.calibration",
    }
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if f"{m}.".startswith(("mpiuq.simulator.", "mpiuq.surrogate.", "mpiuq.calibration."))
        for t in targets
        if t in cli
    )
    assert bad == []
