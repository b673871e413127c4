"""Agreement of ``mpiuq replay --platform P --hostfile H --like simgrid`` with SimGrid 3.32.

For every reference of ``references.json`` (recorded by ``record.py``: SimGrid's
simulated time of an own program run online, or of a shared TI trace replayed by
``smpirun -replay``), replays the same trace on the same platform and hostfile with
mpiuq's command line (in this process: ``mpiuq replay TRACE --platform P --hostfile H
--like simgrid --json --quiet``) and compares the simulated times. Limits (issue
"Network fidelity under contention"): 2% on the contention-free ``flat`` cluster, 5% on
the shared-backbone cluster, the fat-tree and the dragonfly.

mpiuq replays the traces as recorded (the shared traces' originals, not SimGrid's
``_replayable`` variants; the own programs' traces as SMPI wrote them). Where mpiuq's TI
reader still refuses SMPI's any-tag code ``-444`` (its acceptance is another branch's
work), the trace is replayed from a copy with ``-444`` written as ``-1``, the reader's
own any-tag code, and the row says so.

Writes the table to ``docs/validation/simgrid.md`` and prints it.

Usage::

    python experiments/simgrid_refs/validate.py [--only NAME,...] [--no-write]
        [--references FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from shared_inputs import mpiuq_input  # noqa: E402

DOC = ROOT / "docs" / "validation" / "simgrid.md"
LIMITS = {"flat": 0.02, "backbone": 0.05, "fattree": 0.05, "dragonfly": 0.05, "torus": 0.05}
PLATFORM_NOTES = {
    "flat": "contention-free cluster: private links 12.5 GB/s, 1 us, no backbone",
    "backbone": "shared backbone: private links 12.5 GB/s, 1 us, backbone 40 GB/s",
    "fattree": "SimGrid fat-tree 3;8,8,16;1,8,8;1,1,1 (links 12.5 GB/s, 1 us)",
    "dragonfly": "SimGrid dragonfly 8,2;4,2;8,2;4 (links 12.5 GB/s, 1 us)",
    "torus": "SimGrid torus 8,8,16 (links 12.5 GB/s, 1 us; beyond the issue's four)",
}


#: Shared traces and platforms without a SimGrid reference, and why (none: every shared
#: TI trace has one on every platform; SimGrid's replay of ``ti_lulesh_512r`` on the
#: shared backbone takes about 23 minutes, ``record.py --timeout 7000``).
NOT_RECORDED: tuple[str, ...] = ()

#: The references kept outside the repository (own programs and platform files, recorded
#: the same way; ``validate.py --references FILE`` replays them): the figures as last
#: measured, written into the page under the table.
OUTSIDE: tuple[str, ...] = (
    "## Traces and platforms outside the repository",
    "",
    "Programs and platform files kept outside the repository, recorded the same way "
    "(`smpirun -trace-ti`, SimGrid's online run as the reference) and replayed with "
    "`validate.py --references FILE`: `rs_allgather_32r` (reduce-scatter and allgather) "
    "and `nb_waitany_64r` (a nonblocking exchange with the six neighbours of a 4x4x4 grid, "
    "32 KiB to 128 KiB, every request completed by `MPI_Waitany`, a computation after "
    "each receive, an allreduce per round), on a 64-host cluster with a thin backbone "
    "(links 10 GB/s, 1.5 us; backbone 20 GB/s, 0.5 us) and on a SimGrid torus 4,4,4 "
    "(links 10 GB/s, 1.5 us); limit 5%. SMPI writes `MPI_Waitany` as `waitAny N` "
    "without the request it returned (SimGrid's own replayer refuses the action); mpiuq "
    "takes the first pending request to complete, as SMPI executes the call "
    "([trace readers](../trace-readers.md)).",
    "",
    "| trace | platform | SimGrid s | mpiuq s | difference | within limit |",
    "|---|---|---:|---:|---:|---|",
    "| rs_allgather_32r | thin backbone | 0.224399 | 0.224399 | -0.00% | yes |",
    "| rs_allgather_32r | torus 4,4,4 | 0.0820042 | 0.0820042 | -0.00% | yes |",
    "| nb_waitany_64r | thin backbone | 0.013888 | 0.013888 | +0.00% | yes |",
    "| nb_waitany_64r | torus 4,4,4 | 0.00431722 | 0.00431722 | +0.00% | yes |",
    "",
    "`tests/e2e/test_simgrid_waitany.py` records a smaller `MPI_Waitany` exchange (16 "
    "ranks, 16 KiB and 96 KiB) with SimGrid on the `flat` cluster and checks the replay "
    "within 2% (it agrees to 0.001%).",
)


def trace_index(entry: dict[str, object]) -> Path:
    """The TI index mpiuq replays for a reference."""
    name = str(entry["trace"])
    if "index" in entry:
        return Path(str(entry["index"]))
    if entry["kind"] == "shared":
        return mpiuq_input(name)
    base = name.split("@")[0]
    return HERE / "traces" / name / f"{base}.txt"


def any_tag_copy(index: Path, folder: Path) -> Path | None:
    """A copy of the trace with SMPI's any-tag ``-444`` as ``-1`` (None: no ``-444``)."""
    if not index.is_file():
        return None
    found = False
    for rel in index.read_text().split():
        text = (index.parent / rel).read_text()
        fixed = re.sub(r"(?<= )-444(?= )", "-1", text)
        found |= fixed != text
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(fixed)
    (folder / index.name).write_text(index.read_text())
    return folder / index.name if found else None


def platform_paths(entry: dict[str, object]) -> tuple[Path, Path]:
    """The platform file and hostfile of a reference (its own, else ``platforms/``)."""
    if "platform_file" in entry:
        return Path(str(entry["platform_file"])), Path(str(entry["hostfile"]))
    return HERE / "platforms" / f"cluster_{entry['platform']}.xml", HERE / "platforms" / "hostfile"


def mpiuq_replay(index: Path, platform: Path, hostfile: Path) -> tuple[float, float]:
    """mpiuq's simulated time of ``index`` on ``platform`` (and the wall seconds)."""
    from mpiuq.main import main

    argv = [
        "replay", str(index), "--platform", str(platform), "--hostfile", str(hostfile),
        "--like", "simgrid", "--json", "--quiet",
    ]  # fmt: skip
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    wall = time.perf_counter() - t0
    if code != 0:
        raise RuntimeError(f"mpiuq {' '.join(argv)} exited {code}")
    doc = json.loads(out.getvalue())
    return float(doc["models"]["flow"]["simulated_time_s"]), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default=None, help="comma-separated trace names")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument(
        "--references",
        type=Path,
        default=HERE / "references.json",
        help="references kept elsewhere (entries may name their own 'platform_file', "
        "'hostfile', 'index' and 'limit'); then the table is printed only",
    )
    args = ap.parse_args()
    doc = json.loads(args.references.read_text())
    only = None if args.only is None else set(args.only.split(","))
    rows = []
    for entry in doc["runs"]:
        if only is not None and entry["trace"] not in only:
            continue
        platform = str(entry["platform"])
        ref = float(entry["simulated_s"])  # type: ignore[arg-type]
        index = trace_index(entry)
        note = ""
        try:
            try:
                sim, wall = mpiuq_replay(index, *platform_paths(entry))
            except RuntimeError:
                with tempfile.TemporaryDirectory() as tmp:
                    copy = any_tag_copy(index, Path(tmp))
                    if copy is None:
                        raise
                    sim, wall = mpiuq_replay(copy, *platform_paths(entry))
                    note = " (-444 read as -1)"
            diff = sim / ref - 1.0
            limit = float(entry.get("limit", LIMITS.get(platform, 0.05)))  # type: ignore[arg-type]
            status = ("yes" if abs(diff) <= limit else "**no**") + note
        except Exception as exc:  # reported in the table
            sim, wall, diff, status = math.nan, math.nan, math.nan, f"error: {exc}"
        rows.append((entry, sim, wall, diff, status))
        print(f"{entry['trace']:<28}{platform:<11}{ref:>12.6g}{sim:>12.6g}{diff:>+9.2%}  "
              f"{status} ({wall:.1f} s)", flush=True)  # fmt: skip
    within = sum(1 for r in rows if r[4].startswith("yes"))
    summary = f"{within} of {len(rows)} replays within their limit"
    print(summary)
    if args.no_write or only is not None or args.references != HERE / "references.json":
        return
    lines = [
        "# Validation against SimGrid 3.32",
        "",
        "Generated by `python experiments/simgrid_refs/validate.py` from the SimGrid "
        "references of `experiments/simgrid_refs/references.json` (recorded by "
        f"`experiments/simgrid_refs/record.py` with {doc['simgrid']}; commands and "
        "SimGrid's wall times are in the JSON). Every mpiuq figure is",
        "",
        "```",
        "mpiuq replay TRACE --platform experiments/simgrid_refs/platforms/cluster_P.xml \\",
        "    --hostfile experiments/simgrid_refs/platforms/hostfile --like simgrid",
        "```",
        "",
        "Platforms (1024 hosts `node-0..node-1023`, 1 Gflop/s; rank r on `node-r`):",
        "",
        *(f"* `{p}`: {note} (limit {LIMITS[p]:.0%})" for p, note in PLATFORM_NOTES.items()),
        "",
        "Own traces (`experiments/simgrid_refs/programs/`) are compared with SimGrid's "
        "online run of the program; the shared TI traces with `smpirun -replay` of a copy "
        "SimGrid 3.32 reads (`experiments/simgrid_refs/shared_inputs.py`: the "
        "SimGrid-replayable variant, or older dialects written in the current one; mpiuq "
        "replays the traces as recorded).",
        "",
        *NOT_RECORDED,
        f"**{summary}.**",
        "",
        "| trace | platform | SimGrid s | mpiuq s | difference | within limit | mpiuq wall s |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for entry, sim, wall, diff, status in rows:
        lines.append(
            f"| {entry['trace']} | {entry['platform']} | {float(entry['simulated_s']):.6g} | "
            f"{sim:.6g} | {diff:+.2%} | {status} | {wall:.1f} |"
        )
    lines += ["", *OUTSIDE]
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text("\n".join(lines) + "\n")
    print(f"written {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
