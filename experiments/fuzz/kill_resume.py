"""Kill runs with SIGKILL and resume them: do they always finish with bit-identical results?

Three scenarios, each compared with one uninterrupted reference run:

``store-phase``
    ``mpiuq surrogate run`` killed by itself at every phase of creating, journalling and
    consolidating its design store (the ``phase_hook`` of ``mpiuq.surrogate.design.design_store``),
    ``--phase-repeats`` times each; then resumed.
``store-random``
    ``mpiuq surrogate run`` (a model taking ~10 ms per chunk) killed from outside after a
    random delay, one to three times in a row, then resumed.
``campaign-random``
    ``mpiuq campaign run`` of a small campaign killed after a random delay, then resumed;
    the summary (without timings) and every array of ``posterior.nc`` must be identical,
    and a killed run must never leave the previous run's ``summary.json`` looking current
    (half of the rounds start from the complete results of another seed; a run killed
    while Python was still starting, before the command ran, leaves the folder untouched:
    counted in the last column).

Prints one row per scenario: rounds, kills, rounds that resumed bit-identically, rounds
that did not (with the reason below the table).

    python experiments/fuzz/kill_resume.py                  # ~10 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
STAMPEDE_CSV = ROOT / "experiments" / "data" / "simgrid_stampede_ib_mvapich2" / "data.csv"

MODEL = textwrap.dedent(
    """
    import time
    import numpy as np

    def model(x):
        time.sleep(0.01)
        return np.stack([np.sin(3.1 * x[:, 0]) + x[:, 1] ** 3, np.exp(x[:, 0] - x[:, 1])], axis=1)
    """
)

KILL_AT_PHASE = textwrap.dedent(
    """
    import os, signal, sys
    from mpiuq.surrogate.design import design_store
    from mpiuq.main import main
    phase, nth = sys.argv[1], int(sys.argv[2])
    seen = [0]
    def hook(reached):
        if reached == phase:
            seen[0] += 1
            if seen[0] == nth:
                os.kill(os.getpid(), signal.SIGKILL)
    design_store.phase_hook = hook
    sys.exit(main(sys.argv[3:]))
    """
)

CAMPAIGN = f"""
name = "killresume"
seed = 11
[simulator]
benchmark = "pingpong"
[simulator.fixed]
eager_max_bytes = 17408
small_max_bytes = 150
[parameters]
post_header_delay_us = [0.1, 3.0]
link_bw_GBps = [3.0, 8.0]
memory_bw_GBps = [2.0, 25.0]
[data]
path = "{STAMPEDE_CSV}"
benchmark = "pingpong_half_rtt"
sizes_per_protocol = 3
drop_warmup = true
[surrogate]
level = 5
order = 4
[calibration]
walkers = 16
steps = 200
burn = 200
max_steps = 2000
ensembles = 2
target_ess = 200
predictive_draws = 500
"""


def mpiuq(*argv: str) -> list[str]:
    return [sys.executable, "-m", "mpiuq", *argv]


def run(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def kill_after(cmd: list[str], delay_s: float) -> bool:
    """Start ``cmd``, SIGKILL it after ``delay_s``; True if it was still running."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay_s)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True


class StoreScenario:
    """``mpiuq surrogate run`` over a 400-point design, chunks of 8 points."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "slow_model.py").write_text(MODEL)
        self.design = folder / "design.csv"
        proc = run(
            mpiuq(
                "surrogate",
                "design",
                "--param",
                "a=0:1",
                "--param",
                "b=-2:2",
                "--random",
                "400",
                "--csv",
                str(self.design),
            )
        )
        assert proc.returncode == 0, proc.stderr
        start = time.perf_counter()
        self.reference = self.finish(folder / "reference")
        self.full_s = time.perf_counter() - start

    def argv(self, work: Path) -> list[str]:
        return [
            "surrogate", "run", "--model", f"{self.folder / 'slow_model.py'}:model",
            "--design", str(self.design), "--store", str(work / "runs.h5"),
            "--outputs", str(work / "outputs.csv"), "--chunk-size", "8", "--quiet",
        ]  # fmt: skip

    def finish(self, work: Path) -> bytes:
        work.mkdir(parents=True, exist_ok=True)
        proc = run(mpiuq(*self.argv(work)))
        if proc.returncode != 0:
            raise RuntimeError(f"resume failed: {proc.stderr.strip()}")
        return (work / "outputs.csv").read_bytes()


class CampaignScenario:
    """``mpiuq campaign run`` of :data:`CAMPAIGN` (3 parameters, level 5, joint comparison).

    ``previous`` holds the complete results of the same campaign with another seed: half
    of the rounds start from a copy of it, so a killed run must not leave its summary.
    """

    def __init__(self, folder: Path) -> None:
        self.toml = folder / "killresume.toml"
        self.toml.write_text(CAMPAIGN)
        other = folder / "other-seed.toml"
        other.write_text(CAMPAIGN.replace("seed = 11", "seed = 12"))
        self.previous = folder / "previous"
        self.finish(self.previous, other)
        start = time.perf_counter()
        self.reference = self.finish(folder / "reference")
        self.full_s = time.perf_counter() - start

    def argv(self, out: Path, toml: Path | None = None) -> list[str]:
        toml = self.toml if toml is None else toml
        return ["campaign", "run", str(toml), "--out", str(out), "--quiet", "--no-plots"]

    def finish(
        self, out: Path, toml: Path | None = None
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        proc = run(mpiuq(*self.argv(out, toml)))
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"resume failed: {proc.stderr.strip()}")
        return self.results(out)

    @staticmethod
    def results(out: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        import arviz as az

        doc = json.loads((out / "summary.json").read_text())
        doc.pop("timings_s")
        doc["run"].pop("files")  # posterior.nc carries its creation time
        idata = az.from_netcdf(str(out / "posterior.nc"))
        arrays = {
            f"{g}/{v}": np.asarray(idata[g][v].values)
            for g in idata.groups()
            for v in idata[g].data_vars
        }
        return doc, arrays

    def same(self, got: tuple[dict[str, Any], dict[str, np.ndarray]]) -> bool:
        doc, arrays = got
        ref_doc, ref_arrays = self.reference
        return (
            doc == ref_doc
            and arrays.keys() == ref_arrays.keys()
            and all(np.array_equal(arrays[k], ref_arrays[k]) for k in arrays)
        )


def store_phases(
    scenario: StoreScenario,
    repeats: int,
    rng: np.random.Generator,
    row: list[int],
    notes: list[str],
) -> None:
    from mpiuq.surrogate.design.design_store import (
        CONSOLIDATE_PHASES,
        CREATE_PHASES,
        JOURNAL_PHASES,
    )

    for r in range(repeats):
        record = int(rng.integers(1, 51))  # the design has 50 chunks: any record
        phases = [(p, 1) for p in (*CREATE_PHASES, JOURNAL_PHASES[0], *CONSOLIDATE_PHASES)]
        for phase, nth in [*phases, (JOURNAL_PHASES[1], record)]:
            work = scenario.folder / f"phase{r}-{phase.replace(':', '-')}"
            work.mkdir()
            proc = run([sys.executable, "-c", KILL_AT_PHASE, phase, str(nth), *scenario.argv(work)])
            killed = proc.returncode == -signal.SIGKILL
            label = f"store-phase {phase} #{nth}"
            tally(
                row, killed, lambda w=work: scenario.finish(w) == scenario.reference, notes, label
            )


def store_random(
    scenario: StoreScenario, rounds: int, rng: np.random.Generator, row: list[int], notes: list[str]
) -> None:
    for i in range(rounds):
        work = scenario.folder / f"random{i}"
        work.mkdir()
        kills = 0
        for _ in range(int(rng.integers(1, 4))):
            kills += kill_after(
                mpiuq(*scenario.argv(work)), float(rng.uniform(0.0, scenario.full_s))
            )
        label = f"store-random round {i}"
        tally(row, kills, lambda w=work: scenario.finish(w) == scenario.reference, notes, label)


def campaign_random(
    folder: Path, rounds: int, rng: np.random.Generator, row: list[int], notes: list[str]
) -> None:
    scenario = CampaignScenario(folder)
    for i in range(rounds):
        out = folder / f"campaign{i}"
        if i % 2:
            shutil.copytree(scenario.previous, out)
        killed = kill_after(mpiuq(*scenario.argv(out)), float(rng.uniform(0.0, scenario.full_s)))

        def resumed(out: Path = out, i: int = i) -> bool:
            # A summary left by a killed run must be its own complete one (killed on exit),
            # or the previous run's in a folder the run had not touched yet (killed while
            # Python started, before the command ran).
            if (out / "summary.json").exists() and not scenario.same(scenario.results(out)):
                untouched = i % 2 == 1 and not (out / "previous-run").exists()
                previous = scenario.results(scenario.previous)[0]
                if not (untouched and scenario.results(out)[0] == previous):
                    raise RuntimeError("the killed run left a summary.json that is not its result")
                row[4] += 1
            return scenario.same(scenario.finish(out))

        tally(row, killed, resumed, notes, f"campaign-random round {i}")
        shutil.rmtree(out, ignore_errors=True)


def tally(
    row: list[int], kills: int, resumed_identically: Any, notes: list[str], label: str
) -> None:
    """Count one round in ``row`` = [rounds, kills, identical, not identical, early kills]."""
    row[0] += 1
    row[1] += int(kills)
    try:
        ok = bool(resumed_identically())
        reason = "results differ from the reference"
    except Exception as exc:  # report it, and go on with the next round
        ok, reason = False, str(exc)
    row[2 if ok else 3] += 1
    if not ok:
        notes.append(f"{label}: {reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-rounds", type=int, default=60, help="store-random rounds (60)")
    parser.add_argument("--phase-repeats", type=int, default=2, help="store-phase repeats (2)")
    parser.add_argument("--campaign-rounds", type=int, default=20, help="campaign rounds (20)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the kill moments (2026)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows: dict[str, list[int]] = {
        k: [0, 0, 0, 0, 0] for k in ("store-phase", "store-random", "campaign-random")
    }
    notes: list[str] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mpiuq-kill-") as tmp:
        folder = Path(tmp)
        (folder / "store").mkdir()
        store = StoreScenario(folder / "store")
        store_phases(store, args.phase_repeats, rng, rows["store-phase"], notes)
        store_random(store, args.store_rounds, rng, rows["store-random"], notes)
        (folder / "campaign").mkdir()
        campaign_random(
            folder / "campaign", args.campaign_rounds, rng, rows["campaign-random"], notes
        )
    print(f"mpiuq kill-and-resume: seed {args.seed}, {time.perf_counter() - start:.0f} s")
    print(
        "| scenario        | rounds | kills | resumed bit-identically | not identical | "
        "killed before the command ran |"
    )
    print(
        "|-----------------|--------|-------|-------------------------|---------------|"
        "-------------------------------|"
    )
    for name, (rounds, kills, same, differ, early) in rows.items():
        print(f"| {name:<16}| {rounds:>6} | {kills:>5} | {same:>23} | {differ:>13} | {early:>29} |")
    for note in notes:
        print(note)
    return 1 if notes else 0


if __name__ == "__main__":
    raise SystemExit(main())
