"""SimGrid 3.32's default collective selection (``--collectives simgrid``).

Structure against SimGrid's documented algorithms (src/smpi/colls/smpi_default_selector.cpp):
allreduce = every rank sends to rank 0, which receives all and combines, then a
binomial-tree broadcast with one send per child; barrier = linear through rank 0.
Agreement of whole replays with ``smpirun -replay`` is checked on one small shared trace
when SimGrid is installed (experiments/checks/simgrid_agreement.py does all of them).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from shared_data import ROOT, TRACES, needs_traces

from mpiuq.main import main
from mpiuq.simulator.collectives import (
    ALGORITHM_SETS,
    ALGORITHMS,
    CollectiveError,
    CollSizes,
    algorithm_set,
    schedule,
)


def test_every_set_names_known_algorithms() -> None:
    for name, choice in ALGORITHM_SETS.items():
        for coll, alg in choice.items():
            assert alg in ALGORITHMS[coll], (name, coll, alg)
    with pytest.raises(CollectiveError, match="collective set 'openmpi' is unknown"):
        algorithm_set("openmpi")


def test_simgrid_allreduce_is_a_flat_reduce_then_a_binomial_tree_bcast() -> None:
    p, nb = 6, 8
    root = schedule("allreduce", "flat_reduce_bcast", 0, p, 0, CollSizes(nb))
    assert root[0].recvs == tuple((j, nb) for j in range(1, p))  # all at once
    assert root[0].combine_bytes == (p - 1) * nb
    # then one send per child of the binomial tree, largest subtree first: 4, 2, 1
    assert [s.sends for s in root[1:]] == [((4, nb),), ((2, nb),), ((1, nb),)]
    leaf = schedule("allreduce", "flat_reduce_bcast", 5, p, 0, CollSizes(nb))
    assert [(s.sends, s.recvs) for s in leaf] == [(((0, nb),), ()), ((), ((4, nb),))]


def test_simgrid_barrier_is_linear_through_rank_0() -> None:
    steps = schedule("barrier", algorithm_set("simgrid")["barrier"], 3, 4, 0, CollSizes())
    assert [(s.sends, s.recvs) for s in steps] == [(((0, 0),), ()), ((), ((0, 0),))]


@needs_traces
def test_cli_collectives_simgrid_selects_them(capsys: pytest.CaptureFixture[str]) -> None:
    trace = TRACES / "ti_nekbone_16r"
    code = main(["replay", str(trace), "--model", "analytic", "--collectives", "simgrid",
                 "--algorithm", "bcast=binomial"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "allreduce: flat_reduce_bcast" in out and "barrier: linear" in out
    assert "bcast: binomial" in out and "binomial_tree" not in out  # --algorithm wins


@needs_traces
@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid (smpirun) is not installed")
def test_replay_agrees_with_simgrid_within_one_percent() -> None:
    script = ROOT / "experiments" / "checks" / "simgrid_agreement.py"
    out = subprocess.run(
        [sys.executable, str(script), "--traces", "ti_hpcg_16r", "--config", "smpi"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    assert "1 of 1 traces within 1%" in out, out
