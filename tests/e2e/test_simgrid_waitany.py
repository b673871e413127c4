"""MPI_Waitany against SimGrid 3.32: a nonblocking neighbour exchange completed one
request at a time with MPI_Waitany (compute after each receive), run online by
``smpirun -trace-ti`` on the contention-free cluster of ``experiments/simgrid_refs``;
mpiuq replays the TI trace SMPI wrote (``waitAny N`` lines that do not say which
request completed) with ``--like simgrid`` and must agree within that platform's 2%.
Skipped without SimGrid (smpicc, smpirun)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_trace_ti_waitany import replay_flat

PLATFORMS = Path(__file__).resolve().parents[2] / "experiments" / "simgrid_refs" / "platforms"
HAVE_SIMGRID = shutil.which("smpirun") is not None and shutil.which("smpicc") is not None

#: 16 ranks on a ring, four partners (+-1, +-4), four rounds of 16 KiB (detached sends)
#: and 96 KiB (synchronous sends) messages; each receive's completion is followed by a
#: computation whose length depends on which request completed.
PROGRAM = r"""
#include <mpi.h>
#include <smpi/smpi.h>
static char sbuf[4 * 98304], rbuf[4 * 98304];
int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nb[4] = {(rank + 1) % size, (rank + size - 1) % size, (rank + 4) % size,
               (rank + size - 4) % size};
  MPI_Request req[8];
  for (int it = 0; it < 4; it++) {
    int m = it % 2 ? 98304 : 16384;
    for (int d = 0; d < 4; d++)
      MPI_Irecv(rbuf + d * m, m, MPI_CHAR, nb[d ^ 1], d, MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < 4; d++)
      MPI_Isend(sbuf + d * m, m, MPI_CHAR, nb[d], d, MPI_COMM_WORLD, &req[4 + d]);
    for (int k = 0; k < 8; k++) {
      int idx;
      MPI_Waitany(8, req, &idx, MPI_STATUS_IGNORE);
      if (idx < 4)
        smpi_execute_flops(4e4 * (1 + (rank + idx) % 3));
    }
  }
  MPI_Finalize();
  return 0;
}
"""


@pytest.mark.skipif(not HAVE_SIMGRID, reason="SimGrid (smpirun, smpicc) absent")
def test_waitany_exchange_agrees_with_simgrid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "waitany.c").write_text(PROGRAM)
    subprocess.run(
        ["smpicc", "-O1", "-o", "waitany", "waitany.c"],
        cwd=tmp_path, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    proc = subprocess.run(
        [
            "smpirun", "-np", "16", "-platform", str(PLATFORMS / "cluster_flat.xml"),
            "-hostfile", str(PLATFORMS / "hostfile"), "--cfg=smpi/display-timing:yes",
            "--cfg=smpi/simulate-computation:no", "-trace-ti",
            "--cfg=tracing/filename:waitany.txt", "./waitany",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-800:]
    found = re.search(r"Simulated time: ([0-9.eE+-]+) seconds", proc.stdout + proc.stderr)
    assert found is not None
    simgrid_s = float(found.group(1))
    index = tmp_path / "waitany.txt"
    assert "waitAny" in (tmp_path / index.read_text().split()[0]).read_text()
    doc = replay_flat(index, capsys)
    assert doc["trace"]["not_replayed"] == {}  # every waitAny is replayed
    mpiuq_s = doc["models"]["flow"]["simulated_time_s"]
    assert abs(mpiuq_s / simgrid_s - 1) <= 0.02, f"mpiuq {mpiuq_s} s vs SimGrid {simgrid_s} s"
