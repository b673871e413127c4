"""Seeded, bounded fuzzing of every input file kind this layer owns (see ``fuzzing.py``).

A few hundred mutated files per kind go through the public readers (and, for the surrogate
files, through the ``mpiuq`` command in process): each must be accepted with every value
in range (and stores must resume to the exact results), or refused with a typed error.
No case may let another exception escape, accept an out-of-range value, or hang
(a per-case alarm). ``experiments/fuzz/fuzz_inputs.py`` runs thousands per kind.
"""

from __future__ import annotations

import collections
import signal
from collections.abc import Iterator
from types import FrameType

import numpy as np
import pytest
from fuzzing import Kinds, Outcome

CASES = 300
CLI_CASES = 60
#: A case taking longer than this is a hang (they take milliseconds).
CASE_TIMEOUT_S = 20


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> Kinds:
    return Kinds(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module")
def cli_kinds(tmp_path_factory: pytest.TempPathFactory) -> Kinds:
    return Kinds(tmp_path_factory.mktemp("fuzz-cli"), cli=True)


class CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout


def outcomes(kinds: Kinds, kind: str, n: int, seed: int) -> Iterator[tuple[int, Outcome]]:
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for case in range(n):
            rng = np.random.default_rng([seed, Kinds.NAMES.index(kind), case])
            signal.alarm(CASE_TIMEOUT_S)
            try:
                outcome = kinds.run(kind, case, rng)
            except CaseTimeout:
                outcome = Outcome("hang", f"more than {CASE_TIMEOUT_S} s")
            finally:
                signal.alarm(0)
            yield case, outcome
    finally:
        signal.signal(signal.SIGALRM, old)


def check(kinds: Kinds, kind: str, n: int, seed: int) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    bad = []
    for case, outcome in outcomes(kinds, kind, n, seed):
        counts[outcome.status] += 1
        if outcome.status not in ("ok", "typed"):
            bad.append(f"case {case}: {outcome.status}: {outcome.detail}")
    assert bad == [], f"{kind}: {dict(counts)}\n" + "\n".join(bad[:10])
    return counts


@pytest.mark.parametrize("kind", Kinds.NAMES)
def test_mutated_inputs_are_accepted_in_range_or_refused_typed(kinds: Kinds, kind: str) -> None:
    counts = check(kinds, kind, CASES, seed=14)
    if kind == "swapped-handoff":  # another campaign's summary beside the draws: never used
        assert counts["typed"] == CASES
        return
    assert counts["ok"] > 0  # the base file is valid and some mutations keep it so
    if kind != "design-journal":  # a damaged journal tail is never an error: it is recomputed
        assert counts["typed"] > CASES // 3


@pytest.mark.parametrize(
    "kind", ["design-csv", "outputs-csv", "design-store", "design-journal", "summary-json"]
)
def test_the_command_line_gives_one_line_errors_on_mutated_inputs(
    cli_kinds: Kinds, kind: str
) -> None:
    counts = check(cli_kinds, kind, CLI_CASES, seed=15)
    assert counts["ok"] + counts["typed"] == CLI_CASES
