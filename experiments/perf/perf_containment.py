"""Cost of running the DUMPI and OTF2 C readers in a child process (crash containment).

For every shared DUMPI and OTF2 trace it reads the trace the way ``read_dumpi`` /
``read_otf2`` do (in a forked child that cannot take the process down when the C
library crashes) and, on these known-good files only, directly in this process as
before, and prints both times (best of ``--repeat``), the difference and the
overhead in percent; it checks that both give the same columns
(:meth:`Trace.digest` without the notes).

Usage::

    python experiments/perf/perf_containment.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mpiuq.simulator.trace.dumpi import reader as dumpi
from mpiuq.simulator.trace.dumpi.files import find_dumpi_files
from mpiuq.simulator.trace.otf2 import reader as otf2_reader
from mpiuq.simulator.trace.otf2.reader import find_otf2_anchor

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"


def shared_traces() -> list[Path]:
    """Every shared DUMPI trace (each .meta, each single-rank file) and OTF2 archive."""
    metas = sorted(DATA.glob("*dumpi*/**/*.meta"))
    singles = sorted((DATA / "dumpi_designforward_single_rank").glob("*.bin"))
    return metas + singles + sorted(DATA.glob("*otf2_*"))


def _direct(path: Path):  # type: ignore[no-untyped-def]
    if "otf2" in path.name:
        anchor = find_otf2_anchor(path)
        return lambda: otf2_reader._read_in_process(anchor, None)
    files, world = find_dumpi_files(path)
    return lambda: dumpi._read_in_process(path, files, world, "auto", None)


def _contained(path: Path):  # type: ignore[no-untyped-def]
    if "otf2" in path.name:
        return lambda: otf2_reader.read_otf2(path)
    return lambda: dumpi.read_dumpi(path)


def _best(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"shared traces not found at {DATA}")
        return 1
    print(
        f"{'trace':64s} {'ops':>7s} {'in-proc s':>9s} {'child s':>8s} {'+ms':>6s} {'+%':>5s} same"
    )
    tot_in = tot_child = 0.0
    for path in shared_traces():
        t_in, direct = _best(_direct(path), args.repeat)
        t_child, contained = _best(_contained(path), args.repeat)
        tot_in += t_in
        tot_child += t_child
        same = direct.digest(notes=False) == contained.digest(notes=False)  # type: ignore[attr-defined]
        rel = str(path.relative_to(DATA))
        print(
            f"{rel:64s} {contained.n_ops:7d} {t_in:9.3f} {t_child:8.3f} "  # type: ignore[attr-defined]
            f"{(t_child - t_in) * 1e3:6.1f} {100 * (t_child / t_in - 1):5.0f} {'yes' if same else 'NO'}"
        )
    print(f"{'all':64s} {'':7s} {tot_in:9.3f} {tot_child:8.3f} {(tot_child - tot_in) * 1e3:6.0f} "
          f"{100 * (tot_child / tot_in - 1):5.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
