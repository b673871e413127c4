"""Fuzz every input file kind of campaigns, benchmark data, surrogate tables and stores.

Thousands of mutated files per kind (the mutations and oracles of ``tests/fuzzing.py``) go
through the public readers and, every ``--cli-every``-th case, through the ``mpiuq``
command in process. Cases run in worker processes, so a crash (a signal) or a hang (no
answer within ``--timeout`` seconds) is recorded instead of stopping the run; the worker
is then replaced. The ``campaign-run`` row changes one value of the campaign file to an absurd one, or
scales one or two numbers by 0.1-10, and, if
the file is accepted, runs the whole campaign pipeline on it under a reduced budget
(``MPIUQ_MAX_SURROGATE_EVALUATIONS=2e6``, ``MPIUQ_MAX_MODEL_WORK=1e9``,
``MPIUQ_MEMORY_LIMIT_GB=4``: at most about 30 s of work), so a case past the timeout
means an estimate that missed a cost.

Prints a table: kind, cases, ok, typed errors, crashes, hangs, escaped tracebacks and
silently accepted out-of-range values, then the failing cases (``--replay KIND CASE``
reruns one in this process, with its traceback).

    python experiments/fuzz/fuzz_inputs.py --cases 2000        # ~15 min on 2 cores
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fuzzing import (  # noqa: E402
    BASE_CAMPAIGN,
    Kinds,
    Outcome,
    classify,
    mutate_numbers_plausibly,
    mutate_tokens,
    run_campaign_file,
)

KINDS = (*Kinds.NAMES, "campaign-run")
COLUMNS = ("cases", "ok", "typed", "crash", "hang", "escaped", "out-of-range")
REDUCED_BUDGET = {
    "MPIUQ_MAX_SURROGATE_EVALUATIONS": "2e6",
    "MPIUQ_MAX_MODEL_WORK": "1e9",
    "MPIUQ_MEMORY_LIMIT_GB": "4",
}


def case_rng(seed: int, kind: str, case: int) -> np.random.Generator:
    return np.random.default_rng([seed, KINDS.index(kind), case])


class Worker:
    """Runs cases in this process (the ``--worker`` side of the protocol)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.api = Kinds(folder / "api")
        self.cli = Kinds(folder / "cli", cli=True)

    def run(self, kind: str, case: int, seed: int, cli_every: int) -> Outcome:
        rng = case_rng(seed, kind, case)
        if kind == "campaign-run":
            return self.campaign_run(case, rng)
        kinds = self.cli if cli_every and case % cli_every == 0 else self.api
        return kinds.run(kind, case, rng)

    def campaign_run(self, case: int, rng: np.random.Generator) -> Outcome:
        """A mutated campaign file; if it is accepted, the whole pipeline on it."""
        from mpiuq.main import main

        work = Path(tempfile.mkdtemp(dir=self.folder))
        (work / "data.csv").write_bytes(self.api.csv)
        path = work / "campaign.toml"
        if rng.random() < 0.5:  # one absurd value, or one or two numbers at the edge
            path.write_bytes(mutate_tokens(BASE_CAMPAIGN, rng))
        else:
            path.write_bytes(mutate_numbers_plausibly(BASE_CAMPAIGN, rng))
        try:
            first = classify(lambda: run_campaign_file(path))
            if first.status != "ok":
                return first
            err = io.StringIO()
            argv = [
                "campaign",
                "run",
                str(path),
                "--out",
                str(work / "out"),
                "--quiet",
                "--no-plots",
            ]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(argv)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        text = err.getvalue()
        if code not in (0, 1, 2) or "internal error" in text or "Traceback" in text:
            return Outcome("escaped", f"campaign run exited {code}: {text.strip()[:200]}")
        if code == 2 or (code == 1 and "mpiuq campaign run: error:" in text):
            return Outcome("typed", text.strip()[:200])
        return Outcome("ok", f"exit {code}")  # 0, or 1 with warnings (not converged...)


def worker_main(folder: Path) -> None:
    os.environ.update(REDUCED_BUDGET)
    worker = Worker(folder)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        outcome = worker.run(job["kind"], job["case"], job["seed"], job["cli_every"])
        print(json.dumps({"status": outcome.status, "detail": outcome.detail}), flush=True)


class Pool:
    """Worker processes fed one case at a time, replaced after a crash or a hang."""

    def __init__(self, n: int, folder: Path, timeout_s: float) -> None:
        self.folder = folder
        self.timeout_s = timeout_s
        self.procs: list[subprocess.Popen[str] | None] = [None] * n

    def _start(self, slot: int) -> subprocess.Popen[str]:
        work = self.folder / f"worker{slot}-{time.monotonic_ns()}"
        work.mkdir(parents=True)
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(work)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        if not ready:
            raise RuntimeError(f"worker failed to start (exit {proc.wait()})")
        self.procs[slot] = proc
        return proc

    def submit(self, slot: int, job: dict[str, object]) -> None:
        proc = self.procs[slot] or self._start(slot)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()

    def collect(self, slot: int, started: float) -> Outcome:
        proc = self.procs[slot]
        assert proc is not None and proc.stdout is not None
        left = self.timeout_s - (time.monotonic() - started)
        ready, _, _ = select.select([proc.stdout], [], [], max(left, 0.0))
        if not ready:
            proc.kill()
            proc.wait()
            self.procs[slot] = None
            return Outcome("hang", f"no answer within {self.timeout_s:g} s")
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            self.procs[slot] = None
            return Outcome("crash", f"worker died with exit code {code}")
        doc = json.loads(line)
        return Outcome(doc["status"], doc["detail"])

    def close(self) -> None:
        for proc in self.procs:
            if proc is not None:
                proc.kill()
                proc.wait()


def run_all(args: argparse.Namespace) -> int:
    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    counts: dict[str, collections.Counter[str]] = {k: collections.Counter() for k in kinds}
    failures: list[str] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mpiuq-fuzz-") as tmp:
        pool = Pool(args.workers, Path(tmp), args.timeout)
        try:
            jobs = [
                (kind, case)
                for kind in kinds
                for case in range(args.pipeline_cases if kind == "campaign-run" else args.cases)
            ]
            busy: dict[int, tuple[str, int, float]] = {}
            while jobs or busy:
                for slot in range(args.workers):
                    if slot not in busy and jobs:
                        kind, case = jobs.pop(0)
                        job = {
                            "kind": kind,
                            "case": case,
                            "seed": args.seed,
                            "cli_every": args.cli_every,
                        }
                        pool.submit(slot, job)
                        busy[slot] = (kind, case, time.monotonic())
                procs = {pool.procs[s].stdout: s for s in busy if pool.procs[s] is not None}  # type: ignore[union-attr]
                select.select(list(procs), [], [], 1.0)
                for slot, (kind, case, started) in list(busy.items()):
                    proc = pool.procs[slot]
                    assert proc is not None and proc.stdout is not None
                    ready, _, _ = select.select([proc.stdout], [], [], 0)
                    if not ready and time.monotonic() - started < args.timeout:
                        continue
                    outcome = pool.collect(slot, started)
                    del busy[slot]
                    counts[kind][outcome.status] += 1
                    if outcome.status not in ("ok", "typed"):
                        failures.append(f"{kind} case {case}: {outcome.status}: {outcome.detail}")
        finally:
            pool.close()
    print_table(counts, time.perf_counter() - start, args)
    for line in failures[:50]:
        print(line)
    return 1 if failures else 0


def print_table(
    counts: dict[str, collections.Counter[str]], elapsed_s: float, args: argparse.Namespace
) -> None:
    print(
        f"mpiuq input fuzzing: seed {args.seed}, {args.cases} cases per kind "
        f"({args.pipeline_cases} for campaign-run), every {args.cli_every}th through the CLI, "
        f"hang = no answer within {args.timeout:g} s; {elapsed_s:.0f} s"
    )
    header = f"| {'kind':<15}| {'cases':>6} | {'ok':>6} | {'typed errors':>12} | {'crashes':>7} | {'hangs > 30 s':>12} | {'escaped tracebacks':>18} | {'accepted out of range':>21} |"
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    for kind, c in counts.items():
        n = sum(c.values())
        print(
            f"| {kind:<15}| {n:>6} | {c['ok']:>6} | {c['typed']:>12} | {c['crash']:>7} | "
            f"{c['hang']:>12} | {c['escaped']:>18} | {c['out-of-range']:>21} |"
        )


def replay(kind: str, case: int, args: argparse.Namespace) -> int:
    import fuzzing

    def loud(run: object) -> Outcome:
        try:
            problems = run()  # type: ignore[operator]
        except fuzzing.TYPED_ERRORS as exc:
            return Outcome("typed", f"{type(exc).__name__}: {exc}")
        except Exception:
            traceback.print_exc()
            return Outcome("escaped")
        return Outcome("out-of-range", "; ".join(problems)) if problems else Outcome("ok")

    fuzzing.classify = loud  # type: ignore[assignment]
    os.environ.update(REDUCED_BUDGET)
    with tempfile.TemporaryDirectory() as tmp:
        worker = Worker(Path(tmp))
        print(worker.run(kind, case, args.seed, args.cli_every))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per kind (2000)")
    parser.add_argument("--pipeline-cases", type=int, default=400, help="campaign-run cases (400)")
    parser.add_argument("--kinds", default="", help=f"comma-separated subset of {', '.join(KINDS)}")
    parser.add_argument("--seed", type=int, default=2026, help="seed of all mutations (2026)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds before a case is a hang"
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    parser.add_argument(
        "--cli-every", type=int, default=4, help="every n-th case through the CLI (4)"
    )
    parser.add_argument("--replay", nargs=2, metavar=("KIND", "CASE"), help="rerun one case here")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker_main(args.worker)
        return 0
    if args.replay:
        return replay(args.replay[0], int(args.replay[1]), args)
    return run_all(args)


if __name__ == "__main__":
    raise SystemExit(main())
