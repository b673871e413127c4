"""Where a Ctrl-C is still the interpreter's: SIGINT swept over the first moments of a replay.

Sends SIGINT into ``python -m mpiuq replay`` and the ``mpiuq`` console script at each
delay of ``--delays-ms`` (``--tries`` times each) and prints, per command and delay, how
many runs ended interrupted by mpiuq (one line, exit 130), finished, in Python's own
start-up (before any code of mpiuq ran: not mpiuq's to handle) or otherwise (failures,
printed). The last delay with a ``python`` outcome bounds the interpreter's window on
this machine at its present load. Exits 1 if any run failed.

Usage::

    python experiments/fuzz/sigint_window.py [--delays-ms 0,5,...] [--tries 10]
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from interrupt_sweep import GOOD, interrupt_replay  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delays-ms", default="0,10,20,30,40,50,60,80,100,150,200,300")
    ap.add_argument("--tries", type=int, default=10)
    args = ap.parse_args()
    script = shutil.which("mpiuq", path=os.path.dirname(sys.executable))
    commands = {"python -m mpiuq": [sys.executable, "-m", "mpiuq"]}
    if script:
        commands["mpiuq (console script)"] = [script]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    print(
        f"{'command':24s} {'delay ms':>8s} {'python':>6s} {'mpiuq 130':>9s} {'finished':>8s} {'failed':>6s}"
    )
    failed = 0
    with tempfile.TemporaryDirectory(prefix="sigint-window-") as tmp:
        for label, command in commands.items():
            for delay_ms in (float(d) for d in args.delays_ms.split(",")):
                counts: collections.Counter[str] = collections.Counter()
                for _ in range(args.tries):
                    got = interrupt_replay(command, Path(tmp), delay_ms / 1000)
                    counts[got if got in GOOD else "failed"] += 1
                    if got not in GOOD:
                        print(f"  FAILED at {delay_ms} ms: {got}", flush=True)
                failed += counts["failed"]
                print(
                    f"{label:24s} {delay_ms:8.0f} {counts['python']:6d} {counts['interrupted']:9d} "
                    f"{counts['finished']:8d} {counts['failed']:6d}",
                    flush=True,
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
