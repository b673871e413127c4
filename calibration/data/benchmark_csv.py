"""The benchmark CSV format ``run,msg_size_bytes,value,unit,benchmark``: read and write.

This is the one owner of the format (the files of ``../shared/data/benchmarks`` and
the synthetic data of ``mpiuq simulate --replicas``): it turns a CSV into plain
arrays (:class:`Measurements`) and back, and knows nothing about statistics.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES
from mpiuq.calibration.errors import DataError
from mpiuq.surrogate.store.atomic_write import replace_atomically
from mpiuq.surrogate.store.text_input import not_a_file, other_separator, read_text, shown_line

_COLUMNS = ("run", "msg_size_bytes", "value", "unit", "benchmark")
#: Largest replica index ``run``.
MAX_RUN = 10**9
#: Largest value per unit (values must be positive): 10^12 us (11.6 days per message)
#: and 10^9 MB/s (1 PB/s).
MAX_VALUE_PER_UNIT: dict[str, float] = {"us": 1e12, "MB/s": 1e9}

#: Benchmark label and unit of each simulator benchmark's observable in the CSV.
BENCHMARK_LABELS: dict[str, tuple[str, str]] = {
    "pingpong": ("pingpong_half_rtt", "us"),
    "stream": ("stream_bw", "MB/s"),
    "pingpong_send": ("pingpong_send", "us"),
    "isend": ("isend", "us"),
    "recv_arrived": ("recv_arrived", "us"),
    "bidirectional_stream": ("stream_bibw", "MB/s"),
}


@dataclass(frozen=True, slots=True)
class Measurements:
    """Raw replicas of one benchmark.

    Attributes
    ----------
    run
        Replica index within its message size (chronological), shape (n,).
    size_bytes
        Message size of each row in bytes, shape (n,).
    value
        Measured value of each row, in ``unit``, shape (n,).
    unit
        ``"us"`` (time) or ``"MB/s"`` (throughput).
    benchmark
        Benchmark label of the rows.
    """

    run: npt.NDArray[np.int64]
    size_bytes: npt.NDArray[np.int64]
    value: npt.NDArray[np.float64]
    unit: str
    benchmark: str


def read_benchmark_csv(path: str | Path, benchmark: str) -> Measurements:
    """Read the rows of one benchmark label from a benchmark CSV file.

    Parameters
    ----------
    path
        CSV with header ``run,msg_size_bytes,value,unit,benchmark`` (UTF-8, an optional
        byte-order mark is ignored).
    benchmark
        Label to select, e.g. ``"pingpong_half_rtt"`` (values in us) or ``"stream_bw"``
        (values in MB/s).

    Raises
    ------
    DataError
        If the file is missing, a folder or not UTF-8 text, the header is wrong, a row is
        malformed or out of range (:data:`MAX_RUN`, :data:`MAX_MESSAGE_BYTES`,
        :data:`MAX_VALUE_PER_UNIT`), the label is absent, or the selected rows mix units. The
        message names the file and line.
    OSError
        If the file cannot be read for another reason (permissions, I/O error).
    """
    p = Path(path)
    what = not_a_file(p)
    if what is not None:
        raise DataError(f"{p} {what}: expected a benchmark CSV file ({','.join(_COLUMNS)})")
    text, why = read_text(p)
    if text is None:
        raise DataError(f"{p}: {why}: expected a benchmark CSV")
    runs: list[int] = []
    sizes: list[int] = []
    values: list[float] = []
    units: set[str] = set()
    labels: set[str] = set()
    line_no = 1
    if not text.strip():
        raise DataError(
            f"{p} is empty: expected a benchmark CSV with the header {','.join(_COLUMNS)} "
            "and one row per measurement"
        )
    first_line = text.lstrip("\r\n").splitlines()[0]
    separator = other_separator(first_line)
    if separator is not None:
        raise DataError(
            f"{p}: its fields are separated by {separator}: expected a comma-separated "
            f"file with the header {','.join(_COLUMNS)} (save it as CSV with commas; "
            "decimal points, not commas)"
        )
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        while header is not None and not any(h.strip() for h in header):
            header = next(reader, None)  # blank lines before the header
        if header is None or tuple(h.strip() for h in header) != _COLUMNS:
            first = text.split("\n", 1)[0].rstrip("\r")
            raise DataError(
                f"{p}: header {shown_line(first)} is invalid: expected {','.join(_COLUMNS)}"
            )
        for row in reader:
            line_no = reader.line_num
            if not row:
                continue
            if len(row) != len(_COLUMNS):
                raise DataError(
                    f"{p}:{line_no}: row {_short(row)} has {len(row)} fields, expected 5"
                )
            labels.add(row[4])
            if row[4] != benchmark:
                continue
            run, size, value, unit = _parse_row(p, line_no, row)
            runs.append(run)
            sizes.append(size)
            values.append(value)
            units.add(unit)
    except csv.Error as exc:
        raise DataError(f"{p}:{line_no + 1}: malformed CSV ({exc})") from None
    if not values:
        raise DataError(
            f"{p}: benchmark label {benchmark!r} not found: expected one of {sorted(labels)[:20]}"
        )
    if len(units) != 1:
        raise DataError(f"{p}: benchmark {benchmark!r} mixes units {sorted(units)}: expected one")
    return Measurements(
        np.asarray(runs, dtype=np.int64),
        np.asarray(sizes, dtype=np.int64),
        np.asarray(values, dtype=np.float64),
        units.pop(),
        benchmark,
    )


def _parse_row(p: Path, line_no: int, row: list[str]) -> tuple[int, int, float, str]:
    """``(run, size, value, unit)`` of a selected row, each checked against its range."""
    where = f"{p}:{line_no}"
    fields = {}
    for column, cell in zip(("run", "msg_size_bytes"), row[:2], strict=True):
        try:
            fields[column] = int(cell)
        except ValueError:
            raise DataError(
                f"{where}: {column} {_short(cell)} is invalid: expected a whole number"
            ) from None
    run, size = fields["run"], fields["msg_size_bytes"]
    if not 0 <= run <= MAX_RUN:
        raise DataError(f"{where}: run {run} is out of range: expected 0..{MAX_RUN}")
    if not 0 <= size <= MAX_MESSAGE_BYTES:
        raise DataError(
            f"{where}: msg_size_bytes {size} is out of range: expected 0..{MAX_MESSAGE_BYTES}"
        )
    unit = row[3].strip()
    if unit not in MAX_VALUE_PER_UNIT:
        raise DataError(
            f"{where}: unit {_short(row[3])} is invalid: expected one of {list(MAX_VALUE_PER_UNIT)}"
        )
    try:
        value = float(row[2])
    except ValueError:
        raise DataError(f"{where}: value {_short(row[2])} is invalid: expected a number") from None
    high = MAX_VALUE_PER_UNIT[unit]
    if not (math.isfinite(value) and 0.0 < value <= high):
        raise DataError(
            f"{where}: value {value!r} {unit} (size {size} B, run {run}) is out of range: "
            f"expected a positive finite number up to {high:g} {unit}"
        )
    return run, size, value, unit


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def write_benchmark_csv(path: str | Path, measurements: Measurements) -> int:
    """Write ``measurements`` as a benchmark CSV (values to 7 significant digits).

    Returns the number of rows written. The file reads back with
    :func:`read_benchmark_csv` (``measurements.benchmark`` as the label).
    """
    with replace_atomically(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(_COLUMNS)
        writer.writerows(
            (int(r), int(n), f"{v:.7g}", measurements.unit, measurements.benchmark)
            for r, n, v in zip(
                measurements.run, measurements.size_bytes, measurements.value, strict=True
            )
        )
    return int(measurements.value.size)
