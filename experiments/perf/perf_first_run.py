"""A new user's first contact, timed: fresh clone, fresh virtualenv, empty caches.

Steps, each its own process, in a temporary folder (nothing in this checkout changes):

1. ``git clone`` of this checkout's ``HEAD`` (so ``../shared`` is linked beside it);
2. a new virtualenv and the README's install, ``pip install -e .`` (the build step
   compiles the simulator's loops into numba's cache), timed;
3. the README's main job, ``mpiuq campaign run experiments/stampede-ib.toml``, twice,
   each into a new results folder (``$MPIUQ_RESULTS``: no checkpoint is reused), timed:
   the first is a new user's first run, the second a warm one; the ratio must be <= 1.5;
   afterwards ``git status --porcelain`` of the clone must be empty;
4. with ``--lulesh``: the replay of ti_lulesh_512r as a whole process (first run: empty
   trace cache; second: from the program cache) against SimGrid's ``smpirun -replay``
   (:mod:`perf_whole_process`), best of ``--repeat``, with the analytic model's event
   rate; targets: >= 20x SimGrid warm, peak memory <= 2x SimGrid's, first run <= 2x too,
   >= 5 M events/s;
   ``--lulesh-only`` runs this step alone, with the ``mpiuq`` of the running interpreter's
   environment (this checkout's install, numba's cache as it is: warm it first);
5. with ``--tests``: ``pip install -e '.[test]' && pytest`` (the README's second
   command) in the same clone, timed.

The load average is printed before and after: the machine is shared. Prints a table.

Usage::

    python experiments/perf/perf_first_run.py [--lulesh] [--repeat 3] [--tests] [--keep DIR]
    python experiments/perf/perf_first_run.py --lulesh-only [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_replay import DATA, index_of, simgrid
from perf_whole_process import mpiuq_run

REPO = Path(__file__).resolve().parents[2]

#: CPU seconds (user + system, children included) of each timed command, in order.
CPU_S: list[float] = []


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min)"


def timed(
    cmd: list[str], cwd: Path, env: dict[str, str], log: Path, ok: tuple[int, ...] = (0,)
) -> float:
    """Run ``cmd`` (output to ``log``); its wall seconds (its CPU seconds are logged). Fails
    loudly if its exit code is not in ``ok``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        code = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=out).returncode
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    CPU_S.append(cpu)
    with open(log, "a") as out:
        out.write(f"\n(wall {took:.1f} s, CPU {cpu:.1f} s, {load()})\n")
    if code not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed with exit {code}: see {log}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lulesh", action="store_true", help="also ti_lulesh_512r against SimGrid")
    ap.add_argument("--repeat", type=int, default=3, help="paired replays of ti_lulesh_512r")
    ap.add_argument(
        "--tests", action="store_true", help="also time pip install -e '.[test]' && pytest"
    )
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    ap.add_argument(
        "--lulesh-only",
        action="store_true",
        help="only the ti_lulesh_512r step, with this environment's mpiuq (no clone, no install)",
    )
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, {load()} at the start")
    if args.lulesh_only:
        lulesh_only(args.repeat)
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="mpiuq-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "log.txt"
    clone = work / "mpiuq"
    (work / "shared").unlink(missing_ok=True)
    (work / "shared").symlink_to(REPO.parent / "shared")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "MPIUQ_", "VIRTUAL_ENV"))
    }
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    pip = str(venv / "bin" / "pip")
    subprocess.run([pip, "install", "-q", "--upgrade", "pip"], env=env, check=True)
    rows: list[tuple[str, str]] = []
    install_s = timed([pip, "install", "-e", "."], clone, env, log)
    rows.append(
        (
            "install: pip install -e . (fresh virtualenv)",
            f"{install_s:.1f} s wall, {CPU_S[-1]:.1f} s CPU",
        )
    )
    mpiuq = str(venv / "bin" / "mpiuq")
    job = [mpiuq, "campaign", "run", "experiments/stampede-ib.toml"]
    ran = (0, 1)  # 1: the campaign ran but a check warned (see its output)
    first_s = timed(job, clone, env | {"MPIUQ_RESULTS": str(work / "results-1")}, log, ran)
    second_s = timed(job, clone, env | {"MPIUQ_RESULTS": str(work / "results-2")}, log, ran)
    cpu = CPU_S
    rows.append(("first main job", f"{first_s:.1f} s wall, {cpu[-2]:.1f} s CPU"))
    rows.append(("second main job", f"{second_s:.1f} s wall, {cpu[-1]:.1f} s CPU"))
    ratio = first_s / second_s
    rows.append(
        ("first / second (target <= 1.5)", f"{ratio:.2f} {'met' if ratio <= 1.5 else 'NOT met'}")
    )
    timed(job, clone, env, log, ran)  # the README's command as written: ./mpiuq-results
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    rows.append(("git status after the main jobs", "clean" if not status.strip() else status))
    if args.lulesh:
        rows += lulesh(work, env, mpiuq, args.repeat)
    if args.tests:
        tests_s = timed([pip, "install", "-e", ".[test]"], clone, env, log)
        pytest_s = timed(
            [str(venv / "bin" / "pytest"), "-q", "-p", "no:cacheprovider"], clone, env, log
        )
        rows.append(("pip install -e '.[test]'", f"{tests_s:.1f} s"))
        rows.append(("pytest", f"{pytest_s:.1f} s"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"machine: {load()} at the end; log: {log}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


def lulesh_only(repeat: int) -> None:
    """The ti_lulesh_512r step alone, with the ``mpiuq`` beside this interpreter."""
    mpiuq = shutil.which("mpiuq", path=os.path.dirname(sys.executable)) or "mpiuq"
    env = dict(os.environ) | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    print(f"mpiuq: {mpiuq}; best of {repeat} paired runs")
    with tempfile.TemporaryDirectory(prefix="mpiuq-lulesh-") as tmp:
        rows = lulesh(Path(tmp), env, mpiuq, repeat)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"machine: {load()} at the end")


def lulesh(work: Path, env: dict[str, str], mpiuq: str, repeat: int) -> list[tuple[str, str]]:
    """ti_lulesh_512r: mpiuq first and second runs against SimGrid, best of ``repeat``."""
    trace_dir = DATA / "ti_lulesh_512r"
    if not trace_dir.is_dir():
        return [("ti_lulesh_512r", "skipped: ../shared/data/traces is absent")]
    trace = index_of(trace_dir, replayable=False)
    first, second, sg = [], [], []
    for i in range(repeat):
        cache = work / f"trace-cache-{i}"
        first.append(mpiuq_run(trace, cache, env, mpiuq))
        second.append(mpiuq_run(trace, cache, env, mpiuq))
        result = simgrid(trace_dir, 600.0)
        if result is None:
            return [("ti_lulesh_512r", "skipped: smpirun is absent")]
        sg.append(result)

    def best(runs: list[dict[str, float]], key: str) -> float:
        return min(r[key] for r in runs)

    sg_wall, sg_rss = best(sg, "wall_s"), best(sg, "maxrss_MiB")
    rate = max(r["events"] / r["loop_s"] for r in second if r["loop_s"] > 0)
    sg_cpu = best(sg, "cpu_s")
    out = [
        (
            "ti_lulesh_512r SimGrid smpirun",
            f"{sg_wall:.2f} s wall, {sg_cpu:.2f} s CPU, {sg_rss:.0f} MiB peak",
        )
    ]
    for side, runs, target in (("first run", first, 2.0), ("second run (warm)", second, 20.0)):
        wall, rss, cpu = best(runs, "wall_s"), best(runs, "maxrss_MiB"), best(runs, "cpu_s")
        speed = sg_wall / wall
        goal = speed >= target if target == 20.0 else wall <= 2.0 * sg_wall
        out.append(
            (
                f"ti_lulesh_512r mpiuq {side}",
                f"{wall:.2f} s wall, {cpu:.2f} s CPU ({speed:.1f}x SimGrid's wall, "
                f"{sg_cpu / cpu:.1f}x its CPU; target "
                f"{'>= 20x' if target == 20.0 else '<= 2x its time'}: {'met' if goal else 'NOT met'}), "
                f"{rss:.0f} MiB peak ({rss / sg_rss:.2f}x SimGrid's; target <= 2x: "
                f"{'met' if rss <= 2 * sg_rss else 'NOT met'})",
            )
        )
    out.append(
        (
            "ti_lulesh_512r event loop (analytic)",
            f"{rate / 1e6:.2f} M events/s (target >= 5 M/s: {'met' if rate >= 5e6 else 'NOT met'})",
        )
    )
    return out


if __name__ == "__main__":
    main()
