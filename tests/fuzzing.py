"""Seeded mutation fuzzing of mpiuq's input files, shared by the test suite and experiments/fuzz.

Each *kind* of input has a valid base file and a runner that feeds a (mutated) file through
the public entry point that reads it, then classifies the outcome:

``ok``
    accepted, and everything accepted lies in its documented range;
``typed``
    refused with one of mpiuq's typed errors (or an :class:`OSError` naming the file);
``escaped``
    any other exception: a traceback would reach the user;
``out-of-range``
    accepted although a value is outside its documented range (or results are wrong).

Mutations are byte-level (bit flips, insertions, deletions, duplications, truncation),
line-level (drop, duplicate, swap) and token-level (a number or a string replaced by an
absurd value: 2**63, -1, 1e300, nan, "..", an empty string...), one to three per case,
all drawn from a seeded :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from shared_data import committed_copy

from mpiuq.calibration.errors import CalibrationError
from mpiuq.simulator.errors import SimulatorError
from mpiuq.surrogate.errors import DesignRunError, SurrogateInputError

ROOT = Path(__file__).resolve().parents[1]
STAMPEDE_CSV = ROOT / "experiments" / "data" / "simgrid_stampede_ib_mvapich2" / "data.csv"


#: Errors that count as a clean refusal.
class CliRefusal(Exception):
    """A CLI case ended with a one-line error (exit 1 or 2): the typed outcome of the CLI."""


TYPED_ERRORS: tuple[type[BaseException], ...] = (
    CliRefusal,
    CalibrationError,
    SurrogateInputError,
    DesignRunError,
    SimulatorError,
    OSError,
)

#: Absurd replacements for numbers and strings.
ABSURD = (
    "0",
    "-1",
    "-0",
    "1e300",
    "-1e300",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "1e19",
    "1" + "0" * 40,
    "0.5",
    "-7",
    "1_000",
    "0x10",
    '""',
    '".."',
    '"."',
    '"/"',
    '"a b"',
    "true",
    "[]",
    "{}",
    "[1e300, 1e301]",
    "[-1, 5]",
    "\x00",
    "\xff",
)
_TOKEN = re.compile(r'-?\d[\d_.eE+-]*|"[^"\n]*"|\btrue\b|\bfalse\b')


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one case: status (see the module docstring) and a short detail."""

    status: str
    detail: str = ""


# --- mutations -------------------------------------------------------------------------------


def mutate_bytes(data: bytes, rng: np.random.Generator) -> bytes:
    """One byte-level mutation."""
    b = bytearray(data)
    if not b:
        return bytes(rng.integers(0, 256, size=int(rng.integers(1, 16)), dtype=np.uint8))
    i = int(rng.integers(0, len(b)))
    op = int(rng.integers(0, 7))
    if op == 0:  # bit flip
        b[i] ^= 1 << int(rng.integers(0, 8))
    elif op == 1:  # insert random bytes
        b[i:i] = bytes(rng.integers(0, 256, size=int(rng.integers(1, 9)), dtype=np.uint8))
    elif op == 2:  # delete a span
        del b[i : i + int(rng.integers(1, 65))]
    elif op == 3:  # duplicate a span
        b[i:i] = b[i : i + int(rng.integers(1, 257))]
    elif op == 4:  # truncate
        del b[i:]
    elif op == 5:  # special byte
        b[i] = int(rng.choice([0x00, 0xFF, 0x80, 0x0A, 0x2C, 0x22, 0x5B, 0x3D, 0x0D]))
    else:  # random byte
        b[i] = int(rng.integers(0, 256))
    return bytes(b)


def mutate_lines(data: bytes, rng: np.random.Generator) -> bytes:
    """Drop, duplicate or swap lines."""
    lines = data.split(b"\n")
    if len(lines) < 2:
        return mutate_bytes(data, rng)
    i, j = (int(v) for v in rng.integers(0, len(lines), size=2))
    op = int(rng.integers(0, 3))
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[j])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def mutate_tokens(data: bytes, rng: np.random.Generator) -> bytes:
    """Replace a number, string or boolean token with an absurd value."""
    text = data.decode("utf-8", "surrogateescape")
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if not spans:
        return mutate_bytes(data, rng)
    start, end = spans[int(rng.integers(0, len(spans)))]
    new = str(rng.choice(ABSURD))
    return (text[:start] + new + text[end:]).encode("utf-8", "surrogateescape")


def mutate_numbers_plausibly(data: bytes, rng: np.random.Generator) -> bytes:
    """Scale one or two numbers by 0.1-10 (or shift an integer by one): edge, not garbage."""
    text = data.decode("utf-8", "surrogateescape")
    spans = [m.span() for m in re.finditer(r"(?<![\w.])\d+(\.\d+)?(?![\w.])", text)]
    for _ in range(int(rng.integers(1, 3))):
        if not spans:
            break
        start, end = spans[int(rng.integers(0, len(spans)))]
        token = text[start:end]
        factor = float(rng.choice([0.1, 0.5, 2.0, 3.0, 10.0]))
        if "." in token:
            new = repr(float(token) * factor)
        else:
            value = int(token)
            new = str(
                max(0, value + int(rng.choice([-1, 1])))
                if rng.random() < 0.3
                else int(value * factor)
            )
        text = (
            text[:start] + new.ljust(end - start) + text[end:]
            if len(new) <= end - start
            else text[:start] + new + text[end:]
        )
        spans = [m.span() for m in re.finditer(r"(?<![\w.])\d+(\.\d+)?(?![\w.])", text)]
    return text.encode("utf-8", "surrogateescape")


def mutate(data: bytes, rng: np.random.Generator, text: bool = True) -> bytes:
    """One to three mutations (token- and line-level ones only for text files)."""
    strategies: list[Callable[[bytes, np.random.Generator], bytes]] = [mutate_bytes]
    if text:
        strategies += [mutate_tokens, mutate_tokens, mutate_lines]
    for _ in range(int(rng.integers(1, 4))):
        data = strategies[int(rng.integers(0, len(strategies)))](data, rng)
    return data


def mutate_hdf5(path: Path, rng: np.random.Generator) -> None:
    """One content-level change of an mpiuq HDF5 file, then re-signed (so it reaches h5py).

    Deletes an attribute or a dataset, replaces one with another type or shape, or changes
    a value; the file keeps a valid checksum, as if another program had edited it.
    """
    import h5py

    from mpiuq.surrogate.store.hdf5_checksum import sign

    weird: list[object] = [
        -1,
        2**62,
        1e300,
        np.nan,
        "",
        "x" * 300,
        np.arange(3),
        np.zeros((2, 2)),
        b"\xff\xfe",
        np.array(["a", "b"], dtype=h5py.string_dtype()),
    ]
    with h5py.File(path, "r+") as f:
        names = list(f.attrs) + list(f)
        name = names[int(rng.integers(0, len(names)))]
        op = int(rng.integers(0, 4))
        is_attr = name in f.attrs
        if op == 0:  # delete
            del (f.attrs if is_attr else f)[name]
        elif op == 1 or is_attr:  # replace with a value of another type or shape
            value = weird[int(rng.integers(0, len(weird)))]
            if is_attr:
                f.attrs[name] = value
            else:
                del f[name]
                f.create_dataset(name, data=value)
        elif op == 2:  # change one element in place
            data = np.array(f[name][()])
            if data.size and data.dtype.kind in "fiub":
                flat = data.reshape(-1)
                k = int(rng.integers(0, flat.size))
                flat[k] = (
                    [1, 0, -1, 2**31][int(rng.integers(0, 4))]
                    if data.dtype.kind in "iub"
                    else float(rng.choice([np.nan, np.inf, -1e300, 0.0, 1e300]))
                )
                f[name][...] = data
        else:  # reshape: drop the last row
            data = np.array(f[name][()])
            del f[name]
            f.create_dataset(name, data=data[:-1] if data.ndim else data)
    sign(path)


def classify(run: Callable[[], list[str]]) -> Outcome:
    """Run a case: ``run()`` returns the out-of-range findings of what it accepted."""
    try:
        problems = run()
    except TYPED_ERRORS as exc:
        return Outcome("typed", f"{type(exc).__name__}: {exc}"[:300])
    except Exception as exc:  # the finding we are looking for
        return Outcome("escaped", f"{type(exc).__name__}: {exc}"[:300])
    if problems:
        return Outcome("out-of-range", "; ".join(problems)[:300])
    return Outcome("ok")


# --- kinds -----------------------------------------------------------------------------------


def base_benchmark_csv(rows_per_size: int = 12, n_sizes: int = 14) -> bytes:
    """A small valid benchmark CSV: some sizes of the Stampede ping-pong data."""
    lines = STAMPEDE_CSV.read_text(encoding="utf-8").splitlines()
    by_size: dict[str, list[str]] = {}
    for line in lines[1:]:
        by_size.setdefault(line.split(",")[1], []).append(line)
    sizes = sorted(by_size, key=int)
    picked = [sizes[int(k)] for k in np.linspace(0, len(sizes) - 1, n_sizes).round()]
    body = [row for s in picked for row in by_size[s][:rows_per_size]]
    return ("\n".join([lines[0], *body]) + "\n").encode()


BASE_CAMPAIGN = b"""name = "fuzz"
seed = 3

[simulator]
benchmark = "pingpong"
window = 16

[simulator.fixed]
eager_max_bytes = 17408
small_max_bytes = 150
hop_latency_ns = 100.0

[parameters]
post_header_delay_us = [0.1, 3.0]
link_bw_GBps = [3.0, 8.0]
memory_bw_GBps = [2.0, 25.0]

[data]
path = "data.csv"
benchmark = "pingpong_half_rtt"
sizes_per_protocol = 2
drop_warmup = true
burst_length = 10
aggregate_bursts = false
sd_floor_rel = 0.01

[surrogate]
level = 3
order = 3

[calibration]
grouping = "sobol"
walkers = 12
steps = 50
burn = 50
max_steps = 200
ensembles = 2
target_rhat = 1.05
target_ess = 50
predictive_draws = 100
map_starts = 3

[refinement]
rounds = 1
pad = 0.5
error_draws = 100
max_steps = 200
target_rhat = 1.05

[exact]
draws = 200
proposal_draws = 400
move_steps = 5
map_starts = 3

[discrepancy]
model = "regime"
sd_rel = 0.2
compare = false

[checks]
max_khat = 0.7
min_ess = 50.0

[executor]
workers = 0
"""


def run_campaign_file(path: Path) -> list[str]:
    """Load, budget-check and read the data of a campaign file; out-of-range findings."""
    from mpiuq.calibration.config import MAX_NAME_CHARS, load_campaign
    from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES, parameter_range
    from mpiuq.calibration.data.observations import load_observations
    from mpiuq.calibration.pipeline.budget import check_campaign_budget

    c = load_campaign(path)
    check_campaign_budget(c)
    base = c.simulator.base_params()
    obs = load_observations(c.datasets, base.thresholds())
    problems = []
    if c.name in (".", "..") or "/" in c.name or not 0 < len(c.name) <= MAX_NAME_CHARS:
        problems.append(f"name {c.name!r}")
    if (Path("results") / c.name).resolve().parent != Path("results").resolve():
        problems.append(f"name {c.name!r} escapes results/")
    values = [(n, v) for n, v in c.simulator.fixed]
    values += [
        (n, v)
        for n, lo, hi in zip(
            c.parameters.names, c.parameters.lower, c.parameters.upper, strict=True
        )
        for v in (lo, hi)
    ]
    for name, value in values:
        low, high = parameter_range(name)
        if not low <= value <= high:
            problems.append(f"{name} = {value}")
    for d in c.datasets:
        if d.sizes is not None and not all(0 < s <= MAX_MESSAGE_BYTES for s in d.sizes):
            problems.append(f"sizes {d.sizes}")
    if not (np.all(np.isfinite(obs.mean)) and np.all(obs.var > 0) and np.all(np.isfinite(obs.var))):
        problems.append("observations not finite and positive")
    if c.calibration.walkers < 2 * c.parameters.dim or c.calibration.ensembles < 2:
        problems.append("sampler settings")
    return problems


def run_benchmark_csv(path: Path) -> list[str]:
    """Read a benchmark CSV and reduce it to observations; out-of-range findings."""
    from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES
    from mpiuq.calibration.data.benchmark_csv import MAX_RUN, MAX_VALUE_PER_UNIT, read_benchmark_csv
    from mpiuq.calibration.data.observations import (
        filter_replicas,
        select_sizes_per_protocol,
        summarize,
    )

    m = read_benchmark_csv(path, "pingpong_half_rtt")
    problems = []
    if m.unit not in MAX_VALUE_PER_UNIT:
        problems.append(f"unit {m.unit!r}")
    elif (
        not (np.all(np.isfinite(m.value)) and np.all(m.value > 0))
        or m.value.max() > MAX_VALUE_PER_UNIT[m.unit]
    ):
        problems.append("values out of range")
    if m.run.min() < 0 or m.run.max() > MAX_RUN:
        problems.append("run out of range")
    if m.size_bytes.min() < 0 or m.size_bytes.max() > MAX_MESSAGE_BYTES:
        problems.append("size out of range")
    f = filter_replicas(m, True, False, 10)
    sizes = select_sizes_per_protocol(f.size_bytes, 2, 150, 17408)
    obs = summarize(f, sizes, "time_us", 0.0)
    if not (np.all(np.isfinite(obs.mean)) and np.all(obs.var > 0) and np.all(np.isfinite(obs.var))):
        problems.append("observations not finite and positive")
    return problems


_BOX = {"lat_us": (0.5, 2.5), "bw_GBps": (1.0, 10.0), "eager_kb": (4.0, 64.0)}


#: ``--model`` of ``mpiuq surrogate run`` for :func:`external_model` (also its model identity).
MODEL_SPEC = f"{Path(__file__).resolve()}:external_model"


def external_model(x: np.ndarray) -> np.ndarray:
    """Stand-in simulator of the surrogate kinds (finite, smooth)."""
    return np.stack([x[:, 0] + 1e3 / x[:, 1] + 0.01 * x[:, 2], 2.0 * x[:, 0]], axis=1)


def base_design_files(folder: Path) -> tuple[Path, Path]:
    """A valid level-2 design CSV (with its sidecar) and the matching outputs CSV."""
    from mpiuq.surrogate.chaos.tables import write_design_csv, write_table_csv
    from mpiuq.surrogate.design.box import ParameterBox
    from mpiuq.surrogate.design.designs import sparse_grid_design

    box = ParameterBox.from_bounds(_BOX)
    x = sparse_grid_design(box, 3)
    design, outputs = folder / "design.csv", folder / "outputs.csv"
    write_design_csv(design, box, x, {"level": 3})
    write_table_csv(outputs, ("t_us", "lat_x2"), external_model(x))
    return design, outputs


def run_surrogate_fit(design: Path, outputs: Path) -> list[str]:
    """What ``mpiuq surrogate fit`` does (order 2, no plot); out-of-range findings."""
    from mpiuq.commands.surrogate import resolve_box, summary
    from mpiuq.surrogate import fit_pce
    from mpiuq.surrogate.chaos.pce import MAX_ABS_OUTPUT
    from mpiuq.surrogate.chaos.tables import read_table_csv

    pnames, x = read_table_csv(design)
    onames, y = read_table_csv(outputs, max_abs=MAX_ABS_OUTPUT)
    if x.shape[0] != y.shape[0]:
        raise SurrogateInputError("row counts differ")  # the CLI's check
    box = resolve_box(design, pnames, [])
    pce = fit_pce(x, y, box, 2, onames)
    doc = summary(pce)
    problems = []
    if not np.all(np.isfinite(pce.coefficients)):
        problems.append("non-finite coefficients")
    for key in ("mean", "variance", "sobol_first", "sobol_total"):
        if "null" in json.dumps(doc[key]):
            problems.append(f"null in {key}")
    return problems


def run_design_store(store: Path, design: np.ndarray, reference: np.ndarray) -> list[str]:
    """Resume (finish) a design run from a store; the outputs must equal the reference bits."""
    from mpiuq.surrogate import load_design_outputs, run_design

    for _ in run_design(external_model, design, store, chunk_size=7, model_id=MODEL_SPEC):
        pass
    _, y, _ = load_design_outputs(store)
    if y.shape != reference.shape or not np.array_equal(
        y.view(np.uint64), reference.view(np.uint64)
    ):
        return ["outputs differ from the uninterrupted run"]
    return []


def run_surrogate_h5(
    path: Path, reference_x: np.ndarray, reference_y: np.ndarray, edited: bool
) -> list[str]:
    """Load a surrogate file: a damaged one must be refused, an edited one must be valid.

    ``edited``: the file was changed through HDF5 and signed again, as by another
    program; it may be accepted if everything in it is finite and consistent. Otherwise
    its predictions must equal the reference bits.
    """
    from mpiuq.surrogate import load_pce

    pce = load_pce(path)
    y = pce.predict(reference_x)
    if edited:
        arrays = (pce.coefficients, pce.box.lower, pce.box.upper, y)
        return (
            [] if all(np.all(np.isfinite(a)) for a in arrays) else ["non-finite surrogate accepted"]
        )
    if y.shape != reference_y.shape or not np.array_equal(y, reference_y):
        return ["predictions differ from the saved surrogate"]
    return []


def run_summary_show(folder: Path) -> list[str]:
    """``mpiuq campaign show`` and ``load_calibrated`` on a summary; exit 0/2 only."""
    import contextlib
    import io

    from mpiuq.calibration.config.limits import parameter_range
    from mpiuq.calibration.reporting.calibrated import load_calibrated
    from mpiuq.main import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["campaign", "show", str(folder)])
    if code not in (0, 2) or "internal error" in err.getvalue():
        raise RuntimeError(f"campaign show exited {code}: {err.getvalue().strip()[:200]}")
    values = load_calibrated(folder).values()
    return [
        f"{n} = {v}"
        for n, v in values.items()
        if not parameter_range(n)[0] <= v <= parameter_range(n)[1]
    ]


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Run ``mpiuq`` in process; exit code and stderr.

    Raises
    ------
    RuntimeError
        If the command let a traceback or an internal error through (exit code not 0/1/2,
        or 1 with "internal error"): the finding of a CLI-level case.
    """
    import contextlib
    import io

    from mpiuq.main import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    text = err.getvalue()
    if code not in (0, 1, 2) or "internal error" in text or "Traceback" in text:
        raise RuntimeError(f"mpiuq {' '.join(argv[:2])} exited {code}: {text.strip()[:200]}")
    return code, text


def run_surrogate_fit_cli(design: Path, outputs: Path, out: Path) -> list[str]:
    """``mpiuq surrogate fit`` in process; out-of-range findings of an accepted fit."""
    argv = ["surrogate", "fit", "--design", str(design), "--outputs", str(outputs)]
    code, text = run_cli([*argv, "--order", "2", "--out", str(out), "--no-plot"])
    if code != 0:
        raise CliRefusal(text.strip())
    doc = json.loads((out / "surrogate.json").read_text())
    return [
        f"null in {k}" for k in ("mean", "variance", "sobol_total") if "null" in json.dumps(doc[k])
    ]


def run_surrogate_run_cli(store: Path, design: Path, reference: np.ndarray) -> list[str]:
    """``mpiuq surrogate run`` in process, resuming ``store``; outputs must equal the reference."""
    from mpiuq.surrogate.chaos.tables import read_table_csv

    outputs = store.with_suffix(".csv")
    argv = [
        "surrogate",
        "run",
        "--model",
        MODEL_SPEC,
        "--design",
        str(design),
        "--store",
        str(store),
    ]
    code, text = run_cli([*argv, "--outputs", str(outputs), "--chunk-size", "7", "--quiet"])
    if code != 0:
        raise CliRefusal(text.strip())
    _, y = read_table_csv(outputs)
    return [] if np.array_equal(y, reference) else ["outputs differ from the uninterrupted run"]


# --- case drivers ----------------------------------------------------------------------------


class Kinds:
    """Base files of every kind, built once in ``folder``, and one runner per kind."""

    NAMES = (
        "campaign-toml",
        "benchmark-csv",
        "design-csv",
        "outputs-csv",
        "design-store",
        "design-journal",
        "surrogate-h5",
        "summary-json",
        "results-folder",
        "swapped-handoff",
        "parameter-limits",
    )

    def __init__(self, folder: Path, cli: bool = False) -> None:
        from mpiuq.surrogate import fit_pce, load_design_outputs, run_design, save_pce
        from mpiuq.surrogate.chaos.tables import read_table_csv
        from mpiuq.surrogate.design.box import ParameterBox

        self.folder = folder
        self.cli = cli
        base = folder / "base"
        base.mkdir(parents=True, exist_ok=True)
        self.csv = base_benchmark_csv()
        (base / "data.csv").write_bytes(self.csv)
        self.campaign = BASE_CAMPAIGN
        self.design_path, self.outputs_path = base_design_files(base)
        self.design_bytes = self.design_path.read_bytes()
        self.sidecar_bytes = (base / "design.csv.json").read_bytes()
        self.outputs_bytes = self.outputs_path.read_bytes()
        _, self.design = read_table_csv(self.design_path)
        self.reference = external_model(self.design)
        store = base / "runs.h5"
        for _ in run_design(external_model, self.design, store, chunk_size=7, model_id=MODEL_SPEC):
            pass
        self.store_bytes = store.read_bytes()
        _, y, _ = load_design_outputs(store)
        assert np.array_equal(y, self.reference)
        partial = base / "partial.h5"
        gen = run_design(external_model, self.design, partial, chunk_size=7, model_id=MODEL_SPEC)
        for report in gen:
            if report.n_done >= 35:
                break
        gen.close()
        self.partial_store_bytes = partial.read_bytes()
        self.partial_journal_bytes = (base / "partial.h5.journal").read_bytes()
        box = ParameterBox.from_bounds(_BOX)
        pce = fit_pce(self.design, self.reference, box, 2, ("t_us", "lat_x2"))
        save_pce(pce, base / "surrogate.h5")
        self.pce_bytes = (base / "surrogate.h5").read_bytes()
        self.pce_x = self.design[:9]
        self.pce_y = pce.predict(self.pce_x)
        # the committed results as the last commit holds them, never the working tree's
        self.committed = committed_copy("results", base)
        self.results = self.committed / "stampede-ib"
        self.summary_bytes = (self.results / "summary.json").read_bytes()  # a complete one
        self.draws_bytes = (self.results / "posterior_draws.nc").read_bytes()
        self.results_reference = results_reference(self.results)

    def run(self, kind: str, case: int, rng: np.random.Generator) -> Outcome:
        """Mutate the base of ``kind`` with ``rng`` and classify the outcome."""
        work = self.folder / f"case-{kind}-{case}"
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        try:
            return getattr(self, "_" + kind.replace("-", "_"))(work, rng)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _campaign_toml(self, work: Path, rng: np.random.Generator) -> Outcome:
        (work / "data.csv").write_bytes(self.csv)
        path = work / "campaign.toml"
        path.write_bytes(mutate(self.campaign, rng))
        return classify(lambda: run_campaign_file(path))

    def _benchmark_csv(self, work: Path, rng: np.random.Generator) -> Outcome:
        path = work / "data.csv"
        path.write_bytes(mutate(self.csv, rng))
        return classify(lambda: run_benchmark_csv(path))

    def _design_csv(self, work: Path, rng: np.random.Generator) -> Outcome:
        design, outputs = work / "design.csv", work / "outputs.csv"
        mutate_sidecar = rng.random() < 0.3
        design.write_bytes(self.design_bytes if mutate_sidecar else mutate(self.design_bytes, rng))
        side = self.sidecar_bytes
        (work / "design.csv.json").write_bytes(mutate(side, rng) if mutate_sidecar else side)
        outputs.write_bytes(self.outputs_bytes)
        return self._fit(work, design, outputs)

    def _outputs_csv(self, work: Path, rng: np.random.Generator) -> Outcome:
        design, outputs = work / "design.csv", work / "outputs.csv"
        design.write_bytes(self.design_bytes)
        (work / "design.csv.json").write_bytes(self.sidecar_bytes)
        outputs.write_bytes(mutate(self.outputs_bytes, rng))
        return self._fit(work, design, outputs)

    def _fit(self, work: Path, design: Path, outputs: Path) -> Outcome:
        if self.cli:
            return classify(lambda: run_surrogate_fit_cli(design, outputs, work / "fit"))
        return classify(lambda: run_surrogate_fit(design, outputs))

    def _resume(self, work: Path, store: Path) -> Outcome:
        if self.cli:
            design = work / "design.csv"
            design.write_bytes(self.design_bytes)
            return classify(lambda: run_surrogate_run_cli(store, design, self.reference))
        return classify(lambda: run_design_store(store, self.design, self.reference))

    def _design_store(self, work: Path, rng: np.random.Generator) -> Outcome:
        store = work / "runs.h5"
        partial = rng.random() < 0.5
        base = self.partial_store_bytes if partial else self.store_bytes
        if rng.random() < 0.5:
            store.write_bytes(mutate(base, rng, text=False))
        else:
            store.write_bytes(base)
            mutate_hdf5(store, rng)
        if partial:
            (work / "runs.h5.journal").write_bytes(self.partial_journal_bytes)
        return self._resume(work, store)

    def _design_journal(self, work: Path, rng: np.random.Generator) -> Outcome:
        store = work / "runs.h5"
        store.write_bytes(self.partial_store_bytes)
        journal = mutate(self.partial_journal_bytes, rng, text=False)
        if rng.random() < 0.5:  # a kill mid-write: cut at a random byte
            journal = journal[: int(rng.integers(0, len(journal) + 1))]
        (work / "runs.h5.journal").write_bytes(journal)
        return self._resume(work, store)

    def _surrogate_h5(self, work: Path, rng: np.random.Generator) -> Outcome:
        path = work / "surrogate.h5"
        edited = rng.random() < 0.5
        if edited:
            path.write_bytes(self.pce_bytes)
            mutate_hdf5(path, rng)
        else:
            path.write_bytes(mutate(self.pce_bytes, rng, text=False))
        return classify(lambda: run_surrogate_h5(path, self.pce_x, self.pce_y, edited))

    def _results_folder(self, work: Path, rng: np.random.Generator) -> Outcome:
        """One or more byte-, line- or token-level changes of ``summary.json`` or of the
        posterior draws of a results folder: the hand-off gives the same values or refuses."""
        (work / "summary.json").write_bytes(self.summary_bytes)
        (work / "posterior_draws.nc").write_bytes(self.draws_bytes)
        name = "summary.json" if rng.random() < 0.5 else "posterior_draws.nc"
        data = (work / name).read_bytes()
        if rng.random() < 0.3:  # a cut file
            data = data[: int(rng.integers(0, len(data)))]
        else:
            data = mutate(data, rng, text=name.endswith(".json"))
        (work / name).write_bytes(data)
        return classify(lambda: run_results_folder(work, self.results_reference))

    def _swapped_handoff(self, work: Path, rng: np.random.Generator) -> Outcome:
        """Another committed campaign's summary beside these draws: the draws are refused."""
        others = sorted(
            p for p in self.committed.glob("*/summary.json") if p.parent != self.results
        )
        (work / "summary.json").write_bytes(others[int(rng.integers(0, len(others)))].read_bytes())
        (work / "posterior_draws.nc").write_bytes(self.draws_bytes)
        return classify(lambda: run_swapped_handoff(work))

    def _parameter_limits(self, work: Path, rng: np.random.Generator) -> Outcome:
        """An absurd or edge value through one of the ways a parameter value enters."""
        return classify(lambda: run_parameter_limits(work, rng, self.summary_bytes))

    def _summary_json(self, work: Path, rng: np.random.Generator) -> Outcome:
        (work / "summary.json").write_bytes(mutate(self.summary_bytes, rng))
        return classify(lambda: run_summary_show(work))


def results_reference(folder: Path) -> dict[str, object]:
    """What the hand-off of a sound results folder gives: its median values and 50 draws."""
    from mpiuq.calibration.reporting.calibrated import load_calibrated, load_posterior_draws

    return {
        "values": load_calibrated(folder).values(),
        "draws": load_posterior_draws(folder, 50, seed=0).values,
    }


def run_results_folder(folder: Path, reference: dict[str, object]) -> list[str]:
    """The hand-off of a (damaged) results folder: the reference values, or a typed error."""
    from mpiuq.calibration.reporting.calibrated import load_calibrated, load_posterior_draws

    problems = []
    if load_calibrated(folder).values() != reference["values"]:
        problems.append("calibrated values differ from the undamaged folder's")
    draws = load_posterior_draws(folder, 50, seed=0).values
    if not np.array_equal(draws, reference["draws"]):  # type: ignore[arg-type]
        problems.append("draws differ from the undamaged folder's")
    return problems


def run_swapped_handoff(folder: Path) -> list[str]:
    """Draws beside another campaign's summary must be refused."""
    from mpiuq.calibration.reporting.calibrated import load_posterior_draws

    load_posterior_draws(folder, 5)
    return ["draws replayed under another campaign's summary"]


def run_parameter_limits(work: Path, rng: np.random.Generator, summary: bytes) -> list[str]:
    """One value (absurd, edge or sound) through one entry point: a typed error, or a
    parameter set whose every value lies in its documented range."""
    from mpiuq.calibration.config.limits import parameter_range
    from mpiuq.calibration.reporting.calibrated import load_calibrated
    from mpiuq.calibration.reporting.handoff import _record_digest
    from mpiuq.commands.arguments import parse_assignments
    from mpiuq.simulator.parameters import SimParams, params_matrix
    from mpiuq.simulator.replay.scenarios import parse_scenario

    names = [*SimParams().as_dict()]
    name = names[int(rng.integers(0, len(names)))]
    text = str(rng.choice([*ABSURD[:20], "1", "12.5", "4096", "0.001", "1e5", "1e7"]))
    way = int(rng.integers(0, 5))
    if way == 0:  # --param NAME=VALUE
        params = SimParams.from_mapping(parse_assignments([f"{name}={text}"]))
    elif way == 1:  # a what-if edit
        op = str(rng.choice(["*=", "/=", "="]))
        params = parse_scenario(f"s: {name}{op}{text}").apply_params(SimParams())
    elif way == 2:  # a value of the hand-off record (its digest recorded again)
        doc = json.loads(summary)
        record = doc["handoff"]
        key = str(rng.choice(sorted(record["estimates"])))
        record["estimates"][key]["median"] = float(text) if _decimal(text) else text
        record["sha256"] = _record_digest({k: v for k, v in record.items() if k != "sha256"})
        (work / "summary.json").write_text(json.dumps(doc))
        (work / "posterior_draws.nc").write_bytes(b"")
        params = load_calibrated(work).params()
    elif way == 3:  # a parameter set built directly
        params = SimParams.from_mapping({name: float(text) if _decimal(text) else text})
    else:  # a row of the engine's parameter matrix
        row = params_matrix(SimParams(), [name], [[float(text) if _decimal(text) else np.nan]])
        return [
            f"{n} = {v}"
            for n, v in zip(names, row[0], strict=True)
            if np.isfinite(v) and not parameter_range(n)[0] <= v <= parameter_range(n)[1]
        ]
    return [
        f"{n} = {v}"
        for n, v in params.as_dict().items()
        if np.isfinite(v) and not parameter_range(n)[0] <= v <= parameter_range(n)[1]
    ]


def _decimal(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
