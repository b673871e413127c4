"""Where the tests find their input data.

``../shared/data`` (next to the checkout) holds the real traces and benchmark sets;
tests that need it skip cleanly when it is absent. The Stampede ping-pong data the
main campaign uses is committed under ``experiments/data`` (with its provenance), so
tests that only need it always run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
TRACES = SHARED / "traces"
BENCHMARKS = SHARED / "benchmarks"
#: The committed copy of ../shared/data/benchmarks/simgrid_stampede_ib_mvapich2.
STAMPEDE_DIR = ROOT / "experiments" / "data" / "simgrid_stampede_ib_mvapich2"

#: The shared SimGrid time-independent traces, each a folder (its index or rank files;
#: ``ti_simgrid_replay_examples`` aside: loose example files). A fixed list, so that test
#: ids are the same with and without ``../shared``; ``tests/integration/test_trace_ti.py`` checks it
#: names every such folder there is.
SHARED_TI_TRACES = (
    "gen_ti_lulesh_27r",
    "gen_ti_lulesh_64r",
    "gen_ti_lulesh_8r",
    "ti_comd_256r",
    "ti_comd_64r",
    "ti_hpcg_16r",
    "ti_lulesh_216r",
    "ti_lulesh_512r",
    "ti_lulesh_64r",
    "ti_minife_16r",
    "ti_minife_64r",
    "ti_nas_mg_A_256r",
    "ti_nas_mg_A_64r",
    "ti_nekbone_16r",
    "ti_nekbone_64r",
    "ti_simgrid_nas_lu_S_4r",
    "ti_simgrid_replay_multiple_32r",
)

needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason="../shared/data/traces is absent")
needs_benchmarks = pytest.mark.skipif(
    not BENCHMARKS.is_dir(), reason="../shared/data/benchmarks is absent"
)


def committed_copy(relative: str, dest: Path, root: Path = ROOT) -> Path:
    """A copy, under ``dest``, of the committed folder ``relative`` (e.g.
    ``results/stampede-ib``) of the checkout ``root`` as its last commit holds it, whatever
    the working tree's state (a run may have written there); from the working tree outside
    a git checkout. The copy keeps the relative layout: ``dest / relative``.

    Tests read committed results through such a copy, never in place (the session
    fixture ``committed_results`` of ``conftest.py`` holds one of the whole ``results/``).
    """
    import shutil
    import subprocess
    import tarfile
    from io import BytesIO

    target = dest / relative
    try:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", "--format=tar", "HEAD", relative],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(root / relative, target)
        return target
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return target


def committed_files(relative: str, root: Path = ROOT) -> list[str]:
    """The paths (relative to ``root``, with ``/``) of the files the last commit holds under
    the folder ``relative``; the working tree's outside a git checkout. Test ids drawn
    from it do not change when a run writes into or moves a committed folder."""
    import subprocess

    try:
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-tree", "-r", "-z", "--name-only", "HEAD", relative],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return sorted(
            p.relative_to(root).as_posix() for p in (root / relative).rglob("*") if p.is_file()
        )
    return sorted(name for name in listing.decode().split("\0") if name)


#: The committed campaign result folders (``results/NAME/summary.json``), by name, as the
#: last commit holds them.
COMMITTED_CAMPAIGNS = tuple(
    sorted(
        path.split("/")[1]
        for path in committed_files("results")
        if path.count("/") == 2 and path.endswith("/summary.json")
    )
)
