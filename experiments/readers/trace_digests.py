"""Digests of every shared trace as read today: the bit-identity check of the readers.

Every DUMPI, OTF2 and SimGrid TI trace in ``shared/data/traces`` (each trace folder,
each ``*_replayable`` index, each SimGrid example file, each single-rank DUMPI file and
the DUMPI clock options) is read without the cache and summarised by
:meth:`Trace.digest` (every column's bytes plus call names, notes and unsupported
counts; ``columns_digest`` leaves the informational notes out). ``--write`` stores
the table; ``--check`` reads everything again and lists the traces whose columns
changed, and any change of notes. ``tests/e2e/test_trace_digests.py`` runs the check
against ``tests/data/trace_digests.json``, written with the readers as they were
before the compiled TI parser and the hardening (same digests, notes included).

Usage::

    python experiments/readers/trace_digests.py --write tests/data/trace_digests.json
    python experiments/readers/trace_digests.py --check tests/data/trace_digests.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mpiuq.simulator.trace import read_trace

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"


def shared_traces(data: Path = DATA) -> list[tuple[str, dict[str, object]]]:
    """(path relative to ``data``, reader options) of every shared trace to check."""
    out: list[tuple[str, dict[str, object]]] = []
    for d in sorted(p for p in data.iterdir() if p.is_dir()):
        name = d.name
        if "ti_" in name:
            if name == "ti_simgrid_replay_examples":
                # actions0/1.txt are the two halves listed by split_traces
                skip = {"README.md", "actions0.txt", "actions1.txt"}
                out += [(f"{name}/{f.name}", {}) for f in sorted(d.iterdir()) if f.name not in skip]
            else:
                out.append((name, {}))
                out += [(f"{name}/{f.name}", {}) for f in sorted(d.glob("*_replayable.txt"))]
        elif "otf2_" in name:
            out.append((name, {}))
        elif "dumpi_" in name:
            for meta in sorted(d.rglob("*.meta")):
                out.append((str(meta.relative_to(data)), {}))
            if name == "dumpi_designforward_single_rank":
                out += [(f"{name}/{f.name}", {}) for f in sorted(d.glob("*.bin"))]
    out.append(("dumpi_sstdumpi_testtrace_4r/testtrace-0000.bin", {}))
    out += [("gen_dumpi_lulesh_8r", {"clock": c}) for c in ("wall", "cpu")]
    out += [("gen_ti_lulesh_8r", {"flop_rate": 2.5e9})]
    return out


def read_digest(rel: str, options: dict[str, object], data: Path = DATA) -> dict[str, object]:
    """Digest, operation count and notes of one shared trace read without the cache."""
    trace = read_trace(data / rel, use_cache=False, **options)  # type: ignore[arg-type]
    return {
        "path": rel,
        "options": options,
        "digest": trace.digest(),
        "columns_digest": trace.digest(notes=False),
        "n_ops": trace.n_ops,
        "notes": list(trace.notes),
        "unsupported": dict(trace.unsupported),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", type=Path, help="store the digests in this JSON file")
    g.add_argument("--check", type=Path, help="compare against this JSON file")
    args = ap.parse_args()
    if not DATA.is_dir():
        print(f"shared traces not found at {DATA}")
        return 1
    if args.write:
        rows = []
        for rel, opts in shared_traces():
            t0 = time.perf_counter()
            rows.append(read_digest(rel, opts))
            print(f"{rel:60s} {json.dumps(opts):24s} {time.perf_counter() - t0:6.2f} s")
        args.write.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"{len(rows)} digests written to {args.write}")
        return 0
    expected = json.loads(args.check.read_text())
    bad = 0
    for row in expected:
        got = read_digest(row["path"], row["options"])
        same = got["columns_digest"] == row["columns_digest"]
        bad += not same
        print(f"{'same' if same else 'DIFFERENT':9s} {row['path']} {json.dumps(row['options'])}")
        for key in ("n_ops", "notes", "unsupported"):
            if got[key] != row[key]:
                print(f"    {key}: {row[key]!r} -> {got[key]!r}")
    print(f"{len(expected) - bad} of {len(expected)} traces bit-identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
