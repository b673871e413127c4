"""Reader of DUMPI (SST) traces into a :class:`~mpiuq.simulator.trace.ir.Trace`.

Steps: find the files (:mod:`.dumpi.files`); read every rank file
(:mod:`.dumpi.raw`); choose the clock for compute gaps; resolve communicators across
ranks (:mod:`.dumpi.comms`); then lower each rank's calls to operations
(:mod:`.dumpi.lower`).

A single ``.bin`` file without its ``.meta`` is a *partial* trace: world size and
the file's rank come from its ``comm_size``/``comm_rank`` records, and members of
communicators that only the missing ranks could name are ``UNKNOWN_PEER``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np

from mpiuq.simulator.trace.builder import TraceBuilder
from mpiuq.simulator.trace.child import Progress, run_contained
from mpiuq.simulator.trace.dumpi.common import mpi_name
from mpiuq.simulator.trace.dumpi.comms import partial_world, resolve_full, resolve_partial
from mpiuq.simulator.trace.dumpi.files import CLOCKS, find_dumpi_files, find_dumpi_meta
from mpiuq.simulator.trace.dumpi.lower import Lowering, lower_rank
from mpiuq.simulator.trace.dumpi.raw import (
    RawCall,
    RawRank,
    check_dumpi_file,
    prepare_reader,
    read_dumpi_rank,
)
from mpiuq.simulator.trace.ir import Trace

__all__ = ["CLOCKS", "find_dumpi_files", "find_dumpi_meta", "read_dumpi"]

#: auto clock: CPU gaps when (sum of wall gaps) / (sum of CPU gaps) over all ranks exceeds this
OVERSUBSCRIPTION_RATIO = 2.0
_VERSION_WARNING = re.compile(
    r"This is dumpi version (\S+?),? but the trace file is from dumpi version (\S+?)\.?\s"
)


# --- clock ----------------------------------------------------------------------------------
def _gap_sums(calls: list[RawCall]) -> tuple[float, float]:
    wall = cpu = 0.0
    for a, b in pairwise(calls):
        wall += max(0.0, b.wall_start - a.wall_stop)
        cpu += max(0.0, b.cpu_start - a.cpu_stop)
    return wall, cpu


def _choose_clock(raws: list[RawRank], clock: str) -> tuple[bool, str]:
    """Pick the clock for compute gaps; ``auto`` compares wall and CPU gap totals.

    The ratio is taken over the totals of all ranks rather than as a median of per-rank
    ratios: in the oversubscribed LULESH runs most ranks have ratio ~1 while a few
    descheduled ranks carry most of the inflated wall gaps (27 ranks: 0.86 s wall vs
    0.09 s CPU per rank on average, but a per-rank median ratio of ~1).
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    sums = np.array([_gap_sums(r.calls) for r in raws]).reshape(-1, 2)
    wall, cpu = float(sums[:, 0].sum()), float(sums[:, 1].sum())
    ratio = wall / cpu if cpu > 0.0 else float("nan")
    if clock == "auto":
        use_cpu = cpu > 0.0 and ratio > OVERSUBSCRIPTION_RATIO
        why = f"auto: wall/CPU gap ratio {ratio:.3g} {'>' if use_cpu else '<='} "
        why += f"{OVERSUBSCRIPTION_RATIO:g}, totals over ranks {wall:.4g} s / {cpu:.4g} s"
    else:
        use_cpu = clock == "cpu"
        why = f"requested; wall/CPU gap ratio {ratio:.3g}"
    name = "CPU" if use_cpu else "wall"
    return use_cpu, (
        f"compute gaps from the {name} clock ({why}); time inside calls that produce no "
        "operation (Comm_rank, Wtime, type calls...) counts as compute"
    )


def read_dumpi(path: str | Path, *, clock: str = "auto") -> Trace:
    """Read a DUMPI trace.

    Parameters
    ----------
    path : str or Path
        ``.meta`` file, directory holding one ``.meta``, or a single ``.bin`` file
        (partial trace of one rank).
    clock : {"wall", "cpu", "auto"}
        Clock for compute gaps (next call's start - previous operation's stop).
        ``auto`` uses CPU time when the run was oversubscribed (sum of wall gaps /
        sum of CPU gaps over all ranks > 2), wall time otherwise.

    Returns
    -------
    Trace
        With ``format="dumpi"``; the clock choice and assumptions are in ``notes``.

    Raises
    ------
    TraceFormatError
        On a truncated or malformed file, naming file, rank and record index;
        also when the C reader crashes on it (it runs in a child process, see
        :mod:`.child`).
    """
    if clock not in CLOCKS:
        raise ValueError(f"clock={clock!r} is invalid: expected one of {CLOCKS}")
    files, world = find_dumpi_files(path)
    for f in files:
        check_dumpi_file(f)
    ranks = list(range(len(files))) if world is not None else [-1]
    prepare_reader()  # in this process: the child inherits it

    def read(progress: Progress) -> Trace:
        return _read_in_process(path, files, world, clock, progress)

    result = run_contained(read, files, ranks)
    trace: Trace = result.value
    notes = _library_notes(result.stderr_lines)
    return replace(trace, notes=trace.notes + notes) if notes else trace


def _library_notes(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Notes from libundumpi's messages (it warns once per file about newer versions)."""
    notes: dict[str, None] = {}
    for line in lines:
        m = _VERSION_WARNING.search(line)
        if m:
            notes[
                f"libundumpi {m.group(1)} read rank files written by dumpi {m.group(2)} "
                "(it warns that forward compatibility is not guaranteed)"
            ] = None
        elif len(notes) < 4:
            notes[f"libundumpi: {line[:200]}"] = None
    return tuple(notes)


def _read_in_process(
    path: str | Path, files: list[Path], world: int | None, clock: str, progress: Progress | None
) -> Trace:
    raws = []
    for i, f in enumerate(files):
        if progress is not None:
            progress.at_file(i)
        raws.append(read_dumpi_rank(f, progress))
    use_cpu, clock_note = _choose_clock(raws, clock)
    notes: list[str] = []
    if world is None:
        n_ranks, rank, notes = partial_world(raws[0])
        ranks = [rank]
        notes.insert(
            0,
            f"partial trace: one rank file (rank {rank} of {n_ranks}); the other "
            "ranks have no operations and cannot be replayed",
        )
    else:
        n_ranks, ranks = world, list(range(world))
    b = TraceBuilder("dumpi", str(path), n_ranks)
    for n in [*notes, clock_note]:
        b.note(n)
    if world is None:
        states = [resolve_partial(raws[0], b, ranks[0])]
    else:
        states = resolve_full(raws, b, ranks)
    for raw, st, r in zip(raws, states, ranks, strict=True):
        lw = Lowering(b, raw, st, r, use_cpu)
        lower_rank(lw)
        pending = sum(len(dq) for dq in lw.fifo.values())
        if pending:
            b.note(f"rank {r}: {pending} request(s) never completed in the trace")
        for other, cnt in raw.other.items():
            b.unsupported[mpi_name(other)] += cnt
    return b.build()
