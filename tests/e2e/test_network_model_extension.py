"""A network model is one new module plus the generator: the docs' worked example, end to end.

The installed ``mpiuq`` package is copied to a temporary folder (sources only), the
``wire`` model of ``docs/extending-simulator.md`` is written there as
``simulator/networks/wire.py`` -- the one source file it takes -- and
``python -m mpiuq.generate_networks`` is run on the copy; then a fresh process with its
own numba cache (the whole kernel compiles: minutes) runs two benchmark programs and a
replay of a small synthetic halo exchange (built in Python: the TI parser's loops need not
compile) on ``wire`` and on ``analytic`` through the public
entry points. Without contention (a ping-pong) the two must agree bit for bit; with
contention (a stream benchmark's window, serialised at the analytic model's injection
port) ``wire`` must be faster, which shows its compiled unit is what the kernel ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mpiuq

DOCS = Path(__file__).resolve().parents[2] / "docs" / "extending-simulator.md"

RUN = """
import json
import sys

from mpiuq.simulator.benchmarks.run import BenchmarkSetup, benchmark_program
from mpiuq.simulator.codes import NETWORK_MODELS
from mpiuq.simulator.engine import simulate
from mpiuq.simulator.networks import network_by_name
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.replay.run import ReplaySetup, replay
from mpiuq.simulator.motifs import MotifSpec, synthesize

out = {"models": list(NETWORK_MODELS)}
for kind in ("pingpong", "stream"):
    program = benchmark_program(BenchmarkSetup(kind, window=16), 1 << 20)
    for model in ("wire", "analytic"):
        run = simulate(program, SimParams(), network_by_name(model))
        out[f"{kind}/{model}"] = [float(x) for x in run.marks_s]
trace = synthesize(MotifSpec("halo3d", 4, 2, compute_s=1e-5, neighbours=6))
result = replay(trace, setup=ReplaySetup(models=("wire", "analytic")))
for m in result.models:
    out[f"replay/{m.model}"] = [float(x) for x in m.end_s]
print(json.dumps(out))
"""


def _example() -> str:
    """The docs' worked example (the ``wire`` module)."""
    found = re.search(r"```python\n(# simulator/networks/wire\.py.*?)```", DOCS.read_text(), re.S)
    assert found, f"{DOCS} lost the wire example"
    return found.group(1)


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.mark.skipif(not DOCS.is_file(), reason="needs the source tree's docs")
def test_a_model_added_as_one_module_runs_in_replays_and_benchmarks(tmp_path: Path) -> None:
    package = Path(mpiuq.__file__).resolve().parent
    copy = tmp_path / "tree" / "mpiuq"
    # resolve the strict editable install's links; sources only
    shutil.copytree(
        Path(mpiuq.__file__).parent,
        copy,
        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"),
    )
    assert (copy / "simulator" / "networks" / "registry.py").is_file(), package
    (copy / "simulator" / "networks" / "wire.py").write_text(_example(), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path / "tree"),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "MPIUQ_CACHE_DIR": str(tmp_path / "cache"),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    check = [sys.executable, "-m", "mpiuq.generate_networks", "--check"]
    stale = subprocess.run(check, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert stale.returncode == 1 and "_dispatch.py" in stale.stdout
    wrote = _run(["-m", "mpiuq.generate_networks"], tmp_path, env)
    assert "codes.py" in wrote and "_dispatch.py" in wrote
    assert subprocess.run(check, cwd=tmp_path, env=env).returncode == 0
    assert (
        "import wire_arrival as _start_4" in (copy / "simulator/networks/_dispatch.py").read_text()
    )

    out = json.loads(_run(["-c", RUN], tmp_path, env).strip().splitlines()[-1])

    assert out["models"] == ["analytic", "compute-only", "packet", "flow", "wire"]
    # one message at a time: no port serialises anything, the models agree bit for bit
    assert out["pingpong/wire"] == out["pingpong/analytic"]
    # a window of 16 messages: the analytic injection port serialises them, wire does not
    wire, analytic = (out[f"stream/{m}"] for m in ("wire", "analytic"))
    assert wire[-1] - wire[0] < 0.5 * (analytic[-1] - analytic[0])
    assert len(out["replay/wire"]) == len(out["replay/analytic"]) == 4
    assert max(out["replay/wire"]) <= max(out["replay/analytic"])
