"""numba's first import in a command, without its optional probes of SciPy and PyYAML.

On import, numba imports SciPy to check its version (>= 1.0) if it is installed, and
PyYAML to read a ``.numba_config.yaml`` file if the working directory holds one: 30-60
ms of a command's start-up (SciPy's own imports include ``subprocess``) for neither.
:func:`import_numba` imports numba with both hidden (PyYAML only when there is no such
file), then lets them be imported as usual. This module imports neither numba nor
NumPy, so the command line can call it once it knows it will replay.

numba's array implementations (``numba.np.arraymath``, imported when the first compiled
loop is called, even from the cache) probe SciPy's BLAS on import
(``scipy.linalg.cython_blas``, which loads SciPy's OpenBLAS): the probe only chooses how
numba compiles ``np.dot``-like calls, which no loop here makes. :func:`import_numba`
imports that module inside the same window, so a replay neither imports SciPy nor maps
its BLAS (numba then compiles such calls without BLAS, as it does without SciPy).

The two are hidden from the importing thread only: a finder at the head of
``sys.meta_path`` refuses them to that thread while numba imports, so another thread
importing SciPy meanwhile gets SciPy (``sys.modules["scipy"] = None``, the earlier way,
made every thread's ``import scipy`` fail in that window).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

#: The file numba reads its settings from, in the working directory (with PyYAML).
NUMBA_CONFIG_FILE = ".numba_config.yaml"


def import_numba() -> None:
    """Import numba (if not yet imported) without importing SciPy or PyYAML for it.

    The version check numba makes of an installed SciPy is skipped; numba's settings
    file is still read when the working directory holds one.
    """
    if "numba" in sys.modules:
        return
    hidden = [m for m in ("scipy", "yaml") if m not in sys.modules]
    if os.path.isfile(NUMBA_CONFIG_FILE) and "yaml" in hidden:
        hidden.remove("yaml")
    finder = _HiddenFromThisThread(frozenset(hidden), threading.get_ident())
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module("numba")
        importlib.import_module("numba.np.arraymath")
    finally:
        sys.meta_path.remove(finder)


class _HiddenFromThisThread(importlib.abc.MetaPathFinder):
    """Refuses the top-level packages ``names`` (and their modules) to one thread."""

    def __init__(self, names: frozenset[str], thread: int) -> None:
        self.names = names
        self.thread = thread

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """Raise ModuleNotFoundError for a hidden name imported by the thread; else defer."""
        if threading.get_ident() == self.thread and fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"{fullname} is not imported for numba", name=fullname)
        return None
