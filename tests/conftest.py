"""Shared fixtures: the input data of the tests (see ``shared_data.py``); the e2e tier's
marker; the longest modules first (``durations.json``), so two workers finish together;
one simulator thread per worker when several pytest workers share the cores."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
from shared_data import BENCHMARKS, STAMPEDE_DIR, TRACES, committed_copy

from mpiuq.simulator.runtime.watch import THREADS_ENV


@pytest.fixture
def traces_dir() -> Path:
    """``../shared/data/traces`` (the test is skipped when it is absent)."""
    if not TRACES.is_dir():
        pytest.skip("../shared/data/traces is absent")
    return TRACES


@pytest.fixture
def benchmarks_dir() -> Path:
    """``../shared/data/benchmarks`` (the test is skipped when it is absent)."""
    if not BENCHMARKS.is_dir():
        pytest.skip("../shared/data/benchmarks is absent")
    return BENCHMARKS


@pytest.fixture
def stampede_csv() -> Path:
    """The committed Stampede InfiniBand ping-pong data (always present)."""
    return STAMPEDE_DIR / "data.csv"


@pytest.fixture(scope="session")
def committed_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's ``results/`` as the last commit holds it, copied once per test
    process (``.../results``, same layout): tests read committed results through it, never
    in place, so a run that wrote into or moved a committed folder changes no test. Tests
    must not write into it (it is shared by the process's tests)."""
    return committed_copy("results", tmp_path_factory.mktemp("committed"))


#: The end-to-end tier (the folder is the tier: see pyproject's testpaths).
E2E = Path(__file__).resolve().parent / "e2e"


#: Seconds each test module took (setup, call and teardown of all its tests), written by
#: ``pytest tests --store-durations``; only the order they give matters.
DURATIONS = Path(__file__).resolve().parent / "durations.json"
#: Seconds assumed for a module missing from ``DURATIONS``, by tier (a new end-to-end
#: module is scheduled among the long ones, a new unit module among the short ones).
DEFAULT_S = {"e2e": 60.0, "integration": 2.0, "unit": 0.5}


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist with several workers, the campaigns' batched simulator runs one
    thread per worker (``$MPIUQ_SIMULATOR_THREADS``, unless set): the workers already use
    the cores, and two threads per worker on them cost about a quarter more CPU for the
    same results (rows are simulated independently of the thread that runs them)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) >= 2:
        os.environ.setdefault(THREADS_ENV, "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"write each test module's seconds into {DURATIONS.name} (modules not run keep theirs)",
    )


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _module_seconds() -> dict[str, float]:
    if not DURATIONS.is_file():
        return {}
    table = json.loads(DURATIONS.read_text(encoding="utf-8"))
    return {str(k): float(v) for k, v in table.items()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of ``tests/e2e`` slow, so ``-m "not slow"`` still selects the fast
    tier when the whole suite is named (``pytest tests -m "not slow"``); order the modules
    longest first (a module's tests stay together and in their order). pytest-xdist's
    ``--dist loadscope`` hands modules out in this order (``--no-loadscope-reorder`` in
    pyproject), so a 5-minute module does not start last and leave one worker idle."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.slow)
    seconds = _module_seconds()
    root = config.rootpath

    def expected_s(item: pytest.Item) -> float:
        module = _module(item.nodeid)
        if module in seconds:
            return seconds[module]
        tier = item.path.relative_to(root).parts[1] if root in item.path.parents else ""
        return DEFAULT_S.get(tier, 0.0)

    items.sort(key=lambda item: -expected_s(item))  # stable: a module's tests stay in order


_SPENT_S: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _SPENT_S[_module(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if not config.getoption("store_durations") or hasattr(config, "workerinput"):
        return  # (the xdist controller receives every worker's reports and writes once)
    table = _module_seconds() | {m: round(s, 2) for m, s in _SPENT_S.items()}
    text = json.dumps(dict(sorted(table.items())), indent=1) + "\n"
    DURATIONS.write_text(text, encoding="utf-8")
