"""``mpiuq kernels build|status``: the compiled loops' ahead-of-time module.

``build`` compiles the loops a command calls from Python into one extension module
for this machine (:mod:`mpiuq.kernels_build`): later commands load it instead
of numba (about 0.3-0.45 s and 65 MiB less per command). ``status`` says which module
the next command would use.
"""

from __future__ import annotations

import argparse
import time

from mpiuq.progress import Progress, add_quiet_argument


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``kernels`` sub-command (``kernels build``, ``kernels status``)."""
    p = sub.add_parser("kernels", help="build or show the compiled loops' start-up module")
    ksub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = ksub.add_parser(
        "build",
        help="compile the loops ahead of time for this machine (one-off, about a minute with "
        "a warm numba cache, a few minutes on a new machine)",
    )
    add_quiet_argument(build)
    build.set_defaults(handler=run_build)
    status = ksub.add_parser("status", help="which module the next command loads its loops from")
    status.set_defaults(handler=run_status)


def run_build(args: argparse.Namespace) -> int:
    """Execute ``mpiuq kernels build``."""
    from mpiuq.kernels_build import build_aot
    from mpiuq.simulator._aot import aot_enabled

    progress = Progress.of(args)
    t0 = time.perf_counter()
    with progress.watching_compilation():
        built = build_aot(on_phase=progress.line)
    progress.line(
        f"built {built.module} ({built.exports} exports of {len(built.loops)} loops; "
        f"runs {built.exercise_s:.0f} s, compilation {built.compile_s:.0f} s, "
        f"total {time.perf_counter() - t0:.0f} s)"
    )
    if not aot_enabled():
        progress.line("note: MPIUQ_AOT is off in this environment: commands will not use it")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Execute ``mpiuq kernels status``."""
    from mpiuq.simulator._aot import AOT_ENV, aot_enabled, loaded_module_path, module_path

    if not aot_enabled():
        print(f"ahead-of-time module: off ({AOT_ENV} is set); loops load from numba's cache")
        return 0
    found = loaded_module_path()
    if found is None:
        print(
            f"ahead-of-time module: none for these sources on this machine ({module_path()}); "
            "loops load from numba's cache (run 'mpiuq kernels build' once for a faster start)"
        )
    else:
        print(f"ahead-of-time module: {found}")
    return 0
