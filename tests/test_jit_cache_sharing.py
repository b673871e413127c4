"""Processes sharing a numba cache compile a loop, and numba's runtime, once between them.

A process that finds a loop missing from the cache while another one holds the loop's
lock file (it is compiling it) waits, then loads the loop from the cache instead of
compiling it too (``mpiuq.simulator._numba_startup._compiling_alone``). numba's runtime,
kept beside the first loop a process loads, is written beside the loops of the other
cache folders it loads from too, so a later process starting in another folder loads
it instead of compiling it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mpiuq.simulator._numba_startup import COMPILE_WAIT_S, _compiling_alone

MODULE = """
from mpiuq.simulator._numba_startup import cached_njit


@cached_njit()
def add_one(x):
    return x + 1
"""

#: The second process: calls the loop and says whether it compiled it.
CALLER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from mpiuq.simulator._jit import on_compile
import once_module
compiled = []
print("calling", flush=True)
with on_compile(lambda: compiled.append(1)):
    value = once_module.add_one(41)
print(json.dumps([value, len(compiled)]))
"""


def test_a_process_waits_for_the_compile_of_another_and_loads_its_result(tmp_path: Path) -> None:
    (tmp_path / "once_module.py").write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import once_module  # type: ignore[import-not-found]

        from mpiuq.simulator._jit import on_compile

        compiled: list[int] = []
        with _compiling_alone(once_module.add_one._cache):  # as a process compiling it
            other = subprocess.Popen(
                [sys.executable, "-c", CALLER, str(tmp_path)],
                stdout=subprocess.PIPE,
                text=True,
                env=os.environ.copy(),
            )
            assert other.stdout is not None
            assert other.stdout.readline().strip() == "calling"
            time.sleep(1.0)  # the other process reaches the lock (a cache miss) meanwhile
            assert other.poll() is None  # waiting for this one
            with on_compile(lambda: compiled.append(1)):
                assert once_module.add_one(1) == 2  # compiled here, under the lock
        out, _ = other.communicate(timeout=COMPILE_WAIT_S)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("once_module", None)
    assert other.returncode == 0
    assert compiled == [1]
    assert json.loads(out.strip().splitlines()[-1]) == [42, 0]  # loaded, not compiled


def test_a_cache_folder_without_a_lock_file_compiles_as_before(tmp_path: Path) -> None:
    class NoLayout:  # a numba whose cache layout changed: no lock, no error
        pass

    with _compiling_alone(NoLayout()):
        pass

    class ReadOnly:
        _cache_path = str(tmp_path / "missing" / "folder")

        class _cache_file:  # numba's attribute name
            _index_name = "f.nbi"

    with _compiling_alone(ReadOnly()):  # the lock file cannot be made: no lock
        pass


#: A fresh process: the runtime is made for one cache folder, then asked for in another.
RUNTIME = """
import json, os, sys
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
import numba.core.runtime.nrtdynmod as nrt
from mpiuq.simulator._numba_startup import _runtime_file, initialize_runtime
made = []
make_runtime = nrt.create_nrt_module
nrt.create_nrt_module = lambda ctx: made.append(1) or make_runtime(ctx)
ctx = cpu_target.target_context
with global_compiler_lock:  # as a cache load holds it
    initialize_runtime(ctx, sys.argv[1])
    initialize_runtime(ctx, sys.argv[2])
print(json.dumps([len(made), *(os.path.isfile(_runtime_file(ctx, f)) for f in sys.argv[1:])]))
"""


def test_the_runtime_is_kept_in_every_cache_folder_a_process_loads_from(tmp_path: Path) -> None:
    first, second, third = (str(tmp_path / name) for name in ("trace", "kernel", "other"))

    def run(*folders: str) -> list[int]:
        proc = subprocess.run(
            [sys.executable, "-c", RUNTIME, *folders], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run(first, second) == [1, True, True]  # compiled once, kept in both folders
    assert run(second, third) == [0, True, True]  # loaded from the second, kept in the third
