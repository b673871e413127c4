"""Any simulator as a batched model: a Python callable, or a command on CSV files.

Design runs (:func:`~mpiuq.surrogate.design.design_run.run_design`) and calibration campaigns
call a batched model ``f(X) -> Y``, ``X`` of shape ``(n_sets, n_params)`` and ``Y`` of
shape ``(n_sets, n_outputs)``. Two picklable adapters make one of a user's simulator:

:class:`PythonModel`
    ``"module:function"`` or ``"path/file.py:function"``; the module is imported on first
    call (in the worker process that runs it), looked up in ``search_path`` first (the
    folder of a campaign file), then on ``sys.path``.
:class:`CommandModel`
    a command template such as ``("python3", "sim.py", "{input}", "{output}")``, run
    without a shell in ``cwd``: ``{input}`` is replaced by a CSV file holding a header of
    parameter names and one row per parameter set, ``{output}`` by the CSV file the
    command must write: a header of the output names, then one row per parameter set,
    in the input's order. ``{workdir}`` is a fresh folder for the call.

Both check what comes back, row by row: the right shape, finite values, and (with
``nonnegative``) nothing below zero. Anything wrong (the callable raised, the command
exited non-zero, timed out or wrote a malformed file, a row holds NaN or a negative
time) raises :class:`~mpiuq.surrogate.errors.SimulatorRunError` naming the parameter
set(s) by name and value. Run with one parameter set per call to isolate failures.

This module knows nothing of MPI: outputs are numbers with names.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.surrogate.errors import SimulatorRunError, SurrogateInputError

FloatArray = npt.NDArray[np.float64]

#: Placeholders a command template may use.
PLACEHOLDERS: tuple[str, ...] = ("{input}", "{output}", "{workdir}")
#: Parameter sets named in full in an error message (the rest are counted).
NAMED_SETS = 3
#: Characters of a failed command's standard error quoted in the message.
STDERR_TAIL = 800


def import_callable(spec: str, search_path: Sequence[str | os.PathLike[str]] = ()) -> object:
    """Import ``package.module:function`` or ``path/to/file.py:function``.

    A relative file path is resolved against the first folder of ``search_path`` (else the
    working directory); a module name is looked up in ``search_path`` first, then on
    ``sys.path``. The folders are put at the front of ``sys.path`` so that the function
    stays picklable by reference.

    Raises
    ------
    SurrogateInputError
        If the spec is malformed, the module cannot be imported (its error is quoted) or
        has no callable of that name.
    """
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise SurrogateInputError(
            f"model {spec!r} is invalid: expected MODULE:FUNCTION or FILE.py:FUNCTION"
        )
    folders = [Path(p).resolve() for p in search_path]
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute():
            path = (folders[0] if folders else Path.cwd()) / path
        path = path.resolve()
        if not path.is_file():
            raise SurrogateInputError(f"model {spec!r}: no such file {path}")
        folders = [path.parent, *folders]
        target = path.stem
    for folder in reversed(folders):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    _forget_other_origin(target, folders)
    try:
        module = importlib.import_module(target)
    except Exception as exc:  # the user's module may fail in any way while importing
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SurrogateInputError(
            f"model {spec!r}: cannot import {target!r} ({type(exc).__name__}: {reason}); "
            f"searched {[str(f) for f in folders]} and sys.path"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise SurrogateInputError(f"model {spec!r}: module {target!r} has no callable {attr!r}")
    return fn


def _forget_other_origin(target: str, folders: Sequence[Path]) -> None:
    """Drop a module of the name ``target`` imported earlier from elsewhere than the
    folders searched first, and put the folder holding ``target`` first on ``sys.path``: a
    second campaign's ``my_sim`` in the same process runs its own code, not the first's."""
    top = target.replace(".", "/")
    for folder in folders:
        for candidate in (folder / f"{top}.py", folder / top / "__init__.py"):
            if not candidate.is_file():
                continue
            loaded = getattr(sys.modules.get(target), "__file__", None)
            if loaded is not None and Path(loaded).resolve() != candidate.resolve():
                for name in [n for n in sys.modules if n == target or n.startswith(target + ".")]:
                    del sys.modules[name]
                importlib.invalidate_caches()
            if str(folder) in sys.path:
                sys.path.remove(str(folder))
            sys.path.insert(0, str(folder))
            return


def describe_sets(x: FloatArray, names: Sequence[str], rows: Sequence[int] | None = None) -> str:
    """``{a=1, b=2}`` for the parameter sets ``rows`` of ``x`` (the first few, then a count).

    Examples
    --------
    >>> describe_sets(np.array([[1.0, 2.5]]), ("a", "b"))
    'parameter set {a=1, b=2.5}'
    """
    pick = list(range(x.shape[0])) if rows is None else list(rows)
    shown = [
        "{" + ", ".join(f"{n}={v:.6g}" for n, v in zip(names, x[i], strict=True)) + "}"
        for i in pick[:NAMED_SETS]
    ]
    more = f" and {len(pick) - NAMED_SETS} more" if len(pick) > NAMED_SETS else ""
    noun = "parameter set" if len(pick) == 1 else "parameter sets"
    return f"{noun} {', '.join(shown)}{more}"


def check_outputs(
    y: object,
    x: FloatArray,
    names: Sequence[str],
    n_outputs: int | None,
    output_names: Sequence[str],
    nonnegative: bool,
    what: str,
) -> FloatArray:
    """Validate a batch of simulator outputs against its parameter sets.

    Parameters
    ----------
    y
        What the simulator returned for the rows of ``x``.
    x, names
        The parameter sets and the parameter names (for messages).
    n_outputs
        Outputs expected per set (None: any number, at least one).
    output_names
        Names of the outputs (for messages; may be empty).
    nonnegative
        Refuse negative values (times, throughputs).
    what
        The simulator, for messages (``"toy:simulate"``, ``"command ./sim.sh"``).

    Raises
    ------
    SimulatorRunError
        Wrong shape, a value that is not finite, or a negative one; names the set.
    """
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SimulatorRunError(
            f"{what} returned {type(y).__name__} ({exc}) for {describe_sets(x, names)}: "
            f"expected an array of shape ({x.shape[0]}, n_outputs)"
        ) from None
    if arr.ndim == 1 and x.shape[0] == 1 and n_outputs not in (None, 1):
        arr = arr[None, :]  # one set: a flat vector of its outputs
    elif arr.ndim == 1 and arr.shape[0] == x.shape[0]:
        arr = arr[:, None]
    want = f"({x.shape[0]}, {n_outputs if n_outputs is not None else 'n_outputs'})"
    if (
        arr.ndim != 2
        or arr.shape[0] != x.shape[0]
        or arr.shape[1] == 0
        or (n_outputs is not None and arr.shape[1] != n_outputs)
    ):
        raise SimulatorRunError(
            f"{what} returned shape {arr.shape} for {describe_sets(x, names)}: expected {want}"
        )
    bad = ~np.isfinite(arr)
    if nonnegative:
        bad |= arr < 0.0
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        label = output_names[j] if j < len(output_names) else f"output {j}"
        kind = "not finite" if not np.isfinite(arr[i, j]) else "negative"
        rows = np.flatnonzero(bad.any(axis=1))
        return_rows = (
            f" ({rows.size} of {x.shape[0]} sets in this call are affected)"
            if rows.size > 1
            else ""
        )
        raise SimulatorRunError(
            f"{what} returned {float(arr[i, j])!r} ({kind}) at {label} for "
            f"{describe_sets(x, names, [i])}{return_rows}: expected finite"
            + (" non-negative" if nonnegative else "")
            + " outputs"
        )
    return arr


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return "unreadable"


@dataclass(frozen=True, slots=True)
class PythonModel:
    """A user's batched Python function ``f(X) -> Y`` (picklable: imported on first call).

    Attributes
    ----------
    spec
        ``"module:function"`` or ``"file.py:function"``.
    parameter_names
        Names of the columns of ``X`` (for messages).
    n_outputs
        Outputs per parameter set (None: any number, checked by the caller).
    output_names
        Names of the outputs (for messages).
    search_path
        Folders searched first for the module (e.g. the campaign file's folder).
    nonnegative
        Refuse negative outputs.
    """

    spec: str
    parameter_names: tuple[str, ...]
    n_outputs: int | None = None
    output_names: tuple[str, ...] = ()
    search_path: tuple[str, ...] = ()
    nonnegative: bool = True

    @property
    def model_id(self) -> str:
        """Identity for design checkpoints: the spec and a digest of the module's source."""
        source = self._source_file()
        digest = _file_digest(source) if source is not None else "no-source"
        return f"python:{self.spec}:{digest}"

    def _source_file(self) -> Path | None:
        target = self.spec.rpartition(":")[0]
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_absolute() and self.search_path:
                path = Path(self.search_path[0]) / path
            return path
        for folder in self.search_path:
            for candidate in (
                Path(folder, *target.split(".")).with_suffix(".py"),
                Path(folder, *target.split("."), "__init__.py"),
            ):
                if candidate.is_file():
                    return candidate
        try:
            import importlib.util

            found = importlib.util.find_spec(target)
        except (ImportError, ValueError):
            return None
        return Path(found.origin) if found is not None and found.origin else None

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs of the parameter sets ``x``, shape (n_sets, n_outputs), checked."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        fn = import_callable(self.spec, self.search_path)
        try:
            y = fn(xs.copy())  # type: ignore[operator]
        except Exception as exc:  # the user's simulator may fail in any way
            reason = " ".join(str(exc).split()) or "no message"
            raise SimulatorRunError(
                f"{self.spec} raised {type(exc).__name__}: {reason} for "
                f"{describe_sets(xs, self.parameter_names)}"
            ) from None
        return check_outputs(
            y,
            xs,
            self.parameter_names,
            self.n_outputs,
            self.output_names,
            self.nonnegative,
            self.spec,
        )


@dataclass(frozen=True, slots=True)
class CommandModel:
    """A user's simulator run as a command on CSV files (no shell; picklable).

    Attributes
    ----------
    argv
        The command template; ``{input}``, ``{output}`` and ``{workdir}`` are replaced in
        every argument.
    parameter_names
        Header of the input CSV, in column order of ``X``.
    output_names
        Expected header of the output CSV, in order.
    cwd
        Working folder of the command (e.g. the campaign file's folder).
    timeout_s
        Wall-clock limit of one call, seconds.
    nonnegative
        Refuse negative outputs.
    env
        Extra environment variables ``(name, value)``.
    """

    argv: tuple[str, ...]
    parameter_names: tuple[str, ...]
    output_names: tuple[str, ...]
    cwd: str = "."
    timeout_s: float = 3600.0
    nonnegative: bool = True
    env: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.argv or not all(isinstance(a, str) and a for a in self.argv):
            raise SurrogateInputError(
                f"command {list(self.argv)!r} is invalid: expected a non-empty list of "
                "non-empty strings"
            )
        if not any("{output}" in a for a in self.argv):
            raise SurrogateInputError(
                f"command {list(self.argv)!r} has no {{output}}: the command must be told "
                "where to write its outputs CSV"
            )
        if not math.isfinite(self.timeout_s) or self.timeout_s <= 0:
            raise SurrogateInputError(
                f"timeout_s={self.timeout_s!r} is invalid: expected a positive number of seconds"
            )

    @property
    def model_id(self) -> str:
        """Identity for design checkpoints: the template, and digests of files it names."""
        parts = []
        for a in self.argv:
            p = Path(self.cwd, a)
            parts.append(f"{a}#{_file_digest(p)}" if p.is_file() else a)
        return "command:" + " ".join(parts)

    @property
    def what(self) -> str:
        """The command for messages."""
        return "command " + " ".join(self.argv)

    def __call__(self, x: npt.ArrayLike) -> FloatArray:
        """Outputs of the parameter sets ``x``, shape (n_sets, n_outputs), checked."""
        xs = np.atleast_2d(np.asarray(x, dtype=np.float64))
        with tempfile.TemporaryDirectory(prefix="mpiuq-run-") as tmp:
            work = Path(tmp)
            inp, out = work / "parameters.csv", work / "outputs.csv"
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow(self.parameter_names)
            writer.writerows([[repr(float(v)) for v in row] for row in xs])
            inp.write_text(buf.getvalue(), encoding="utf-8")
            subs = {"{input}": str(inp), "{output}": str(out), "{workdir}": str(work)}
            args = []
            for a in self.argv:
                for key, value in subs.items():
                    a = a.replace(key, value)
                args.append(a)
            env = dict(os.environ) | dict(self.env)
            try:
                proc = subprocess.run(
                    args,
                    cwd=self.cwd,
                    env=env,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=self.timeout_s,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise SimulatorRunError(
                    f"{self.what} timed out after {self.timeout_s:g} s for "
                    f"{describe_sets(xs, self.parameter_names)}: raise [simulator] timeout_s "
                    "or make the run cheaper"
                ) from None
            except OSError as exc:
                raise SimulatorRunError(
                    f"{self.what} could not start ({exc.strerror or exc}) in {self.cwd} for "
                    f"{describe_sets(xs, self.parameter_names)}"
                ) from None
            if proc.returncode != 0:
                tail = proc.stderr.strip()[-STDERR_TAIL:] or "(no standard error)"
                raise SimulatorRunError(
                    f"{self.what} exited with status {proc.returncode} for "
                    f"{describe_sets(xs, self.parameter_names)}; its standard error ends: {tail}"
                )
            y = self._read_outputs(out, xs)
        return check_outputs(
            y,
            xs,
            self.parameter_names,
            len(self.output_names),
            self.output_names,
            self.nonnegative,
            self.what,
        )

    def _read_outputs(self, path: Path, xs: FloatArray) -> FloatArray:
        sets = describe_sets(xs, self.parameter_names)
        if not path.is_file():
            raise SimulatorRunError(
                f"{self.what} exited 0 but wrote no outputs file {{output}} for {sets}"
            )
        try:
            text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
            rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
        except (UnicodeDecodeError, csv.Error) as exc:
            raise SimulatorRunError(
                f"{self.what} wrote an unreadable outputs file ({exc}) for {sets}: expected "
                "a UTF-8 CSV"
            ) from None
        header = tuple(c.strip() for c in rows[0]) if rows else ()
        if header != self.output_names:
            raise SimulatorRunError(
                f"{self.what} wrote the header {list(header)[:12]} for {sets}: expected the "
                f"output names {list(self.output_names)[:12]}"
                + (" ..." if len(self.output_names) > 12 else "")
                + " in this order"
            )
        if len(rows) - 1 != xs.shape[0]:
            raise SimulatorRunError(
                f"{self.what} wrote {len(rows) - 1} rows of outputs for {xs.shape[0]} "
                f"parameter sets ({sets}): expected one row per set, in the input's order"
            )
        y = np.empty((xs.shape[0], len(header)))
        for i, row in enumerate(rows[1:]):
            if len(row) != len(header):
                raise SimulatorRunError(
                    f"{self.what} wrote {len(row)} cells on row {i + 1} for "
                    f"{describe_sets(xs, self.parameter_names, [i])}: expected {len(header)}"
                )
            for j, cell in enumerate(row):
                try:
                    y[i, j] = float(cell)
                except ValueError:
                    raise SimulatorRunError(
                        f"{self.what} wrote {cell[:40]!r} at {header[j]} for "
                        f"{describe_sets(xs, self.parameter_names, [i])}: expected a number"
                    ) from None
        return y
