"""How long the test suite takes on N pytest-xdist workers, by module order.

Reads the per-test times of one run (``pytest tests --durations=0``, saved to a file) and
replays pytest-xdist's ``--dist loadscope`` hand-out (a module at a time, a worker asking
for another when two or fewer of its tests are left) in two orders: xdist's default
(modules with the most tests first, ``--loadscope-reorder``) and the suite's own (longest
modules first, ``tests/durations.json``). Prints each order's predicted wall time, the
idle time it leaves at the end, and the critical module. The replay assumes one worker per
idle core (times as measured), so it compares orders, not machines.

Usage::

    pytest tests --durations=0 -p no:cacheprovider > run.log
    python experiments/perf/suite_schedule.py run.log [--workers 2]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S.*?)\s*$")


def test_seconds(log: Path) -> dict[str, float]:
    """Seconds per test id (setup + call + teardown), in the order first seen."""
    out: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = LINE.match(line)
        if m and "::" in m.group(3):
            out[m.group(3)] += float(m.group(1))
    return dict(out)


def modules(tests: dict[str, float]) -> dict[str, list[float]]:
    """Per module, its tests' seconds (collection order within the module is kept only
    approximately: the log lists tests by duration; the order inside a module hardly
    changes when it is handed out)."""
    out: dict[str, list[float]] = defaultdict(list)
    for test_id, s in sorted(tests.items()):
        out[test_id.split("::", 1)[0]].append(s)
    return dict(out)


def replay(queue: list[tuple[str, list[float]]], workers: int) -> tuple[float, float, str]:
    """(wall seconds, idle worker-seconds at the end, module the last worker ran last)."""
    pending: list[list[float]] = [[] for _ in range(workers)]
    clock = [0.0] * workers
    last = [""] * workers
    work = list(queue)

    def assign(w: int) -> None:
        if work:
            name, tests = work.pop(0)
            pending[w].extend(tests)
            last[w] = name

    for w in range(workers):
        assign(w)
    for w in range(workers):
        if len(pending[w]) <= 2:
            assign(w)
    while any(pending):
        w = min((i for i in range(workers) if pending[i]), key=lambda i: clock[i] + pending[i][0])
        clock[w] += pending[w].pop(0)
        if len(pending[w]) <= 2:
            assign(w)
    wall = max(clock)
    return wall, sum(wall - c for c in clock), last[clock.index(wall)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path, help="output of pytest --durations=0")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    mods = modules(test_seconds(a.log))
    total = sum(sum(t) for t in mods.values())
    print(f"{len(mods)} modules, {sum(map(len, mods.values()))} tests, {total:.0f} s of tests")
    collection = sorted(mods.items())  # e2e, integration, unit: pytest's folder order
    orders = {
        "xdist default (most tests first)": sorted(collection, key=lambda kv: -len(kv[1])),
        "longest module first": sorted(collection, key=lambda kv: -sum(kv[1])),
    }
    for label, queue in orders.items():
        wall, idle, mod = replay(queue, a.workers)
        print(f"{label:34s} wall {wall:6.0f} s  idle at the end {idle:5.0f} s  last: {mod}")
    print(f"{'lower bound (total / workers)':34s} wall {total / a.workers:6.0f} s")


if __name__ == "__main__":
    main()
