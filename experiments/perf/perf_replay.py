"""Replay throughput and peak memory on the largest TI traces, against SimGrid's own replayer.

For each trace it prints, for mpiuq (analytic model, trace already parsed into the
HDF5 parse cache; the uncached parse time is printed separately with ``--parse``):
actions per second = trace actions (lines of the as-recorded files, the count the
trace READMEs give) / (cached read + lowering + simulation seconds), engine events
per second, and the peak resident memory of a fresh process doing only that replay
(``resource.getrusage(...).ru_maxrss``); the one-off load of the compiled loops from
numba's cache is shown apart. For SimGrid 3.32 (``smpirun -replay`` with
``smpireplaymain``, the command line of the trace README, on the ``*_replayable``
variant SimGrid needs) it prints actions per second counted the same way (lines
of the files it replays, over the wall time of the whole ``smpirun``), CPU time and
peak memory of the child. Each side runs ``--repeat`` times in fresh processes;
best and median are shown, because this machine's timings vary by up to a third
from run to run. SimGrid is skipped with "smpirun not found" when it is not installed.

Usage::

    python experiments/perf/perf_replay.py [--traces ti_lulesh_512r,...|all] [--repeat 3]
        [--no-simgrid] [--parse]

``--traces all`` runs every shared mini-app TI trace (those with an index and a
SimGrid platform file) and ends with the overall figure: all actions over all
best times, per side.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"
DEFAULT = ("ti_lulesh_512r", "ti_nas_mg_A_256r", "ti_lulesh_64r")
REPLAYERS = (
    "/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain",
    "/usr/lib/simgrid/smpireplaymain",
)


def platform_of(trace_dir: Path) -> Path:
    """The trace's SimGrid platform file; the shared ``platform_cluster1024.xml`` (the same
    cluster every ``ti_*`` README records with) when its folder lacks a copy."""
    own = sorted(trace_dir.glob("platform_*.xml"))
    return own[0] if own else next(DATA.glob("ti_*/platform_cluster1024.xml"))


def all_ti_traces() -> list[str]:
    """Shared TI trace folders with an index file and a SimGrid platform, by name."""
    return sorted(
        d.name
        for d in DATA.glob("ti_*")
        if index_of(d, replayable=False).is_file() and any(d.glob("platform_*.xml"))
    )


def index_of(trace_dir: Path, replayable: bool) -> Path:
    """The TI index file (as recorded, or the SimGrid-replayable variant when there is one)."""
    name = trace_dir.name.removeprefix("ti_")
    variant = trace_dir / f"{name}_replayable.txt"
    return variant if replayable and variant.is_file() else trace_dir / f"{name}.txt"


def rank_files(index: Path) -> list[Path]:
    """Per-rank files named by an index (``.gz`` where the directory holds gzipped files)."""
    out = []
    for line in index.read_text().split():
        p = index.parent / line
        out.append(p if p.exists() else p.with_name(p.name + ".gz"))
    return out


def count_actions(index: Path) -> int:
    """Number of action lines over all per-rank files."""
    n = 0
    for f in rank_files(index):
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt") as fh:
            n += sum(1 for line in fh if line.strip())
    return n


def one_replay(trace_dir: Path) -> dict[str, float]:
    """Replay one trace in this process (called in a fresh subprocess by ``main``)."""
    from mpiuq.simulator.engine import simulate
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.motifs import MotifSpec, synthesize

    try:
        from mpiuq.simulator.networks import network_by_name
    except ImportError:  # checkouts before network.py became networks/ (for ab_versions.py)
        from mpiuq.simulator.network import network_by_name  # type: ignore[no-redef]
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay.run import ReplaySetup
    from mpiuq.simulator.trace import read_trace

    tw = time.perf_counter()
    # load the compiled lowering and simulation loops from numba's cache
    tiny = lower_trace(synthesize(MotifSpec("halo3d", n_ranks=8, iterations=1)))
    simulate(tiny.program, SimParams(), network_by_name("analytic"))
    t0, c0 = time.perf_counter(), time.process_time()
    trace = read_trace(index_of(trace_dir, replayable=False))
    t1 = time.perf_counter()
    params = SimParams()
    low = lower_trace(trace, ReplaySetup().lowering_options(params))
    t2, c2 = time.perf_counter(), time.process_time()
    run = simulate(low.program, params, network_by_name("analytic"))
    t3, c3 = time.perf_counter(), time.process_time()
    return {
        "kernel_load_s": t0 - tw,
        "read_s": t1 - t0,
        "lower_s": t2 - t1,
        "simulate_s": t3 - t2,
        "simulate_cpu_s": c3 - c2,
        "replay_cpu_s": c3 - c0,
        "events": float(run.n_events),
        "trace_ops": float(trace.n_ops),
        "program_ops": float(low.program.n_ops),
        "simulated_time_s": run.simulated_time_s,
        "maxrss_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_child(trace_dir: Path, warm: bool) -> dict[str, float]:
    """``one_replay`` in a fresh interpreter (own peak memory); ``warm`` runs it twice
    and keeps the second (the first fills the trace and numba caches)."""
    cmd = [sys.executable, __file__, "--one", str(trace_dir)]
    if warm:  # first run fills the trace cache and the numba cache
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def uncached_parse(trace_dir: Path) -> dict[str, float]:
    """Parse one trace without the cache in this process (a fresh child of ``main``)."""
    from mpiuq.simulator.trace import read_trace

    t0 = time.perf_counter()
    read_trace(index_of(trace_dir, replayable=False), use_cache=False)
    return {
        "parse_s": time.perf_counter() - t0,
        "maxrss_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def uncached_parse_child(trace_dir: Path) -> dict[str, float]:
    """``uncached_parse`` in a fresh interpreter, so its peak memory is its own: a parse in
    this process would raise the peak every later child inherits through fork."""
    cmd = [sys.executable, __file__, "--parse-one", str(trace_dir)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def compile_bytecode() -> list[str]:
    """Byte-compile the installed ``mpiuq`` packages (as ``pip install`` does); their folders."""
    folders = []
    for name in ("mpiuq", "mpiuq.simulator", "mpiuq.calibration", "mpiuq.surrogate"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"{name} is not installed (pip install -e .)")
        folders += [f for f in spec.submodule_search_locations if f not in folders]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True)
    return folders


_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'cpu_s': u.ru_utime + u.ru_stime, 'maxrss_KiB': u.ru_maxrss}))\n"
    "sys.exit(code)\n"
)


def copy_uncompressed(index: Path, work: Path) -> None:
    """Copy a TI index and its per-rank files into ``work``, same relative layout, the
    gzipped ones decompressed (SimGrid reads plain text only)."""
    for line in index.read_text().split():
        src = index.parent / line
        dst = work / line
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.exists():
            shutil.copyfile(src, dst)
        else:
            with gzip.open(src.with_name(src.name + ".gz"), "rb") as fi, open(dst, "wb") as fo:
                shutil.copyfileobj(fi, fo)
    shutil.copyfile(index, work / index.name)


def simgrid(
    trace_dir: Path, timeout_s: float, cfg: tuple[str, ...] = ()
) -> dict[str, float] | None:
    """Time SimGrid's replayer on the replayable variant; None when SimGrid is absent.

    ``cfg``: extra ``--cfg=KEY:VALUE`` options of smpirun.
    """
    smpirun = shutil.which("smpirun")
    replayer = next((r for r in REPLAYERS if Path(r).exists()), shutil.which("smpireplaymain"))
    if smpirun is None or replayer is None:
        return None
    index = index_of(trace_dir, replayable=True)
    n_ranks = len(index.read_text().split())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copy_uncompressed(index, work)
        platform = platform_of(trace_dir)
        shutil.copyfile(platform, work / platform.name)
        hosts = work / "hostfile"
        hosts.write_text("".join(f"node-{i}\n" for i in range(1024)))
        cmd = [
            smpirun, "-np", str(n_ranks), "-platform", platform.name, "-hostfile", "hostfile",
            *(f"--cfg={c}" for c in cfg), "-replay", index.name, replayer,
        ]  # fmt: skip
        # a wrapper interpreter reports the usage of its only child (smpirun and its process)
        wrapper = [sys.executable, "-c", _WRAPPER, *cmd]
        t0 = time.perf_counter()
        proc = subprocess.run(
            wrapper, cwd=work, capture_output=True, text=True, timeout=timeout_s, check=False
        )
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"smpirun failed ({proc.returncode}): {proc.stderr[-500:]}")
    sim = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Simulation time" in ln]
    usage = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "wall_s": wall,
        "cpu_s": usage["cpu_s"],
        "maxrss_MiB": usage["maxrss_KiB"] / 1024,
        "simulated": float(sim[-1].split()[-1]) if sim else float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--traces", default=",".join(DEFAULT))
    ap.add_argument("--no-simgrid", action="store_true")
    ap.add_argument("--parse", action="store_true", help="also time an uncached parse")
    ap.add_argument("--timeout", type=float, default=600.0, help="SimGrid time limit per trace, s")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side (best and median shown)")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--parse-one", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one_replay(args.one)))
        return
    if args.parse_one is not None:
        print(json.dumps(uncached_parse(args.parse_one)))
        return
    n = args.repeat
    print(
        f"machine: {os.cpu_count()} CPUs; mpiuq model: analytic; SimGrid: smpirun -replay; "
        f"each side run {n} times (best and median shown)"
    )
    names = all_ti_traces() if args.traces == "all" else args.traces.split(",")
    totals = {"traces": 0.0, "actions": 0.0, "mpiuq_s": 0.0, "sg_actions": 0.0, "sg_s": 0.0}
    for name in names:
        trace_dir = DATA / name
        if not trace_dir.is_dir():
            print(f"{name}: not found under {DATA}, skipped")
            continue
        actions = count_actions(index_of(trace_dir, replayable=False))
        runs = [run_child(trace_dir, warm=(i == 0)) for i in range(n)]
        # replay time = cached read + lowering + simulation (the one-off kernel load excluded)
        total = sorted(r["read_s"] + r["lower_s"] + r["simulate_s"] for r in runs)
        r = min(runs, key=lambda x: x["read_s"] + x["lower_s"] + x["simulate_s"])
        best, med = total[0], statistics.median(total)
        print(
            f"{name}: {actions} actions, {int(r['trace_ops'])} trace ops -> "
            f"{int(r['program_ops'])} lowered ops, {int(r['events'])} events\n"
            f"  mpiuq   : read (cache) {r['read_s']:.3f} s + lower {r['lower_s']:.3f} s + simulate "
            f"{r['simulate_s']:.3f} s = {best:.3f} s (median {med:.3f} s) -> "
            f"{actions / best:,.0f} actions/s (median {actions / med:,.0f}); "
            f"{r['events'] / r['simulate_s']:,.0f} events/s; peak RSS {r['maxrss_MiB']:.0f} MiB; "
            f"simulated {r['simulated_time_s']:.6g} s; (one-off kernel load from the numba "
            f"cache {r['kernel_load_s']:.2f} s)\n"
            f"  mpiuq   : CPU seconds, best of {n}: simulate "
            f"{min(x['simulate_cpu_s'] for x in runs):.3f} s, replay "
            f"{min(x['replay_cpu_s'] for x in runs):.3f} s"
        )
        if args.parse:
            parsed = uncached_parse_child(trace_dir)
            parse = parsed["parse_s"]
            end_to_end = parse + r["lower_s"] + r["simulate_s"]
            print(
                f"  mpiuq   : uncached parse {parse:.2f} s (peak RSS of the parsing process "
                f"{parsed['maxrss_MiB']:.0f} MiB) -> end to end {actions / end_to_end:,.0f} "
                "actions/s"
            )
        if args.no_simgrid:
            continue
        try:
            sgs = [simgrid(trace_dir, args.timeout) for _ in range(n)]
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"  SimGrid : failed: {exc}")
            continue
        if sgs[0] is None:
            print("  SimGrid : smpirun not found (apt-get install libsimgrid-dev), skipped")
            continue
        done = [sg for sg in sgs if sg is not None]
        walls = sorted(sg["wall_s"] for sg in done)
        sg = min(done, key=lambda x: x["wall_s"])
        sg_best, sg_med = walls[0], statistics.median(walls)
        sg_actions = count_actions(index_of(trace_dir, replayable=True))
        for key, value in (
            ("traces", 1),
            ("actions", actions),
            ("mpiuq_s", best),
            ("sg_actions", sg_actions),
            ("sg_s", sg_best),
        ):
            totals[key] += value
        print(
            f"  SimGrid : {sg_actions} actions (SimGrid-replayable index) in {sg_best:.2f} s wall "
            f"(median {sg_med:.2f} s), {sg['cpu_s']:.2f} s CPU -> {sg_actions / sg_best:,.0f} "
            f"actions/s (median {sg_actions / sg_med:,.0f}); peak RSS {sg['maxrss_MiB']:.0f} MiB; "
            f"simulated {sg['simulated']:.6g} s\n"
            f"  speed-up in actions/s (each counting the lines it replays): "
            f"{(actions / best) / (sg_actions / sg_best):.1f}x best vs best, "
            f"{(actions / med) / (sg_actions / sg_med):.1f}x median vs median; without the cached "
            f"read {(actions / (best - r['read_s'])) / (sg_actions / sg_best):.1f}x best vs best"
        )
    if totals["traces"] > 1:
        ours_all = totals["actions"] / totals["mpiuq_s"]
        theirs_all = totals["sg_actions"] / totals["sg_s"]
        print(
            f"overall ({totals['traces']:.0f} traces, best runs): mpiuq {ours_all:,.0f} actions/s, "
            f"SimGrid {theirs_all:,.0f} actions/s -> {ours_all / theirs_all:.1f}x"
        )


if __name__ == "__main__":
    main()
