"""Size limits of the simulator's code: no function over 150 lines, no module over 600.

Lines are physical lines of the source, docstrings and comments included.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES = 150
MAX_MODULE_LINES = 600
#: Temporary exceptions (each removed when its module is split). None today: the trace
#: readers' split landed.
KNOWN_LONG_MODULES: set[str] = set()


def _sizes() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    modules, functions = [], []
    for path in sorted((ROOT / "simulator").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        modules.append((rel, len(text.splitlines())))
        for node in ast.walk(ast.parse(text, filename=rel)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                functions.append((f"{rel}:{node.lineno} {node.name}", n))
    return modules, functions


def test_no_function_longer_than_150_lines() -> None:
    _, functions = _sizes()
    assert len(functions) > 300
    assert [(f, n) for f, n in functions if n > MAX_FUNCTION_LINES] == []


def test_no_module_longer_than_600_lines() -> None:
    modules, _ = _sizes()
    long = {rel: n for rel, n in modules if n > MAX_MODULE_LINES}
    assert set(long) <= KNOWN_LONG_MODULES, long
