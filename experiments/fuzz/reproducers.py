"""The reproducers of "integrity of everything stored and handed on", run as a user runs them.

Each reproducer of the issue's "Why" runs the ``mpiuq`` command line in a fresh process
(``python -m mpiuq``) on a scratch copy of what it damages, and passes when the command
gives the correct result (exit 0 and the undamaged run's results) or a typed one-line
error (exit 1 or 2, one line on stderr starting ``mpiuq <command>: error:``, no
traceback), as the reproducer asks. Prints one ``PASS``/``FAIL`` line per reproducer and
exits 1 if any failed.

The hand-off reproducers damage copies of the committed ``results/stampede-ib`` (its
posterior draws are committed). The 2,048-rank memory reproducer runs with ``--memory``
(about a minute: ``experiments/perf/perf_lowering_memory.py``'s dense case in blocks).

Usage::

    python experiments/fuzz/reproducers.py [--only NAME,...] [--memory] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "unit")]  # test_calibration_handoff

from cache_fuzzing import SMALL_TI  # noqa: E402

RESULTS = ROOT / "results"
Outcome = tuple[bool, str]


class Ctx:
    """The scratch folder, a small TI trace and its own cache folder."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.trace = work / "small_ti.txt"
        self.trace.write_text(SMALL_TI)
        self.env = {**os.environ, "MPIUQ_CACHE_DIR": str(work / "cache")}

    def run(
        self, *argv: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``mpiuq ARGV`` in a fresh process."""
        return subprocess.run(
            [sys.executable, "-m", "mpiuq", *argv],
            capture_output=True,
            text=True,
            env=env or self.env,
            timeout=900,
            check=False,
        )

    def folder(self, name: str, source: Path = RESULTS / "stampede-ib") -> Path:
        """A scratch copy of a results folder."""
        dest = self.work / name
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(source, dest)
        return dest


def one_line_error(proc: subprocess.CompletedProcess[str], command: str, *must: str) -> Outcome:
    """Whether ``proc`` ended with a typed one-line error (holding the ``must`` strings)."""
    err = proc.stderr
    lines = [ln for ln in err.splitlines() if ln.strip()]
    ok = (
        proc.returncode in (1, 2)
        and "Traceback" not in err
        and len(lines) == 1
        and lines[0].startswith(f"mpiuq {command}: error:")
        and all(m in err for m in must)
    )
    return ok, f"exit {proc.returncode}: {(lines[-1] if lines else '(no stderr)')[:220]}"


def models(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The model results of a ``--json`` replay, without timings."""
    doc = json.loads(proc.stdout)
    return {
        name: {k: v for k, v in m.items() if k not in ("wall_s", "events_per_s")}
        for name, m in doc["models"].items()
    }


REPLAY = ("--model", "analytic", "--json", "-q", "--stream", "off")


def _damaged_cache(ctx: Ctx, member: str) -> Outcome:
    first = ctx.run("replay", str(ctx.trace), *REPLAY)
    if first.returncode != 0:
        return False, f"undamaged replay failed: {first.stderr.strip()[-200:]}"
    entries = list((ctx.work / "cache").rglob(f"*.mpiuqprog/{member}"))
    if len(entries) != 1:
        return False, f"found {len(entries)} program entries holding {member}"
    data = bytearray(entries[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    entries[0].write_bytes(bytes(data))
    again = ctx.run("replay", str(ctx.trace), *REPLAY)
    if again.returncode != 0:
        return False, f"exit {again.returncode}: {again.stderr.strip()[-200:]}"
    same = models(again) == models(first)
    t = models(again)["analytic"].get("simulated_time_s")
    return same, f"exit 0, same results as undamaged ({'yes' if same else 'NO'}; {t} s)"


def value_bin_flip(ctx: Ctx) -> Outcome:
    """Silent wrong answer: a flipped byte in a program-cache value.bin."""
    return _damaged_cache(ctx, "value.bin")


def wait_list_flip(ctx: Ctx) -> Outcome:
    """Cache left unusable: a flipped byte in wait_list.npy gave a false deadlock."""
    return _damaged_cache(ctx, "wait_list.npy")


def _edit(folder: Path, change: Callable[[dict[str, Any]], None], reseal: bool = True) -> None:
    from test_calibration_handoff import _edit_summary

    _edit_summary(folder, change, reseal)


def _replay_params(ctx: Ctx, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return ctx.run("replay", str(ctx.trace), "--params", str(folder), "--draws", "4", "-q", *extra)


def draws_not_listed(ctx: Ctx) -> Outcome:
    """Hand-off check bypassed: summary.json does not list the draws file."""
    folder = ctx.folder("unlisted")

    def drop(doc: dict[str, Any]) -> None:
        doc["run"]["files"].pop("posterior_draws.nc", None)
        doc["handoff"]["files"] = [
            f for f in doc["handoff"]["files"] if f.get("name") != "posterior_draws.nc"
        ]

    _edit(folder, drop)
    return one_line_error(_replay_params(ctx, folder), "replay")


def no_run_key(ctx: Ctx) -> Outcome:
    """Hand-off check bypassed: summary.json has no ``run`` key."""
    folder = ctx.folder("norun")
    _edit(folder, lambda d: d.pop("run"))
    return one_line_error(_replay_params(ctx, folder), "replay")


def foreign_summary(ctx: Ctx) -> Outcome:
    """Hand-off check bypassed: another campaign's summary.json beside the draws."""
    others = [
        p
        for p in sorted(RESULTS.glob("*/summary.json"))
        if p.parent.name != "stampede-ib" and (p.parent / "posterior_draws.nc").exists()
    ]
    if not others:
        return False, "no other committed campaign with draws to take a summary from"
    folder = ctx.folder("foreign")
    shutil.copy(others[0], folder / "summary.json")
    ok, detail = one_line_error(_replay_params(ctx, folder), "replay")
    return ok, f"summary of {others[0].parent.name}: {detail}"


def hash_12345(ctx: Ctx) -> Outcome:
    """Hand-off check bypassed: a recorded hash of 12345 passed."""
    folder = ctx.folder("hash12345")

    def twelve(doc: dict[str, Any]) -> None:
        for f in doc["handoff"]["files"]:
            f["sha256"] = "12345"
        doc["run"]["files"]["posterior_draws.nc"] = "12345"

    _edit(folder, twelve)
    return one_line_error(_replay_params(ctx, folder), "replay")


def draws_times_1e300(ctx: Ctx) -> Outcome:
    """Value limits skipped: posterior draws scaled by 1e300 with the hash re-recorded."""
    import h5py
    import numpy as np

    folder = ctx.folder("huge")
    nc = folder / "posterior_draws.nc"
    with h5py.File(nc, "r+") as f:
        group = f.get("posterior", f)
        values = group["link_bw_GBps"]
        values[...] = np.asarray(values[...]) * 1e300
    digest = hashlib.sha256(nc.read_bytes()).hexdigest()

    def rehash(doc: dict[str, Any]) -> None:
        for f in doc["handoff"]["files"]:
            if f.get("name") == nc.name:
                f["sha256"] = digest
        doc["run"]["files"][nc.name] = digest

    _edit(folder, rehash)
    return one_line_error(_replay_params(ctx, folder), "replay", "link_bw_GBps")


def zero_draws(ctx: Ctx) -> Outcome:
    """Messages: a draws file with 0 draws gave NumPy's 'a must be a positive integer'."""
    from test_calibration_handoff import _with_draws

    folder = ctx.work / "zero"
    folder.mkdir(exist_ok=True)
    _with_draws(folder, n=0)
    return one_line_error(_replay_params(ctx, folder), "replay", "0 posterior draws")


def committed_results_load(ctx: Ctx) -> Outcome:
    """Committed results unusable: replay, whatif and simulate --params results/<each>."""
    from mpiuq.calibration.reporting.handoff import external_simulator

    bad, names = [], []
    for summary in sorted(RESULTS.glob("*/summary.json")):
        folder = summary.parent
        if external_simulator(json.loads(summary.read_text())) is not None:
            good, detail = one_line_error(
                ctx.run("replay", str(ctx.trace), "--params", str(folder), "-q"),
                "replay",
                "external simulator",
            )
            names.append(
                f"{folder.name} (external simulator: {'refused by name' if good else detail})"
            )
            bad += [] if good else [f"{folder.name}: {detail}"]
            continue
        names.append(folder.name)
        runs = (
            ("replay", str(ctx.trace), "--params", str(folder), "--draws", "4", "-q"),
            (
                "whatif",
                str(ctx.trace),
                "--params",
                str(folder),
                "--draws",
                "4",
                "-q",
                "--scenario",
                "n2: link_bw_GBps*=2",
            ),
            ("simulate", "--params", str(folder), "--sizes", "8,65536", "--draws", "4"),
        )
        for argv in runs:
            proc = ctx.run(*argv)
            if proc.returncode != 0:
                bad.append(f"{folder.name} {argv[0]}: {proc.stderr.strip()[-160:]}")
    return not bad, "; ".join(bad) if bad else "loaded: " + ", ".join(names)


def whatif_limits(ctx: Ctx) -> Outcome:
    """Value limits skipped: what-if edits giving absurd values; JSON without Infinity."""
    details = []
    ok = True
    for scenario, must in (
        ("tiny: injection_bw_GBps*=1e-300", "injection_bw_GBps"),
        ("big: eager_max_bytes*=1e9", "eager_max_bytes"),
        ("lat: regime1_latency_us=1e7", "regime1_latency_us"),
        ("lat2: regime1_latency_us=1e300", "regime1_latency_us"),
    ):
        good, detail = one_line_error(
            ctx.run("whatif", str(ctx.trace), "--scenario", scenario, "--json", "-q"),
            "whatif",
            must,
        )
        ok &= good
        details.append(f"{scenario.split(':')[0]}: {'ok' if good else detail}")

    def refuse(token: str) -> object:
        raise ValueError(token)

    proc = ctx.run("whatif", str(ctx.trace), "--scenario", "n2: link_bw_GBps*=2", "--json", "-q")
    try:
        json.loads(proc.stdout, parse_constant=refuse)
        details.append("--json: standard JSON")
    except ValueError as exc:
        ok = False
        details.append(f"--json: {exc}")
    return ok, "; ".join(details)


def per_regime_limits(ctx: Ctx) -> Outcome:
    """Value limits skipped: per-regime values 1e7 or [1, 1e300] in a campaign file."""
    details, ok = [], True
    for value in ("1e7", "[1.0, 1e300]"):
        text = (ROOT / "experiments" / "tcp-taurus.toml").read_text()
        text = text.replace("recv_overhead_us = [0.0, 10.0]", f"recv_overhead_us = {value}", 1)
        path = ctx.work / "regime.toml"
        path.write_text(text)
        good, detail = one_line_error(
            ctx.run("campaign", "run", str(path), "--out", str(ctx.work / "regime-out")),
            "campaign run",
            "recv_overhead_us",
        )
        ok &= good
        details.append(f"{value}: {detail}")
    return ok, "; ".join(details)


def sd_floor_tiny(ctx: Ctx) -> Outcome:
    """Value limits skipped: sd_floor_rel = 1e-300 gave 18 observations a variance of 0."""
    from fuzzing import BASE_CAMPAIGN, base_benchmark_csv

    (ctx.work / "data.csv").write_bytes(base_benchmark_csv())
    path = ctx.work / "floor.toml"
    path.write_bytes(BASE_CAMPAIGN.replace(b"sd_floor_rel = 0.01", b"sd_floor_rel = 1e-300"))
    proc = ctx.run("campaign", "run", str(path), "--out", str(ctx.work / "floor-out"))
    return one_line_error(proc, "campaign run", "sd_floor_rel")


def data_paths(ctx: Ctx) -> Outcome:
    """Messages: /dev/null or a FIFO as a data path; /proc/self/environ echoed the env."""
    from fuzzing import BASE_CAMPAIGN

    fifo = ctx.work / "pipe"
    if not fifo.exists():
        os.mkfifo(fifo)
    details, ok = [], True
    env = {**ctx.env, "MPIUQ_SECRET_PROBE": "SECRETVALUE"}
    for data, must in (
        ("/dev/null", "character device"),
        (str(fifo), "FIFO"),
        ("/proc/self/environ", "control byte"),
    ):
        path = ctx.work / "paths.toml"
        path.write_bytes(BASE_CAMPAIGN.replace(b'path = "data.csv"', f'path = "{data}"'.encode()))
        proc = ctx.run("campaign", "run", str(path), "--out", str(ctx.work / "p-out"), env=env)
        good, detail = one_line_error(proc, "campaign run", must)
        good &= "SECRETVALUE" not in proc.stderr and "PATH=" not in proc.stderr
        ok &= good
        details.append(f"{Path(data).name}: {'ok' if good else detail}")
    return ok, "; ".join(details)


def scenario_1_0(ctx: Ctx) -> Outcome:
    """Messages: the scenario ``1_0`` was read as 10."""
    return one_line_error(
        ctx.run("whatif", str(ctx.trace), "--scenario", "ten: link_bw_GBps=1_0", "-q"),
        "whatif",
        "plain decimal",
    )


def regime_slots_in_scenarios(ctx: Ctx) -> Outcome:
    """Messages: regime slots were refused in what-if scenarios though --param takes them."""
    proc = ctx.run(
        "whatif", str(ctx.trace), "--scenario", "r: regime1_latency_us=2.0", "--json", "-q"
    )
    return proc.returncode == 0, f"exit {proc.returncode} {proc.stderr.strip()[-160:]}"


def smpi_any_tag(ctx: Ctx) -> Outcome:
    """Inputs from SimGrid: SMPI's -444 (MPI_ANY_TAG) and -333 (MPI_ANY_SOURCE) in TI traces."""
    proc = ctx.run("replay", str(ctx.trace), *REPLAY)  # SMALL_TI has "irecv -333 -444"
    return proc.returncode == 0, f"exit {proc.returncode} {proc.stderr.strip()[-160:]}"


def whatif_full_disk(ctx: Ctx) -> Outcome:
    """Writes: whatif --out on a full disk left a truncated whatif.json and named no file."""
    out = ctx.work / "wi-out"
    argv = ["whatif", str(ctx.trace), "--scenario", "n2: link_bw_GBps*=2", "-q", "--out", str(out)]
    if ctx.run(*argv).returncode != 0:
        return False, "the undamaged whatif --out failed"
    before = (out / "whatif.json").read_bytes()
    code = (
        "import errno, sys\nfrom pathlib import Path\nreal = Path.write_text\n"
        "def full(self, *a, **k):\n"
        "    if '.partial-' in self.name:\n"
        "        open(self, 'w').write('{\\n')\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "    return real(self, *a, **k)\n"
        "Path.write_text = full\nfrom mpiuq.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        env=ctx.env,
        check=False,
    )
    ok, detail = one_line_error(proc, "whatif", str(out / "whatif.json"), "No space left")
    kept = (out / "whatif.json").read_bytes() == before and not list(out.glob("*.partial-*"))
    return ok and kept, f"{detail}; old file kept: {kept}"


def sigint_early(ctx: Ctx) -> Outcome:
    """Signals: Ctrl-C 0.7 s after start printed a KeyboardInterrupt traceback (1 in 5)."""
    results = []
    for delay in (0.3, 0.5, 0.7, 0.9, 1.2):
        proc = subprocess.Popen(
            [sys.executable, "-m", "mpiuq", "replay", str(ctx.trace), "--model", "analytic"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**ctx.env, "MPIUQ_CACHE_DIR": str(ctx.work / "cache-sigint")},
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        interrupted = proc.returncode == 130 and len(lines) <= 1 + sum(
            not ln.startswith("mpiuq") for ln in lines[:-1]
        )
        ok = "Traceback" not in err and (proc.returncode == 0 or interrupted)
        results.append((delay, proc.returncode, ok, lines[-1][:80] if lines else ""))
    ok = all(r[2] for r in results)
    return ok, ", ".join(
        f"{d}s: exit {c}" + ("" if g else f" ({last})") for d, c, g, last in results
    )


def stale_partials(ctx: Ctx) -> Outcome:
    """Writes: posterior.nc.partial-<pid> files survived killed runs."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from mpiuq.surrogate.store.atomic_write import replace_atomically\n"
        "t = Path(sys.argv[1]) / 'posterior.nc'\n"
        "dead = t.with_name(t.name + '.partial-' + str(2**22 + 12345))\n"
        "dead.write_text('left by a killed run')\n"
        "with replace_atomically(t) as tmp:\n    tmp.write_text('new')\n"
        "print(int(dead.exists()), t.read_text())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ctx.work)], capture_output=True, text=True, check=False
    )
    return proc.stdout.split() == ["0", "new"], proc.stdout.strip() or proc.stderr[-160:]


def legacy_summary(ctx: Ctx) -> Outcome:
    """summary.json had no format version and was read back as a loose dict."""
    folder = ctx.work / "legacy"
    folder.mkdir(exist_ok=True)
    (folder / "summary.json").write_text(
        json.dumps({"parameters": {"link_bw_GBps": {"median": 5}}})
    )
    proc = ctx.run("replay", str(ctx.trace), "--params", str(folder), "--estimate", "median", "-q")
    return one_line_error(proc, "replay", "campaign summary")


def numba_scipy(ctx: Ctx) -> Outcome:
    """runtime.numba_import hid scipy process-wide while numba imported."""
    code = (
        "import threading, time, json, sys\n"
        "from mpiuq.simulator.runtime.numba_import import import_numba\n"
        "got = {}\n"
        "def other():\n    time.sleep(0.02)\n    import scipy.special\n"
        "    got['scipy'] = scipy.__name__\n"
        "t = threading.Thread(target=other); t.start(); import_numba(); t.join()\n"
        "print(json.dumps([got.get('scipy'), 'numba' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    out = proc.stdout.strip().splitlines()
    return bool(out) and json.loads(out[-1]) == ["scipy", True], (out or [proc.stderr[-160:]])[-1]


def alltoallv_memory(ctx: Ctx) -> Outcome:
    """Memory: one alltoallv with distinct counts at 2,048 ranks grew the process to 1.6 GB."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "perf" / "perf_lowering_memory.py"),
            "--cases",
            "dense",
            "--modes",
            "blocks",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("dense")]
    if not rows:
        return False, proc.stderr[-200:]
    peak = float(rows[0][-2])
    return peak < 300, f"dense 2,048-rank all-to-all-v lowered in blocks: peak {peak:.0f} MiB"


REPRODUCERS: dict[str, Callable[[Ctx], Outcome]] = {
    "value_bin_flip": value_bin_flip,
    "wait_list_flip": wait_list_flip,
    "draws_not_listed": draws_not_listed,
    "no_run_key": no_run_key,
    "foreign_summary": foreign_summary,
    "hash_12345": hash_12345,
    "committed_results_load": committed_results_load,
    "whatif_limits": whatif_limits,
    "draws_times_1e300": draws_times_1e300,
    "per_regime_limits": per_regime_limits,
    "sd_floor_tiny": sd_floor_tiny,
    "whatif_full_disk": whatif_full_disk,
    "sigint_early": sigint_early,
    "stale_partials": stale_partials,
    "zero_draws": zero_draws,
    "data_paths": data_paths,
    "scenario_1_0": scenario_1_0,
    "regime_slots_in_scenarios": regime_slots_in_scenarios,
    "smpi_any_tag": smpi_any_tag,
    "legacy_summary": legacy_summary,
    "numba_scipy": numba_scipy,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated reproducer names")
    ap.add_argument("--memory", action="store_true", help="also the 2,048-rank memory case")
    ap.add_argument("--keep", type=Path, help="scratch folder to keep (default: a temporary one)")
    args = ap.parse_args()
    chosen = dict(REPRODUCERS)
    if args.memory:
        chosen["alltoallv_memory"] = alltoallv_memory
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in chosen]
        if unknown:
            ap.error(f"unknown reproducers {unknown}: expected some of {sorted(chosen)}")
        chosen = {n: chosen[n] for n in names}
    work = args.keep or Path(tempfile.mkdtemp(prefix="mpiuq-reproducers-"))
    work.mkdir(parents=True, exist_ok=True)
    failed = 0
    try:
        for name, fn in chosen.items():
            t0 = time.perf_counter()
            sub = work / name
            shutil.rmtree(sub, ignore_errors=True)
            sub.mkdir()
            try:
                ok, detail = fn(Ctx(sub))
            except Exception as exc:  # a reproducer that cannot run is a failure
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            failed += not ok
            print(
                f"{'PASS' if ok else 'FAIL'}  {name:26s} {time.perf_counter() - t0:6.1f} s  {detail}",
                flush=True,
            )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(chosen) - failed} of {len(chosen)} reproducers pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
