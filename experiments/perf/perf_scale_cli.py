"""The issue-15 scale case as a user runs it: two whole ``mpiuq`` commands, timed per stage.

Runs, each as its own process, exactly::

    mpiuq trace synth halo3d --ranks R --iterations I --out SCRATCH/halo.h5
    mpiuq replay SCRATCH/halo.h5 --model packet,analytic,compute-only [--threads N]

(the defaults R = 16384, I = 40 are the issue's case) and prints, per command, its
wall time, CPU time (user + system, from ``wait4``) and peak resident memory (the
kernel's ``ru_maxrss``), and per stage the wall time and the peak of the resident
memory sampled every ``--interval`` seconds from ``/proc/PID/status`` (``VmRSS``)
while it ran, with the process's high-water mark (``VmHWM``) at its end. A stage
ends when the command prints its progress line (reading, lowering, one line per
model; models that run at once share their time, so each model's line shows the
time since the previous line). The load average before and after is printed: other
jobs on the machine slow the figures down.

Usage::

    python experiments/perf/perf_scale_cli.py [--ranks 16384] [--iterations 40]
        [--scratch DIR] [--models packet,analytic,compute-only] [--threads N]
        [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _status_kib(pid: int, key: str) -> int:
    """``key`` (``VmRSS``, ``VmHWM``) of process ``pid`` in KiB, 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_timed(cmd: list[str], interval_s: float) -> dict[str, object]:
    """Run ``cmd``; its wall and CPU seconds, peak RSS, and per progress line a stage."""
    print(f"$ {' '.join(cmd)}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str, int]] = []  # (seconds since start, text, VmHWM KiB)
    samples: list[tuple[float, int]] = []
    out: list[str] = []

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip(), _status_kib(proc.pid, "VmHWM")))

    def read_out() -> None:
        assert proc.stdout is not None
        out.extend(proc.stdout)

    readers = [threading.Thread(target=f, daemon=True) for f in (read_err, read_out)]
    for r in readers:
        r.start()
    status = None
    while status is None:
        samples.append((time.perf_counter() - t0, _status_kib(proc.pid, "VmRSS")))
        pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status = (code, usage)
            break
        time.sleep(interval_s)
    wall = time.perf_counter() - t0
    for r in readers:
        r.join()
    code, usage = status
    proc.returncode = os.waitstatus_to_exitcode(code)
    if proc.returncode != 0:
        tail = "\n".join(text for _, text, _ in lines[-20:])
        raise SystemExit(f"command failed ({proc.returncode}):\n{tail}")
    start = 0.0
    for at, text, hwm in lines:
        if "%" in text and "(" in text and ":" not in text:
            continue  # a running percentage, not the end of a stage
        peak = max((kib for t, kib in samples if start <= t <= at), default=0)
        print(
            f"  {at:7.1f} s  stage {at - start:6.1f} s  peak RSS {peak / 2**20:5.2f} GiB "
            f"(high-water {hwm / 2**20:5.2f} GiB)  | {text}"
        )
        start = at
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"  whole command: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS "
        f"{usage.ru_maxrss / 2**20:.2f} GiB ({usage.ru_maxrss * 1024 / 1e9:.2f} GB)",
        flush=True,
    )
    return {"wall_s": wall, "cpu_s": cpu, "maxrss_KiB": usage.ru_maxrss, "stdout": "".join(out)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--scratch", type=Path, default=None, help="where halo.h5 goes (a temp dir)")
    ap.add_argument("--models", default="packet,analytic,compute-only")
    ap.add_argument("--threads", type=int, default=None, help="mpiuq replay --threads")
    ap.add_argument("--interval", type=float, default=0.1, help="RSS sampling period, s")
    ap.add_argument("--keep", action="store_true", help="keep halo.h5 (and reuse it if present)")
    args = ap.parse_args()

    mpiuq = shutil.which("mpiuq") or str(Path(sys.executable).with_name("mpiuq"))
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="mpiuq-scale-"))
    scratch.mkdir(parents=True, exist_ok=True)
    trace = scratch / "halo.h5"
    print(f"load average before: {os.getloadavg()}; {os.cpu_count()} CPUs", flush=True)
    if not (args.keep and trace.exists()):
        synth = [mpiuq, "trace", "synth", "halo3d", "--ranks", str(args.ranks)]
        run_timed(
            [*synth, "--iterations", str(args.iterations), "--out", str(trace)], args.interval
        )
    replay = [mpiuq, "replay", str(trace), "--model", args.models]
    if args.threads is not None:
        replay += ["--threads", str(args.threads)]
    result = run_timed(replay, args.interval)
    print(str(result["stdout"]).rstrip())
    print(f"load average after: {os.getloadavg()}", flush=True)
    if not args.keep:
        trace.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
