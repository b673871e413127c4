"""What verifying a cache entry costs a cached replay (the second ``mpiuq replay`` of a trace).

For each trace: one ``mpiuq replay`` fills a fresh cache; then, best of ``--repeat``
in this process, the time of

* ``verify``: checking the program entry's ``checksums.json`` (every member's size and
  the xxh3-64 digest of each of its 4 KiB chunks, on two threads): what a cached replay
  does before it reads the entry;
* ``load``: :func:`~mpiuq.simulator.program.cache.find_cached_program`, the whole load
  of the cached program (``verify`` included), and ``load - verify``, the load as before;
* ``hash 1 thread`` and ``crc32``: the entry's bytes hashed whole (one digest per
  member, as before the chunk digests) on one thread with xxh3-64 and with
  ``zlib.crc32`` (the standard library's fastest), for comparison;

then the whole second run as a user runs it (``mpiuq replay TRACE --model analytic -q``,
its own process: wall and CPU seconds, best of ``--repeat``). Prints one row per trace.

Usage::

    python experiments/perf/perf_cache_checksums.py [--traces ti_lulesh_512r,ti_nekbone_64r]
        [--repeat 5]
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
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT.parent / "shared" / "data" / "traces"


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def whole_run(trace: Path, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``mpiuq replay`` in its own process."""
    mpiuq = shutil.which("mpiuq") or str(Path(sys.executable).with_name("mpiuq"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [mpiuq, "replay", str(trace), "--model", "analytic", "-q"],
        check=True,
        capture_output=True,
        env={**os.environ, "MPIUQ_CACHE_DIR": str(cache)},
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    import xxhash

    from mpiuq.simulator.checksums import verify_manifest
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.program.cache import find_cached_program, program_entry
    from mpiuq.simulator.replay.run import ReplaySetup
    from mpiuq.simulator.trace.read import locate_trace

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="ti_lulesh_512r,ti_nekbone_64r")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(
        f"{'trace':18s} {'entry MB':>8s} {'verify ms':>9s} {'load ms':>8s} {'load-verify':>11s} "
        f"{'xxh3 1 thr ms':>13s} {'crc32 ms':>8s} {'2nd run wall s':>14s} {'CPU s':>6s}"
    )
    for name in args.traces.split(","):
        trace = TRACES / name
        cache = Path(tempfile.mkdtemp(prefix="perf-checksums-"))
        try:
            whole_run(trace, cache)  # fills the cache
            where = locate_trace(trace, cache_dir=cache)
            options = ReplaySetup(models=("analytic",)).lowering_options(SimParams())
            entry = program_entry(where.entry, options)  # type: ignore[arg-type]
            files = list(entry.iterdir())
            size = sum(f.stat().st_size for f in files)
            datas = [f.read_bytes() for f in files]
            trace_entry = where.entry
            verify = best(lambda e=entry: verify_manifest(e), args.repeat)
            load = best(lambda t=trace_entry, o=options: find_cached_program(t, o), args.repeat)
            one = best(lambda d=datas: [xxhash.xxh3_64_intdigest(x) for x in d], args.repeat)
            crc = best(lambda d=datas: [zlib.crc32(x) for x in d], args.repeat)
            runs = [whole_run(trace, cache) for _ in range(args.repeat)]
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            print(
                f"{name:18s} {size / 1e6:8.1f} {verify * 1e3:9.1f} {load * 1e3:8.1f} "
                f"{(load - verify) * 1e3:11.1f} {one * 1e3:13.1f} {crc * 1e3:8.1f} "
                f"{wall:14.2f} {cpu:6.2f}",
                flush=True,
            )
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
