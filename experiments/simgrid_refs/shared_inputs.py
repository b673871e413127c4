"""The shared TI traces as SimGrid 3.32's ``smpirun -replay`` and mpiuq read them.

``record.py`` replays every shared SimGrid TI trace with SimGrid; ``validate.py`` replays
the same trace with mpiuq. Most shared traces (``ti_*`` with a SimGrid platform) come
with an index SimGrid reads directly (their ``_replayable`` variant where there is one).
The others need a faithful copy in SimGrid 3.32's dialect, written here into a scratch
folder; mpiuq always reads the trace as stored:

* ``gen_ti_lulesh_<N>r``: SMPI 3.32 traces with an index ``ti<N>`` (used as is).
* ``ti_simgrid_replay_multiple_32r``: SMPI's 2014 dialect, per-rank files
  ``ti_trace<r>.txt``; SimGrid 3.32 only knows the lower-case action names
  (``allReduce`` -> ``allreduce``), the arguments are unchanged.
* ``ti_simgrid_nas_lu_S_4r``: the 2010 MSG dialect (``p0 send p1 5760``, ``p0 recv p1``,
  ``p0 Irecv p1`` ... ``p0 wait``) written in the current one: tag 0, the receive size
  taken from the matching send (first-in first-out per sender and receiver, MPI's
  non-overtaking order on one tag), ``wait`` naming the last ``Irecv``'s source,
  destination and tag.
* ``ti_simgrid_replay_examples/actions_<X>``: one file holds every rank's lines (SimGrid
  runs it as a shared action file); written as one file per rank, same lines in the
  same order, and ``ti_simgrid_replay_examples/split_traces`` (``actions0.txt`` and
  ``actions1.txt``, one file per rank) with an index of its own.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict, deque
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "perf"))
from perf_replay import copy_uncompressed  # noqa: E402

DATA = HERE.parents[2] / "shared" / "data" / "traces"
EXAMPLES = "ti_simgrid_replay_examples"


def _copy_index(index: Path, work: Path) -> Path:
    copy_uncompressed(index, work)
    return work / index.name


def platform_traces() -> list[str]:
    """Shared ``ti_*`` traces recorded with a SimGrid platform (SMPI 3.x dialect)."""
    return sorted(
        d.name
        for d in DATA.glob("ti_*")
        if (d / f"{d.name.removeprefix('ti_')}.txt").is_file() and any(d.glob("platform_*.xml"))
    )


def other_traces() -> list[str]:
    """Shared TI traces that need a SimGrid 3.32 copy (see the module docstring)."""
    names = sorted(d.name for d in DATA.glob("gen_ti_*") if d.is_dir())
    for name in ("ti_simgrid_nas_lu_S_4r", "ti_simgrid_replay_multiple_32r"):
        if (DATA / name).is_dir():
            names.append(name)
    if (DATA / EXAMPLES).is_dir():
        names += sorted(f"{EXAMPLES}/{p.stem}" for p in (DATA / EXAMPLES).glob("actions_*.txt"))
        names.append(f"{EXAMPLES}/split_traces")
    return names


def shared_traces() -> list[str]:
    """Every shared TI trace with a SimGrid reference to record."""
    return platform_traces() + other_traces()


def mpiuq_input(name: str) -> Path:
    """The path mpiuq replays for shared trace ``name`` (the trace as stored)."""
    if name.startswith("ti_") and (DATA / name / f"{name.removeprefix('ti_')}.txt").is_file():
        return DATA / name / f"{name.removeprefix('ti_')}.txt"
    if name.startswith(f"{EXAMPLES}/"):
        stem = name.split("/", 1)[1]
        return DATA / EXAMPLES / (stem if stem == "split_traces" else f"{stem}.txt")
    return DATA / name


def _lines_by_rank(path: Path) -> dict[int, list[list[str]]]:
    ranks: dict[int, list[list[str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        words = line.split()
        if words:
            ranks[int(words[0].removeprefix("p"))].append(words)
    return ranks


def _write_ranks(ranks: dict[int, list[str]], work: Path, name: str) -> Path:
    (work / f"{name}_files").mkdir(parents=True)
    rels = []
    for rank in range(max(ranks) + 1):
        rel = f"{name}_files/rank-{rank}.txt"
        (work / rel).write_text("".join(f"{line}\n" for line in ranks.get(rank, [])))
        rels.append(rel)
    (work / f"{name}.txt").write_text("".join(f"{rel}\n" for rel in rels))
    return work / f"{name}.txt"


def _msg_to_smpi(folder: Path, work: Path) -> Path:
    """The 2010 MSG-dialect trace of ``folder`` (``simgrid<r>.txt``) in SMPI 3.32's."""
    per_rank: dict[int, list[list[str]]] = {}
    for path in sorted(folder.glob("simgrid*.txt")):
        per_rank.update(_lines_by_rank(path))
    sends: dict[tuple[int, int], deque[str]] = defaultdict(deque)
    for rank, lines in per_rank.items():
        for w in lines:
            if w[1] == "send":
                sends[(rank, int(w[2].removeprefix("p")))].append(w[3])
    out: dict[int, list[str]] = {}
    for rank, lines in per_rank.items():
        converted, last_irecv = [], None
        for w in lines:
            action = w[1].lower()
            if action == "send":
                converted.append(f"{rank} send {w[2].removeprefix('p')} 0 {w[3]}")
            elif action in ("recv", "irecv"):
                src = int(w[2].removeprefix("p"))
                converted.append(f"{rank} {action} {src} 0 {sends[(src, rank)].popleft()}")
                if action == "irecv":
                    last_irecv = src
            elif action == "wait":
                if last_irecv is None:
                    raise ValueError(f"{folder}: rank {rank} waits with no Irecv before")
                converted.append(f"{rank} wait {last_irecv} {rank} 0")
                last_irecv = None
            else:
                converted.append(" ".join([str(rank), action, *w[2:]]))
        out[rank] = converted
    left = {k: len(q) for k, q in sends.items() if q}
    if left:
        raise ValueError(f"{folder}: sends without a receive {left}")
    return _write_ranks(out, work, folder.name)


def simgrid_input(name: str, work: Path) -> Path:
    """Write into ``work`` a copy of shared trace ``name`` that SimGrid 3.32's ``smpirun
    -replay`` reads; return its index file."""
    if name in platform_traces():
        trace_dir = DATA / name
        base = name.removeprefix("ti_")
        variant = trace_dir / f"{base}_replayable.txt"
        return _copy_index(variant if variant.is_file() else trace_dir / f"{base}.txt", work)
    if name.startswith("gen_ti_"):
        index = next(p for p in (DATA / name).iterdir() if re.fullmatch(r"ti\d+", p.name))
        return _copy_index(index, work)
    if name == "ti_simgrid_replay_multiple_32r":
        ranks = {}
        for path in (DATA / name).glob("ti_trace*.txt"):
            rank = int(path.stem.removeprefix("ti_trace"))
            ranks[rank] = [
                " ".join([w[0], w[1].lower(), *w[2:]])
                for w in (line.split() for line in path.read_text().splitlines())
                if w
            ]
        return _write_ranks(ranks, work, name)
    if name == "ti_simgrid_nas_lu_S_4r":
        return _msg_to_smpi(DATA / name, work)
    if name.startswith(f"{EXAMPLES}/"):
        stem = name.split("/", 1)[1]
        files = ["actions0.txt", "actions1.txt"] if stem == "split_traces" else [f"{stem}.txt"]
        ranks = {}
        for f in files:
            for rank, lines in _lines_by_rank(DATA / EXAMPLES / f).items():
                ranks[rank] = [" ".join(w) for w in lines]
        return _write_ranks(ranks, work, stem)
    raise ValueError(f"no shared TI trace named {name!r}")
