"""Every single-byte flip and every truncation of every file of the shared TI traces' cache
entries, each checked against the entry's per-chunk digests.

For each trace of ``tests/shared_data.py``'s ``SHARED_TI_TRACES``, one replay fills a
fresh cache (the parse cache's ``<key>.h5`` and its sealed layout, the program cache's
``.mpiuqprog`` folder with its sealed ``checksums.json``). Then, for every file:

* a data file (the ``.h5`` entry, every member of the program entry) has its size and
  one XXH3-64 digest per 4 KiB chunk recorded in the layout or manifest
  (:mod:`mpiuq.simulator.checksums`), and the verify step the caches run before reading
  an entry refuses it unless every chunk matches. A flip changes one chunk only (every
  other chunk is byte for byte the undamaged one, whose digest matches: checked first),
  so the flip is refused exactly when that chunk's digest differs: each of the file's
  ``n`` flips is checked by hashing its own chunk again. A truncation to any shorter
  length fails the recorded size (checked before any hashing);
* a sealed file (the layout, the manifest) is checked whole, as the verify step reads it
  (:func:`~mpiuq.simulator.checksums.parse_sealed_json`), for every flip and length.

A flip or cut that the digests would let through is written to disk and run through the
real verify step and reader (``same``: the reader gives the undamaged content;
``silent``: other content accepted). ``--confirm`` flips and cuts per file (random
positions) also go through the real verify step on disk, to confirm the shortcut.

Prints per trace: files, bytes, flips tried, detected, silent, truncations, detected,
silent, and the CPU seconds of the sweep; exits 1 on any silent case or a confirmation
that disagrees.

Usage::

    nice -n 10 python experiments/fuzz/sweep_cache_chunks.py [--traces a,b] [--confirm 20]
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

from cache_fuzzing import CacheEntries, flipped, make_entries, verify_outcome  # noqa: E402
from shared_data import SHARED_TI_TRACES, TRACES  # noqa: E402

from mpiuq.simulator.checksums import (  # noqa: E402
    CHUNK_BYTES,
    MANIFEST,
    ChecksumError,
    parse_sealed_json,
    verify_manifest,
)
from mpiuq.simulator.trace.cache.layout import layout_path, verify_entry  # noqa: E402


def recorded(entries: CacheEntries) -> dict[Path, tuple[int, str]]:
    """The recorded size and chunk digests of every data file of both entries (after
    checking that the undamaged entries pass their verify step)."""
    layout = verify_entry(entries.trace_entry)
    verify_manifest(entries.program_dir)
    doc = parse_sealed_json(
        (entries.program_dir / MANIFEST).read_bytes(), entries.program_dir / MANIFEST
    )
    out = {entries.trace_entry: (layout["size"], layout["chunks"])}
    for name, (size, chunks) in doc["files"].items():
        out[entries.program_dir / name] = (size, chunks)
    return out


def with_content(file: Path, data: bytes, outcome_of: CacheEntries) -> str:
    """:func:`verify_outcome` with ``file`` holding ``data`` (put back afterwards)."""
    original = file.read_bytes()
    try:
        file.write_bytes(data)
        return verify_outcome(outcome_of, file)
    finally:
        file.write_bytes(original)


def sweep_data_file(
    entries: CacheEntries, file: Path, size: int, chunks: str
) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Every flip (by its chunk) and every truncation (by the recorded size)."""
    import xxhash

    digest = xxhash.xxh3_64_intdigest
    data = file.read_bytes()
    assert len(data) == size
    expected = np.frombuffer(bytes.fromhex(chunks), dtype=">u8").tolist()
    flips: collections.Counter[str] = collections.Counter()
    cuts: collections.Counter[str] = collections.Counter()
    let_through = []
    for k, start in enumerate(range(0, size, CHUNK_BYTES)):
        chunk = bytearray(data[start : start + CHUNK_BYTES])
        want = expected[k]
        assert digest(chunk) == want, (file, k)  # the undamaged chunk matches
        for i in range(len(chunk)):
            chunk[i] ^= 0xFF
            if digest(chunk) == want:
                let_through.append(start + i)
            chunk[i] ^= 0xFF
    flips["detected"] = size - len(let_through)
    for pos in let_through:  # none expected: through the real verify step and reader
        flips[with_content(file, flipped(data, pos), entries)] += 1
    cuts["detected"] = size  # every length 0..size-1 differs from the recorded size
    return flips, cuts


def sweep_sealed_file(
    entries: CacheEntries, file: Path
) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Every flip and truncation of a sealed JSON file, checked whole as the verify step
    reads it first (one that passed its seal would go through the verify step and reader)."""
    data = file.read_bytes()
    out = []
    for cases in (
        (flipped(data, p) for p in range(len(data))),
        (data[:n] for n in range(len(data))),
    ):
        counts: collections.Counter[str] = collections.Counter()
        for damaged in cases:
            try:
                parse_sealed_json(damaged, file)
            except ChecksumError:
                counts["detected"] += 1
            else:  # none expected
                counts[with_content(file, damaged, entries)] += 1
        out.append(counts)
    return out[0], out[1]


def confirm(entries: CacheEntries, file: Path, n: int, rng: np.random.Generator) -> int:
    """``n`` random flips and cuts through the real verify step on disk: how many were
    not refused (the chunk shortcut says every one is)."""
    data = file.read_bytes()
    missed = 0
    for pos in rng.integers(0, len(data), size=n) if data else ():
        for damaged in (flipped(data, int(pos)), data[: int(pos)]):
            missed += with_content(file, damaged, entries) != "detected"
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default=",".join(SHARED_TI_TRACES))
    ap.add_argument("--confirm", type=int, default=20, help="real verify cases per file")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"{'trace':32s} {'files':>5s} {'bytes':>11s} {'flips':>11s} {'detected':>11s} "
        f"{'silent':>6s} {'cuts':>11s} {'detected':>11s} {'silent':>6s} {'confirm':>7s} "
        f"{'missed':>6s} {'CPU s':>7s}",
        flush=True,
    )
    total: collections.Counter[str] = collections.Counter()
    cpu_total = 0.0
    for name in args.traces.split(","):
        if not (TRACES / name).exists():
            print(f"{name:32s} (absent)", flush=True)
            continue
        work = Path(tempfile.mkdtemp(prefix="sweep-chunks-"))
        try:
            entries = make_entries(TRACES / name, work / "cache")
            t0 = time.process_time()
            records = recorded(entries)
            row: collections.Counter[str] = collections.Counter()
            for file in entries.files():
                row["files"] += 1
                row["bytes"] += file.stat().st_size
                if file in records:
                    flips, cuts = sweep_data_file(entries, file, *records[file])
                else:
                    assert file.name == MANIFEST or file == layout_path(entries.trace_entry)
                    flips, cuts = sweep_sealed_file(entries, file)
                row["flips"] += sum(flips.values())
                row["cuts"] += sum(cuts.values())
                for kind, counts in (("flip", flips), ("cut", cuts)):
                    for outcome, n in counts.items():
                        row[f"{kind}:{outcome}"] += n
                row["confirm"] += 2 * args.confirm
                row["missed"] += confirm(entries, file, args.confirm, rng)
            cpu = time.process_time() - t0
        finally:
            shutil.rmtree(work, ignore_errors=True)
        total.update(row)
        cpu_total += cpu
        silent_f, silent_c = row["flip:silent"], row["cut:silent"]
        print(
            f"{name:32s} {row['files']:5d} {row['bytes']:11d} {row['flips']:11d} "
            f"{row['flip:detected']:11d} {silent_f:6d} {row['cuts']:11d} "
            f"{row['cut:detected']:11d} {silent_c:6d} {row['confirm']:7d} {row['missed']:6d} "
            f"{cpu:7.0f}",
            flush=True,
        )
    silent = total["flip:silent"] + total["cut:silent"]
    print(
        f"total: {total['files']} files, {total['bytes']} bytes: {total['flips']} flips "
        f"({total['flip:detected']} detected), {total['cuts']} truncations "
        f"({total['cut:detected']} detected), {silent} silent, "
        f"{total['flip:same'] + total['cut:same']} not detected but read back the same; "
        f"{total['confirm']} confirmed on disk, {total['missed']} missed; "
        f"sweep CPU {cpu_total:.0f} s (building the entries not counted)"
    )
    return 1 if silent or total["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
