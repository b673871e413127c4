"""Single-byte flips and truncations of every file of the cache entries of the shared TI traces.

For each trace, one replay fills a fresh cache (the parse cache's ``<key>.h5`` and its
layout, the program cache's ``.mpiuqprog`` folder); then, for every file of both entries,
each byte is flipped (XOR 0xFF) and the file cut to each shorter length, one case at a
time, and the entry's verify step (what ``mpiuq replay`` runs before it reads an entry)
is asked whether it refuses the damaged entry (``detected``: the replay deletes and
rebuilds it); if not, the entry's reader gives its content: ``same`` (the undamaged
content) or ``silent`` (other content accepted). Files up to ``--limit`` bytes are swept
exhaustively (``--all-bytes``: every file); in larger ones every byte of the first and
last 4 KiB and evenly spaced bytes between, ``--limit`` cases per file and kind. Each
flip is checked by hashing the whole entry again, so a file of ``n`` bytes costs about
``n`` times the entry's size: seconds for the small traces, days for a 63 MB column. Then ``--replays`` damaged caches per file (flips and
cuts at random positions) go through the whole ``mpiuq replay``: ``rebuilt`` (same
results, sound entries written again), ``silent`` (other results) or ``deadlock`` (a false
deadlock). Prints one row per trace and the totals.

Usage::

    python experiments/fuzz/fuzz_cache.py [--traces ti_a,ti_b] [--limit 20000 | --all-bytes]
        [--replays 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from cache_fuzzing import flipped, make_entries, replay_outcome, sweep_file  # noqa: E402

TRACES = ROOT.parent / "shared" / "data" / "traces"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    names = sorted(p.name for p in TRACES.glob("ti_*")) if TRACES.is_dir() else []
    ap.add_argument("--traces", default=",".join(names))
    ap.add_argument("--limit", type=int, default=20_000, help="cases per file and kind")
    ap.add_argument(
        "--all-bytes", action="store_true", help="every byte and length of every file (no limit)"
    )
    ap.add_argument("--replays", type=int, default=2, help="whole replays per file and kind")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"{'trace':32s} {'files':>5s} {'bytes':>11s} {'flips':>9s} {'exhaustive':>10s} "
        f"{'cuts':>9s} {'detected':>9s} {'same':>5s} {'silent':>6s} {'replays':>7s} "
        f"{'rebuilt':>7s} {'silent':>6s} {'deadlock':>8s} {'time s':>7s}",
        flush=True,
    )
    total: collections.Counter[str] = collections.Counter()
    for name in args.traces.split(","):
        t0 = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix="fuzz-cache-"))
        try:
            entries = make_entries(TRACES / name, work / "cache")
            row: collections.Counter[str] = collections.Counter()
            for file in entries.files():
                size = file.stat().st_size
                row["files"] += 1
                row["bytes"] += size
                limit = None if args.all_bytes else args.limit
                row["exhaustive"] += limit is None or size <= limit
                counts = sweep_file(entries, file, limit, verify_first=True)
                for kind, key in (("flip", "flips"), ("truncation", "cuts")):
                    row[key] += sum(counts[kind].values())
                    for outcome, n in counts[kind].items():
                        row[outcome] += n
                data = file.read_bytes()
                for _ in range(args.replays):
                    pos = int(rng.integers(0, len(data)))
                    for damage in (flipped(data, pos), data[:pos]):
                        row["replays"] += 1
                        row["replay:" + replay_outcome(entries, file, damage)] += 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
        total.update(row)
        print(
            f"{name:32s} {row['files']:5d} {row['bytes']:11d} {row['flips']:9d} "
            f"{row['exhaustive']:10d} {row['cuts']:9d} {row['detected']:9d} {row['same']:5d} "
            f"{row['silent']:6d} {row['replays']:7d} {row['replay:rebuilt']:7d} "
            f"{row['replay:silent']:6d} {row['replay:deadlock']:8d} "
            f"{time.perf_counter() - t0:7.0f}",
            flush=True,
        )
    print(
        f"total: {total['flips']} flips and {total['cuts']} cuts of "
        f"{total['files']} files ({total['exhaustive']} swept byte by byte), "
        f"{total['detected']} detected, {total['same']} same, {total['silent']} silent; "
        f"{total['replays']} whole replays: {total['replay:rebuilt']} rebuilt, "
        f"{total['replay:silent']} silent, {total['replay:deadlock']} false deadlocks, "
        f"{total['replay:failed']} failed"
    )
    bad = total["silent"] + total["replay:silent"] + total["replay:deadlock"]
    return 1 if bad or total["replay:failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
