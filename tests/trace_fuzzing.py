"""Seeded fuzzing of the trace readers (shared by tests/e2e/test_trace_fuzz.py and
experiments/fuzz/fuzz_traces.py).

Each case copies a seed trace, damages it (byte flips, insertions, deletions,
truncation, chunk duplication; for TI text also token- and line-level edits that
put extreme numbers where counts, tags, ranks and flops go; for mpiuq HDF5 files
also attribute and dataset edits) and reads it in a worker process through the
public entry point (:func:`read_trace` without cache, or :func:`load_trace_h5`).
The worker runs cases one after another; the parent waits for each with a time
limit, so a crash (the worker dies) or a hang (the limit passes) is seen, and the
worker is replaced. Outcomes:

* ``ok``: read, and every value is within :mod:`mpiuq.simulator.trace.limits`
  (checked here independently of :meth:`Trace.validate`);
* ``typed``: TraceFormatError or UnsupportedTraceError (the documented errors);
* ``crash``, ``hang``: the worker died, or did not answer in time;
* ``escaped``: any other exception (a traceback a user would see);
* ``out_of_range``: read without error but holding a value beyond the limits.
"""

from __future__ import annotations

import contextlib
import gzip
import multiprocessing as mp
import os
import random
import shutil
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from shared_data import TRACES

DATA = TRACES
OUTCOMES = ("ok", "typed", "crash", "hang", "escaped", "out_of_range")
KINDS = ("ti", "dumpi", "otf2", "h5")

#: Values that probe every bound: negative, any-source, int32/int64 edges, huge floats.
EXTREMES = (
    "-1", "-2", "-333", "0", "1", "2147483647", "2147483648", "4294967296",
    "9223372036854775807", "9223372036854775808", "1e19", "-1e300", "1e300", "1e-300",
    "nan", "inf", "-inf", "1.5", "p-1", "p99999999", "abc", "", "0x10", "1_000", "+7",
    "99", "1e6", "65536",
)  # fmt: skip
TI_ACTIONS = (
    "init", "finalize", "compute", "sleep", "send", "isend", "recv", "irecv", "wait",
    "test", "waitall", "sendrecv", "barrier", "bcast", "reduce", "allreduce", "alltoall",
    "alltoallv", "gather", "gatherv", "allgather", "allgatherv", "scatter", "scatterv",
    "reducescatter", "scan", "exscan", "comm_size", "location", "waitAny", "frobnicate",
)  # fmt: skip

# --- seeds -------------------------------------------------------------------------------


def ti_seed_text(n: int = 4) -> str:
    """A TI trace of ``n`` ranks using every action (current dialect)."""
    lines = [f"{r} init" for r in range(n)]
    for r in range(n):
        nxt, prv = (r + 1) % n, (r - 1) % n
        lines += [
            f"{r} compute 1.5e6",
            f"{r} isend {nxt} 7 100 0",
            f"{r} irecv {prv} 7 100 0",
            f"{r} irecv -333 9 4",
            f"{r} send {nxt} 9 4",
            f"{r} test {prv} {r} 7",
            f"{r} wait {r} {nxt} 7",
            f"{r} waitall 2",
            f"{r} sendrecv 8 {nxt} 8 {prv} 0 1",
            f"{r} allreduce 10 1e5 0",
            f"{r} bcast 100 0 0",
            f"{r} reduce 4 1e3 0 1",
            f"{r} alltoall 4 4 1 1",
            f"{r} alltoallv {4 * n} " + " ".join(["4"] * n) + f" {4 * n} " + " ".join(["4"] * n),
            f"{r} gather 2 2 0 1 1",
            f"{r} allgatherv 3 " + " ".join(["3"] * n) + " 0 0",
            f"{r} scatterv " + " ".join(["5"] * n) + " 5 0 1 1",
            f"{r} reducescatter " + " ".join(["2"] * n) + " 1e4 0",
            f"{r} barrier",
            f"# comment on rank {r}",
        ]
    lines += [f"{r} wait -333 {r} 9" for r in range(n)]
    lines += [f"{r} finalize" for r in range(n)]
    return "\n".join(lines) + "\n"


def ti_msg_seed_text() -> str:
    """A TI trace in SimGrid's MSG 2010 dialect (p-ranks, byte sizes, wait on last Irecv)."""
    return (
        "p0 init\np1 init\np0 compute 5e5\np0 send p1 5760\np0 Irecv p1\np0 wait\n"
        "p0 allReduce 40 86\np0 barrier\np0 finalize\np1 recv p0\np1 send p0 12\n"
        "p1 allReduce 40 86\np1 barrier\np1 finalize\n"
    )


@dataclass
class Seed:
    """A trace to damage: ``path`` inside ``root``, and the files mutations may touch."""

    kind: str
    name: str
    root: Path
    path: Path
    targets: list[Path] = field(default_factory=list)


def make_seeds(kind: str, workdir: Path, *, shared: bool, quick: bool = False) -> list[Seed]:
    """Seed traces of one kind (synthetic ones always; shared ones when present).

    ``quick`` leaves out the larger shared seeds (for the test suite).
    """
    seeds: list[Seed] = []
    if kind == "ti":
        for name, text in (("ti_all_actions", ti_seed_text()), ("ti_msg", ti_msg_seed_text())):
            d = workdir / name
            d.mkdir(parents=True)
            (d / "trace.txt").write_text(text)
            seeds.append(Seed(kind, name, d, d / "trace.txt", [d / "trace.txt"]))
        d = workdir / "ti_per_rank_gz"
        d.mkdir()
        per_rank: dict[int, list[str]] = {}
        for ln in ti_seed_text(3).splitlines():
            per_rank.setdefault(int(ln.split()[0]) if ln[0] != "#" else 0, []).append(ln)
        for r, lns in per_rank.items():
            raw = ("\n".join(lns) + "\n").encode()
            (d / f"rank-{r}.txt.gz").write_bytes(gzip.compress(raw) if r != 1 else raw)
        (d / "index").write_text("".join(f"rank-{r}.txt\n" for r in per_rank))
        seeds.append(Seed(kind, "ti_per_rank_gz", d, d, sorted(d.iterdir())))
        if shared and DATA.is_dir() and not quick:
            seeds.append(_shared(kind, "ti_simgrid_replay_multiple_32r", workdir))
    elif kind == "h5":
        seeds += _h5_seeds(workdir)
    elif shared and DATA.is_dir():
        names = {
            "dumpi": ["dumpi_sstdumpi_testtrace_4r", "dumpi_sstmac_testbgp_7r"],
            "otf2": ["otf2_pipit_pingpong_2r", "otf2_ember_bcast_4r"],
        }[kind]
        if not quick:
            names += {
                "dumpi": ["dumpi_anacinx_naive_alltoall_4r/run_0"],
                "otf2": ["otf2_tracer_stencil4d_32r", "otf2_sstmac_mpi_coverage_10r"],
            }[kind]
        seeds += [_shared(kind, n, workdir) for n in names]
    return seeds


def _shared(kind: str, name: str, workdir: Path) -> Seed:
    d = workdir / name.replace("/", "_")
    shutil.copytree(DATA / name, d)
    for f in d.rglob("*"):
        os.chmod(f, 0o755 if f.is_dir() else 0o644)
    targets = sorted(
        f for f in d.rglob("*") if f.is_file() and f.suffix not in (".md", ".xml", ".cfg", ".txt")
    )
    if kind == "ti":
        targets = sorted(f for f in d.rglob("*.txt") if f.is_file())[:8]
    return Seed(kind, name, d, d, targets)


def _h5_seeds(workdir: Path) -> list[Seed]:
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.trace import read_trace, save_trace

    seeds = []
    for motif, compress in (("halo3d", False), ("allreduce", True)):
        d = workdir / f"h5_{motif}"
        d.mkdir()
        path = d / "trace"  # no suffix: found by content
        save_trace(synthesize(MotifSpec(motif, n_ranks=8, iterations=2)), path, compress=compress)
        seeds.append(Seed("h5", f"h5_{motif}", d, path, [path]))
    d = workdir / "h5_ti"
    d.mkdir()
    (d / "t.txt").write_text(ti_seed_text())
    save_trace(read_trace(d / "t.txt", use_cache=False), d / "t.h5", compress=False)
    (d / "t.txt").unlink()
    seeds.append(Seed("h5", "h5_ti", d, d / "t.h5", [d / "t.h5"]))
    return seeds


# --- mutations ---------------------------------------------------------------------------


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One of: bit flips, byte insertions, deletions, truncation, chunk duplication."""
    b = bytearray(data)
    op = rng.choice(("flip", "flip", "insert", "delete", "truncate", "duplicate", "set"))
    if not b:
        return bytes([rng.randrange(256)])
    for _ in range(rng.randint(1, 4)):
        p = rng.randrange(len(b))
        if op == "flip":
            b[p] ^= 1 << rng.randrange(8)
        elif op == "insert":
            b[p:p] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == "delete":
            del b[p : p + rng.randint(1, 4)]
        elif op == "set":
            b[p] = rng.choice((0x00, 0xFF, 0x7F, 0x80))
        if not b:
            break
    if op == "truncate":
        del b[rng.randrange(len(b)) :]
    elif op == "duplicate":
        p, n = rng.randrange(len(b)), rng.randint(1, 64)
        b[p:p] = b[p : p + n]
    return bytes(b)


def mutate_ti_text(text: str, rng: random.Random) -> str:
    """Token and line edits: extreme numbers, other actions, dropped or repeated tokens."""
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        toks = lines[i].split()
        op = rng.choice(("number", "number", "number", "action", "drop", "add", "line", "rank"))
        if op == "number" and len(toks) > 2:
            toks[rng.randrange(2, len(toks))] = rng.choice(EXTREMES)
        elif op == "action" and len(toks) > 1:
            toks[1] = rng.choice(TI_ACTIONS)
        elif op == "drop" and toks:
            del toks[rng.randrange(len(toks))]
        elif op == "add":
            toks.insert(rng.randrange(len(toks) + 1), rng.choice(EXTREMES))
        elif op == "rank" and toks:
            toks[0] = rng.choice(("4294967296", "-1", "p2", "1e3", "7", "4194303", "#"))
        elif op == "line":
            if rng.random() < 0.5:
                del lines[i]
                continue
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        lines[i] = " ".join(toks)
    return "\n".join(lines) + ("\n" if rng.random() < 0.9 else "")


def mutate_h5(path: Path, rng: random.Random) -> None:
    """Attribute and dataset edits of an mpiuq HDF5 trace (in place)."""
    import h5py

    with h5py.File(path, "r+") as f:
        names = sorted(f.keys())
        op = rng.choice(("attr", "attr", "value", "value", "drop", "reshape", "retype"))
        if op == "attr":
            key = rng.choice(sorted(f.attrs.keys()))
            f.attrs[key] = rng.choice(
                (-1, 0, 2**40, 2**63 - 1, "x", "{", "[1]", np.arange(3), 1.5, b"\xff")
            )
        elif op == "value":
            ds = f[rng.choice(names)]
            if ds.shape[0]:
                i = rng.randrange(ds.shape[0])
                big = np.iinfo(ds.dtype).max if ds.dtype.kind in "iu" else 1e300
                low = np.iinfo(ds.dtype).min if ds.dtype.kind in "iu" else -1.0
                ds[i] = rng.choice((big, low, 0, -1, -3, 1))
        elif op == "drop":
            del f[rng.choice(names)]
        elif op == "reshape":
            name = rng.choice(names)
            data = f[name][...]
            del f[name]
            f.create_dataset(name, data=np.concatenate([data, data[:1]]) if data.size else data)
        else:
            name = rng.choice(names)
            data = f[name][...]
            del f[name]
            f.create_dataset(name, data=data.astype(rng.choice((np.float32, np.int8, "S4"))))


def damage(seed: Seed, rng: random.Random) -> None:
    """Apply one random damage to the seed's files (in place)."""
    target = rng.choice(seed.targets)
    if seed.kind == "h5" and rng.random() < 0.6:
        try:
            mutate_h5(target, rng)
            return
        except Exception:  # the edit itself failed (e.g. cast): fall back to bytes
            pass
    data = target.read_bytes()
    if seed.kind == "ti" and rng.random() < 0.7:
        gz = data[:2] == b"\x1f\x8b"
        try:
            text = (gzip.decompress(data) if gz else data).decode()
        except (OSError, UnicodeDecodeError, EOFError):
            text = None
        if text is not None:
            out = mutate_ti_text(text, rng).encode()
            target.write_bytes(gzip.compress(out) if gz else out)
            return
    target.write_bytes(mutate_bytes(data, rng))


# --- reading a case (in the worker) ------------------------------------------------------


def out_of_range(trace: Any) -> str | None:
    """The first value beyond the limits in a trace that was read without error."""
    from mpiuq.simulator.trace import limits

    checks = (
        (1 <= trace.n_ranks <= limits.MAX_RANKS, f"n_ranks={trace.n_ranks}"),
        (not np.any(trace.bytes_send > limits.MAX_MESSAGE_BYTES), "bytes_send"),
        (not np.any(trace.bytes_recv > limits.MAX_MESSAGE_BYTES), "bytes_recv"),
        (not np.any((trace.bytes_send < 0) | (trace.bytes_recv < 0)), "negative bytes"),
        (bool(np.all(np.isfinite(trace.seconds))), "non-finite seconds"),
        (not np.any(trace.seconds > limits.MAX_OP_SECONDS), "seconds"),
        (not np.any(trace.seconds < 0), "negative seconds"),
        (not np.any(trace.tag < -1), "tag"),
        (not np.any((trace.peer < -3) | (trace.peer >= trace.n_ranks)), "peer"),
        (not np.any(trace.vcounts > limits.MAX_MESSAGE_BYTES), "vcounts"),
    )
    return next((what for ok, what in checks if not ok), None)


def read_case(kind: str, path: str) -> tuple[str, str]:
    """(outcome, detail) of reading one damaged trace, in this process."""
    from mpiuq.simulator.trace import (
        TraceFormatError,
        UnsupportedTraceError,
        load_trace_h5,
        read_trace,
    )

    try:
        trace = load_trace_h5(path) if kind == "h5" else read_trace(path, use_cache=False)
    except (TraceFormatError, UnsupportedTraceError) as exc:
        return "typed", str(exc)[:300]
    except Exception as exc:
        return "escaped", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"
    bad = out_of_range(trace)
    return ("out_of_range", bad) if bad else ("ok", f"{trace.n_ops} ops")


def _worker(conn: Any) -> None:
    while True:
        job = conn.recv()
        if job is None:
            return
        conn.send(read_case(*job))


class Worker:
    """A process reading cases one after another (replaced after a crash or hang)."""

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def run(self, kind: str, path: Path, timeout_s: float) -> tuple[str, str]:
        """Outcome of one case; restarts the worker after a crash or a hang."""
        self.conn.send((kind, str(path)))
        try:
            if self.conn.poll(timeout_s):
                outcome: tuple[str, str] = self.conn.recv()
                return outcome
            result = ("hang", f"no answer within {timeout_s:g} s")
        except (EOFError, OSError):
            self.proc.join(5)
            result = ("crash", f"worker exit code {self.proc.exitcode}")
        self.proc.kill()
        self.proc.join()
        self._start()
        return result

    def close(self) -> None:
        """Stop the worker."""
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(None)
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


@dataclass
class Report:
    """Outcome counts of one kind, with an example of each bad outcome."""

    kind: str
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    #: typed errors that report a C-library crash or hang contained in the reader child
    contained: int = 0

    @property
    def cases(self) -> int:
        """Number of cases run."""
        return sum(self.counts.values())

    def failures(self) -> int:
        """Crashes, hangs, escaped exceptions and silently accepted out-of-range values."""
        return sum(self.counts[k] for k in ("crash", "hang", "escaped", "out_of_range"))


def cases(seeds: list[Seed], n: int, seed: int) -> Iterator[tuple[Seed, Path, Callable[[], None]]]:
    """``n`` damaged copies, round-robin over the seeds (deterministic for ``seed``)."""
    rng = random.Random(seed)
    for i in range(n):
        s = seeds[i % len(seeds)]
        work = Path(tempfile.mkdtemp(prefix="fuzz-"))
        copy = work / s.root.name
        shutil.copytree(s.root, copy)
        moved = Seed(s.kind, s.name, copy, copy / s.path.relative_to(s.root),
                     [copy / t.relative_to(s.root) for t in s.targets])  # fmt: skip
        damage(moved, rng)
        yield s, moved.path, lambda w=work: shutil.rmtree(w, ignore_errors=True)


def fuzz(
    kind: str,
    n: int,
    *,
    seed: int = 0,
    timeout_s: float = 30.0,
    shared: bool = True,
    quick: bool = False,
) -> Report:
    """Run ``n`` damaged cases of ``kind`` and count the outcomes."""
    report = Report(kind)
    with tempfile.TemporaryDirectory(prefix=f"fuzz-seeds-{kind}-") as tmp:
        seeds = make_seeds(kind, Path(tmp), shared=shared, quick=quick)
        if not seeds:
            return report
        worker = Worker()
        try:
            for s, path, cleanup in cases(seeds, n, seed):
                outcome, detail = worker.run(kind, path, timeout_s)
                report.counts[outcome] += 1
                if outcome == "typed" and ("died (" in detail or "did not finish" in detail):
                    report.contained += 1
                    report.examples.setdefault("contained", f"{s.name}: {detail}")
                if outcome not in ("ok", "typed"):
                    report.examples.setdefault(outcome, f"{s.name}: {detail}")
                cleanup()
        finally:
            worker.close()
    return report
