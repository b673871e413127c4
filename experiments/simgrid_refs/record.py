"""Record SimGrid 3.32 reference simulated times (and TI traces) for the validation table.

Two kinds of references, each on every platform of ``platforms/`` (1024 hosts
``node-0..node-1023``, 1 Gflop/s, private links 12.5 GB/s and 1 us; ``flat``: no
backbone, ``backbone``: a shared 40 GB/s backbone, ``fattree``: SimGrid fat-tree
``3;8,8,16;1,8,8;1,1,1``, ``dragonfly``: SimGrid dragonfly ``8,2;4,2;8,2;4``; also
``torus``: SimGrid torus ``8,8,16``, own programs only, ``--platforms torus``), ranks on
hosts in ``platforms/hostfile`` order:

* **own programs** (``programs/*.c``, built with ``smpicc``): run online with
  ``smpirun -np N -platform P -hostfile H --cfg=smpi/display-timing:yes
  --cfg=smpi/simulate-computation:no -trace-ti --cfg=tracing/filename:T PROGRAM ARGS``;
  their computation is ``smpi_execute_flops`` only (deterministic), so the TI trace of a
  program is the same on every platform and is stored once (``traces/NAME/``, from the
  ``flat`` run), except the master-worker's, whose task order depends on the
  platform (stored per platform, ``traces/NAME@PLATFORM/``). Reference: the printed
  ``Simulated time``.
* **shared TI traces** (every SimGrid TI trace of ``../shared/data/traces``: ``ti_*``,
  ``gen_ti_*``, and each program of ``ti_simgrid_replay_examples``): replayed with
  ``smpirun -np N -platform P -hostfile H -replay INDEX smpireplaymain`` on a copy SimGrid
  3.32 reads (``shared_inputs.py``: the SimGrid-replayable variant, decompressed; older
  dialects written in the current one). Reference: the printed ``Simulation time``.

Results go to ``references.json`` (merged: a run already there is kept unless
``--force``); every entry has the exact command line and SimGrid's wall time.

Usage::

    python experiments/simgrid_refs/record.py [--only NAME,...] [--platforms flat,...]
        [--shared] [--programs] [--force] [--timeout 7200]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
from shared_inputs import shared_traces, simgrid_input  # noqa: E402

PLATFORMS = ("flat", "backbone", "fattree", "dragonfly")
REFERENCES = HERE / "references.json"
REPLAYERS = ("/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain", "/usr/lib/simgrid/smpireplaymain")

#: name -> (program, ranks, arguments); see the programs' headers for the arguments.
PROGRAMS: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "fft_4r_512k": ("fft_transpose", 4, ("524288", "3", "2e6")),
    "fft_32r_256": ("fft_transpose", 32, ("256", "4", "1e6")),
    "fft_64r_16k": ("fft_transpose", 64, ("16384", "3", "2e6")),
    "fft_128r_64k": ("fft_transpose", 128, ("65536", "1", "2e6")),
    "halo2d_64r": ("halo2d", 64, ("8", "4096", "131072", "10", "5e5")),
    "wavefront_64r": ("wavefront", 64, ("8", "8192", "98304", "4", "2e5")),
    "random_pairs_64r": ("random_pairs", 64, ("24", "7", "3e5")),
    "coll_mix_64r": ("coll_mix", 64, ("4", "4e5")),
    "master_worker_32r": ("master_worker", 32, ("200", "16384", "1e6")),
}
#: Programs whose TI trace depends on the platform (wildcard receives).
PER_PLATFORM = {"master_worker_32r"}
SIM_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")
REPLAY_TIME = re.compile(r"Simulation time ([0-9.eE+-]+)")


def simgrid_version() -> str:
    out = subprocess.run(["smpirun", "-version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[0]


def platform_file(name: str) -> Path:
    return HERE / "platforms" / f"cluster_{name}.xml"


def run(cmd: list[str], cwd: Path, timeout: float) -> tuple[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return proc.stdout + proc.stderr, wall


def store_trace(tmp: Path, index_name: str, dest: Path) -> None:
    """Copy SMPI's TI trace (index and per-rank files) to ``dest`` as ``NAME.txt`` and
    ``NAME_files/rank-<r>.txt`` (actor id = rank + 1 in SMPI's file names)."""
    src_index = tmp / index_name
    files = src_index.read_text().split()
    if dest.exists():
        shutil.rmtree(dest)
    (dest / f"{dest.name.split('@')[0]}_files").mkdir(parents=True)
    name = dest.name.split("@")[0]
    lines = []
    for f in files:
        rank = int(re.search(r"rank-(\d+)\.txt$", f).group(1)) - 1  # type: ignore[union-attr]
        rel = f"{name}_files/rank-{rank}.txt"
        shutil.copyfile(tmp / f, dest / rel)
        lines.append((rank, rel))
    (dest / f"{name}.txt").write_text("".join(f"{rel}\n" for _, rel in sorted(lines)))


def record_program(name: str, platform: str, build: Path, timeout: float) -> dict[str, object]:
    program, ranks, args = PROGRAMS[name]
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cmd = [
            "smpirun", "-np", str(ranks), "-platform", str(platform_file(platform)),
            "-hostfile", str(HERE / "platforms" / "hostfile"),
            "--cfg=smpi/display-timing:yes", "--cfg=smpi/simulate-computation:no",
            "-trace-ti", f"--cfg=tracing/filename:{name}.txt",
            str(build / program), *args,
        ]  # fmt: skip
        out, wall = run(cmd, tmp, timeout)
        m = SIM_TIME.search(out)
        if m is None:
            raise RuntimeError(f"no 'Simulated time' in the output of {name} on {platform}")
        per_platform = name in PER_PLATFORM
        if per_platform or platform == "flat":
            dest = HERE / "traces" / (f"{name}@{platform}" if per_platform else name)
            store_trace(tmp, f"{name}.txt", dest)
    shown = [str(c).replace(str(ROOT) + "/", "") for c in cmd]
    return {
        "kind": "program",
        "trace": f"{name}@{platform}" if name in PER_PLATFORM else name,
        "platform": platform,
        "ranks": ranks,
        "simulated_s": float(m.group(1)),
        "simgrid_wall_s": round(wall, 2),
        "command": " ".join(shown),
    }


def record_shared(name: str, platform: str, timeout: float) -> dict[str, object]:
    replayer = next((r for r in REPLAYERS if Path(r).exists()), shutil.which("smpireplaymain"))
    if replayer is None:
        raise RuntimeError("smpireplaymain not found")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        index = simgrid_input(name, tmp)
        ranks = len(index.read_text().split())
        cmd = [
            "smpirun", "-np", str(ranks), "-platform", str(platform_file(platform)),
            "-hostfile", str(HERE / "platforms" / "hostfile"), "-replay", index.name, replayer,
        ]  # fmt: skip
        out, wall = run(cmd, tmp, timeout)
    m = REPLAY_TIME.findall(out)
    if not m:
        raise RuntimeError(f"no 'Simulation time' in SimGrid's replay of {name} on {platform}")
    shown = [str(c).replace(str(ROOT) + "/", "") for c in cmd]
    return {
        "kind": "shared",
        "trace": name,
        "platform": platform,
        "ranks": ranks,
        "replayed_index": index.name,
        "simulated_s": float(m[-1]),
        "simgrid_wall_s": round(wall, 2),
        "command": " ".join(shown),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default=None, help="comma-separated program or trace names")
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--shared", action="store_true", help="replay the shared TI traces")
    ap.add_argument("--programs", action="store_true", help="run the own programs")
    ap.add_argument("--force", action="store_true", help="re-run entries already recorded")
    ap.add_argument("--timeout", type=float, default=7200.0)
    args = ap.parse_args()
    if shutil.which("smpirun") is None or shutil.which("smpicc") is None:
        raise SystemExit("smpirun/smpicc not found: install SimGrid 3.32 (apt-get install simgrid)")
    doc = json.loads(REFERENCES.read_text()) if REFERENCES.is_file() else {"runs": []}
    doc["simgrid"] = simgrid_version()
    done = {(r["trace"], r["platform"]) for r in doc["runs"]}
    only = None if args.only is None else set(args.only.split(","))
    platforms = args.platforms.split(",")

    def save(entry: dict[str, object]) -> None:
        doc["runs"] = [
            r
            for r in doc["runs"]
            if (r["trace"], r["platform"]) != (entry["trace"], entry["platform"])
        ] + [entry]
        doc["runs"].sort(key=lambda r: (r["kind"], r["trace"], r["platform"]))
        REFERENCES.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{entry['trace']:<28}{entry['platform']:<11}{entry['simulated_s']:<14.9g}"
              f"(SimGrid {entry['simgrid_wall_s']} s)", flush=True)  # fmt: skip

    if args.programs:
        with tempfile.TemporaryDirectory() as build_s:
            build = Path(build_s)
            for program in sorted({p for p, _, _ in PROGRAMS.values()}):
                subprocess.run(
                    ["smpicc", "-O2", str(HERE / "programs" / f"{program}.c"), "-o",
                     str(build / program), "-lm"],
                    check=True, capture_output=True,
                )  # fmt: skip
            for name in PROGRAMS:
                if only is not None and name not in only:
                    continue
                for platform in platforms:
                    key = (f"{name}@{platform}" if name in PER_PLATFORM else name, platform)
                    if key in done and not args.force:
                        continue
                    save(record_program(name, platform, build, args.timeout))
    if args.shared:
        for name in shared_traces():
            if only is not None and name not in only:
                continue
            for platform in platforms:
                if (name, platform) in done and not args.force:
                    continue
                try:
                    save(record_shared(name, platform, args.timeout))
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    print(f"{name} on {platform}: {exc}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
