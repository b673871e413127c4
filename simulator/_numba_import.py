"""numba's first import in a command, without its optional probes of SciPy and PyYAML.

On import, numba imports SciPy to check its version (>= 1.0) if it is installed, and
PyYAML to read a ``.numba_config.yaml`` file if the working directory holds one: 30-60
ms of a command's start-up (SciPy's own imports include ``subprocess``) for neither.
:func:`import_numba` imports numba with both hidden (PyYAML only when there is no such
file), then lets them be imported as usual. This module imports neither numba nor
NumPy, so the command line can call it once it knows it will replay.
"""

from __future__ import annotations

import importlib
import os
import sys

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
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        importlib.import_module("numba")
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
