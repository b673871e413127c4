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


def committed_copy(relative: str, dest: Path) -> Path:
    """A copy, under ``dest``, of the committed folder ``relative`` (e.g.
    ``results/stampede-ib``) as the last commit holds it, whatever the working tree's
    state (a run may have written there); from the working tree outside a git checkout.

    Tests read committed results through such a copy, never in place.
    """
    import shutil
    import subprocess
    import tarfile
    from io import BytesIO

    target = dest / relative
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", "HEAD", relative],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(ROOT / relative, target)
        return target
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return target
