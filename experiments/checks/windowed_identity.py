"""Bit-identity of the windowed kernel on every shared trace: windowed vs in-memory replay.

For every trace under ``../shared/data/traces`` that reads and lowers (with the
replay's default lowering), each of the ``analytic``, ``compute-only`` and ``packet``
models (the packet model on the replay's default dragonfly) is simulated in memory
(:func:`simulate`) and through windows of each ``--windows`` size
(:func:`simulate_windowed` on the program in memory): end times, decompositions,
per-call splits, marks, link bytes, matched receives, unmatched sends and event counts
must be equal bit for bit; a deadlock must be reported with the same message.
Prints one line per trace and model; exits 1 if anything differs.

Usage::

    python experiments/checks/windowed_identity.py [--windows 1,2,3,7,64] [--traces a,b]
        [--small-rows 300000]

Windows under 64 rows stop the loop often (at nearly every row for 1-3 rows, about
45 us each): they are run only on programs of at most ``--small-rows`` rows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from mpiuq.simulator.engine import RunResult, simulate
from mpiuq.simulator.errors import DeadlockError, SimulatorError
from mpiuq.simulator.lowering.lower import lower_trace
from mpiuq.simulator.parameters import SimParams
from mpiuq.simulator.program.source import ProgramSlices
from mpiuq.simulator.replay.run import ReplaySetup, network_and_nodes
from mpiuq.simulator.replay.windowed import simulate_windowed
from mpiuq.simulator.trace import read_trace

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces"
MODELS = ("analytic", "compute-only", "packet")
FIELDS = ("end_s", "parts_s", "per_call_s", "marks_s", "link_bytes", "matched_recv")


def trace_inputs() -> list[str]:
    """Every trace folder under :data:`DATA`, and, for folders holding several traces (runs,
    TI index files, single files), each of those."""
    from mpiuq.simulator.trace import detect_format

    names = []
    for d in sorted(p for p in DATA.iterdir() if p.is_dir()):
        try:
            detect_format(d)
            names.append(d.name)
        except (SimulatorError, ValueError, OSError):
            for child in sorted(d.iterdir()):
                if child.suffix not in (".md", ".xml") and not child.name.endswith("_files"):
                    names.append(f"{d.name}/{child.name}")
    return names


def outcome(run: object) -> tuple[object, ...]:
    """What must be equal: the arrays' bytes, or the deadlock message."""
    if isinstance(run, DeadlockError):
        return ("deadlock", str(run))
    assert isinstance(run, RunResult)
    arrays = tuple(getattr(run, f).tobytes() for f in FIELDS)
    return (run.n_events, run.unmatched_sends, *arrays)


def attempt(call: object) -> object:
    try:
        return call()  # type: ignore[operator]
    except DeadlockError as exc:
        return exc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", default="1,2,3,7,64")
    ap.add_argument("--small-rows", type=int, default=300_000)
    ap.add_argument("--traces", default="")
    args = ap.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to check")
        return 0
    names = args.traces.split(",") if args.traces else trace_inputs()
    params = SimParams()
    setup = ReplaySetup(models=MODELS)
    bad = 0
    with tempfile.TemporaryDirectory() as cache:
        for name in names:
            t0 = time.perf_counter()
            try:
                trace = read_trace(DATA / name, cache_dir=Path(cache))
                program = lower_trace(trace, setup.lowering_options(params)).program
            except (SimulatorError, ValueError, OSError) as exc:
                print(f"{name}: skipped ({type(exc).__name__}: {str(exc)[:100]})")
                continue
            factory, nodes = network_and_nodes(setup, trace.n_ranks)
            for model in MODELS:
                net = factory(model)
                whole = outcome(
                    attempt(partial(simulate, program, params, net, node_of_rank=nodes))
                )
                source = ProgramSlices(program)
                diffs = []
                for w in windows:
                    if w < 64 and program.n_ops > args.small_rows:
                        continue
                    run = attempt(
                        partial(
                            simulate_windowed,
                            source,
                            params,
                            net,
                            window_rows=w,
                            node_of_rank=nodes,
                        )
                    )
                    if outcome(run) != whole:
                        diffs.append(w)
                bad += bool(diffs)
                state = f"DIFFERS at windows {diffs}" if diffs else "identical"
                kind = "deadlock" if whole[0] == "deadlock" else f"{whole[0]} events"
                print(
                    f"{name} {model}: {state} ({program.n_ops} rows, {kind}, "
                    f"{time.perf_counter() - t0:.1f} s)"
                )
    print("all identical" if not bad else f"{bad} differing runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
