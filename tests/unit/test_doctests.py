"""Every runnable example in a docstring of the ``mpiuq`` packages stays true.

Modules are discovered from the source tree (any module whose text holds ``>>>``), so
a module added, moved or split keeps its examples tested without editing this file.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from shared_data import ROOT

PACKAGES = {
    "mpiuq": ROOT / "cli",
    "mpiuq.simulator": ROOT / "simulator",
    "mpiuq.surrogate": ROOT / "surrogate",
    "mpiuq.calibration": ROOT / "calibration",
}


def _modules_with_examples() -> list[str]:
    found = []
    for prefix, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            if ">>>" not in path.read_text(encoding="utf-8"):
                continue
            parts = [p for p in path.relative_to(folder).with_suffix("").parts if p != "__init__"]
            found.append(".".join([prefix, *parts]))
    return found


MODULES = _modules_with_examples()


def test_examples_are_found_in_every_layer() -> None:
    for layer in ("mpiuq.simulator.", "mpiuq.surrogate.", "mpiuq.calibration."):
        assert any(m.startswith(layer) for m in MODULES), layer


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
