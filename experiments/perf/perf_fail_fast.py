"""How fast ``mpiuq`` answers help, usage and validation errors (target: < 0.3 s each).

Each case is a whole ``mpiuq`` process (the installed console script), best and
median of ``--repeat`` runs, with the exit code and the first line of stderr; cases:
``--help``, a usage error, a campaign TOML error, a campaign whose data CSV is
malformed, ``--out`` naming an existing file, ``--topology dragonfly:groups=0``. mpiuq's
modules are byte-compiled first (as ``pip install`` leaves them). Prints the load
average: the machine is shared. Besides the wall time, each case's CPU time (user +
system of the process) is shown: on a loaded machine the wall time mostly waits for a
CPU, while the CPU time is about what the wall time is on an idle one.

Usage::

    python experiments/perf/perf_fail_fast.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_replay import compile_bytecode

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = REPO / "experiments" / "stampede-ib.toml"


def cases(tmp: Path) -> dict[str, list[str]]:
    """name -> arguments of ``mpiuq``."""
    bad_toml = tmp / "bad.toml"
    bad_toml.write_text(
        CAMPAIGN.read_text().replace("[calibration]", "[calibration]\nbogus = 1", 1)
    )
    data = tmp / "data.csv"
    data.write_text("run,msg_size_bytes,value,unit,benchmark\n1,8,abc,us,pingpong_half_rtt\n")
    text = CAMPAIGN.read_text()
    bad_csv = tmp / "badcsv.toml"
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("path") and ".csv" in line:
            line = f'path = "{data}"'
        lines.append(line)
    bad_csv.write_text("\n".join(lines) + "\n")
    existing = tmp / "a-file"
    existing.write_text("x")
    trace = REPO.parent / "shared" / "data" / "traces" / "ti_lulesh_64r"
    return {
        "mpiuq --help": ["--help"],
        "usage error (unknown option)": ["replay", "--no-such-option"],
        "campaign TOML error": ["campaign", "run", str(bad_toml)],
        "campaign data CSV error": ["campaign", "run", str(bad_csv)],
        "campaign --out an existing file": [
            "campaign",
            "run",
            str(CAMPAIGN),
            "--out",
            str(existing),
        ],
        "replay --topology dragonfly:groups=0": [
            "replay",
            str(trace),
            "--topology",
            "dragonfly:groups=0",
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    mpiuq = shutil.which("mpiuq", path=os.path.dirname(sys.executable)) or "mpiuq"
    compile_bytecode()
    one, five, _ = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min)")
    print("target: < 0.3 s wall on an idle machine (CPU s: this process's own work)")
    print(
        f"{'case':<40}{'wall best s':>12}{'median':>8}{'CPU best s':>11}{'median':>8}{'exit':>6}"
        "  first line of stderr"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in cases(Path(tmp)).items():
            times, cpu, code, first = [], [], 0, ""
            for _ in range(args.repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                proc = subprocess.run([mpiuq, *argv], capture_output=True, text=True, cwd=tmp)
                times.append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                code = proc.returncode
                first = (proc.stderr.strip().splitlines() or [""])[0][:90]
            print(
                f"{name:<40}{min(times):>12.3f}{statistics.median(times):>8.3f}"
                f"{min(cpu):>11.3f}{statistics.median(cpu):>8.3f}{code:>6}  {first}"
            )
    one, five, _ = os.getloadavg()
    print(f"load average at the end: {one:.2f} (1 min) {five:.2f} (5 min)")


if __name__ == "__main__":
    main()
