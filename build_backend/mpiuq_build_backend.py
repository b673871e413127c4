"""PEP 517 build backend: setuptools' own, then the simulator's loops compiled into numba's
on-disk cache, so that commands start with every loop compiled when ``pip install`` ends.

After setuptools has built the wheel, ``python -m mpiuq.precompile`` runs in the build
environment (the same pinned NumPy, numba and h5py as the install) with ``mpiuq``
imported from exactly the files the installed package will run:

* **editable wheel** (``pip install -e .``, lenient or strict mode): the wheel's own
  path entries (``.pth``: strict mode's link tree) or finder (lenient mode) are
  installed in the compiling interpreter, so numba writes each loop's cache where the
  installed package looks for it (``__pycache__`` beside the source, or
  ``$NUMBA_CACHE_DIR`` when set for the install); the wheel itself is unchanged;
* **regular wheel** (``pip install .``, ``pip wheel .``): the wheel is unpacked in a
  temporary folder and compiled there with each cache in the ``__pycache__`` beside
  its source (``NUMBA_CACHE_DIR`` unset for that run); the cache files are added to
  the wheel, so they install beside the sources. numba keys a cache on the SHA-256 of
  its source file's contents, the CPU and numba's version, not on paths or times, so
  the installed copy finds them (with ``NUMBA_CACHE_DIR`` set at run time numba looks
  there instead, and compiles once).

``MPIUQ_PRECOMPILE=0`` in the environment skips the compilation (commands then compile
each loop on first use, once). Uses public interfaces only: setuptools' PEP 517 hooks,
numba's ``cache=True``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import build_sdist as build_sdist
from setuptools.build_meta import (  # noqa: F401  (re-exported PEP 517/660 hooks)
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

#: Environment variable that turns the compilation off (``0``, ``no``, ``off``, ``false``).
PRECOMPILE_ENV = "MPIUQ_PRECOMPILE"

#: File kinds of numba's cache (index, data) and mpiuq's records beside them.
CACHE_SUFFIXES = (".nbi", ".nbc")
CACHE_RECORDS = ("mpiuq-loops-sources.sha256", "mpiuq-loops-compile-s.json")

#: What the compiling interpreter runs: the wheel's path entries and finders, then the
#: compilation (``sys.argv[1]``: the folder holding them).
_BOOTSTRAP = (
    "import runpy, site, sys; site.addsitedir(sys.argv[1]); "
    "runpy.run_module('mpiuq.precompile', run_name='__main__')"
)


def _enabled() -> bool:
    return os.environ.get(PRECOMPILE_ENV, "").strip().lower() not in ("0", "no", "off", "false")


def _compile(site_dir: Path, env: dict[str, str]) -> None:
    """Run ``mpiuq.precompile`` with ``site_dir`` (an unpacked wheel) as a site folder."""
    print(f"mpiuq: compiling the simulator's loops into numba's cache ({site_dir})", flush=True)
    subprocess.run([sys.executable, "-c", _BOOTSTRAP, str(site_dir)], env=env, check=True)


def _unpack(wheel: Path, folder: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(folder)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable wheel, then the loops compiled where it will import them from."""
    name: str = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if _enabled():
        with tempfile.TemporaryDirectory(prefix="mpiuq-editable-") as tmp:
            _unpack(Path(wheel_directory) / name, Path(tmp))
            _compile(Path(tmp), dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return name


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' wheel, with the compiled loops' cache files added beside the sources."""
    name: str = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    if _enabled():
        wheel = Path(wheel_directory) / name
        with tempfile.TemporaryDirectory(prefix="mpiuq-wheel-") as tmp:
            root = Path(tmp)
            _unpack(wheel, root)
            env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE_")}
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            _compile(root, env)
            _add_cache_files(wheel, root)
    return name


def _cache_files(root: Path) -> list[Path]:
    """numba's cache files (and mpiuq's records) under ``root``'s ``__pycache__`` folders."""
    return sorted(
        p
        for p in root.rglob("__pycache__/*")
        if p.is_file() and (p.suffix in CACHE_SUFFIXES or p.name in CACHE_RECORDS)
    )


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _add_cache_files(wheel: Path, root: Path) -> None:
    """Rewrite ``wheel`` with the cache files under ``root`` added (and in its RECORD)."""
    added = {p.relative_to(root).as_posix(): p.read_bytes() for p in _cache_files(root)}
    if not added:
        return
    tmp = wheel.with_name(wheel.name + ".part")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        for info in src.infolist():
            if info.filename != record_name:
                dst.writestr(info, src.read(info.filename))
        for arcname, data in added.items():
            dst.writestr(arcname, data)
        record = src.read(record_name).decode().rstrip("\n").split("\n")
        rows = [r for r in record if not r.startswith(f"{record_name},")]
        rows += [_record_line(a, d) for a, d in added.items()]
        rows.append(f"{record_name},,")
        dst.writestr(record_name, "\n".join(rows) + "\n")
    os.replace(tmp, wheel)
