"""The benchmark CSV format ``run,msg_size_bytes,value,unit,benchmark``: read and write.

This is the one owner of the format (the files of ``../shared/data/benchmarks`` and
the synthetic data of ``mpiuq simulate --replicas``): it turns a CSV into plain
arrays (:class:`Measurements`) and back, and knows nothing about statistics.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mpiuq.calibration.errors import DataError

_COLUMNS = ("run", "msg_size_bytes", "value", "unit", "benchmark")

#: Benchmark label and unit of each simulator benchmark's observable in the CSV.
BENCHMARK_LABELS: dict[str, tuple[str, str]] = {
    "pingpong": ("pingpong_half_rtt", "us"),
    "stream": ("stream_bw", "MB/s"),
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
        CSV with header ``run,msg_size_bytes,value,unit,benchmark``.
    benchmark
        Label to select, e.g. ``"pingpong_half_rtt"`` (values in us) or ``"stream_bw"``
        (values in MB/s).

    Raises
    ------
    DataError
        If the header is wrong, a row is malformed, the label is absent, or the
        selected rows mix units.
    OSError
        If the file cannot be read.
    """
    p = Path(path)
    runs: list[int] = []
    sizes: list[int] = []
    values: list[float] = []
    units: set[str] = set()
    labels: set[str] = set()
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != _COLUMNS:
            raise DataError(f"{p}: header {header!r} is invalid: expected {','.join(_COLUMNS)}")
        for line_no, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(_COLUMNS):
                raise DataError(f"{p}:{line_no}: row {row!r} has {len(row)} fields, expected 5")
            labels.add(row[4])
            if row[4] != benchmark:
                continue
            try:
                runs.append(int(row[0]))
                sizes.append(int(row[1]))
                values.append(float(row[2]))
            except ValueError as exc:
                raise DataError(f"{p}:{line_no}: row {row!r} is malformed ({exc})") from exc
            units.add(row[3])
    if not values:
        raise DataError(
            f"{p}: benchmark label {benchmark!r} not found: expected one of {sorted(labels)}"
        )
    if len(units) != 1:
        raise DataError(f"{p}: benchmark {benchmark!r} mixes units {sorted(units)}: expected one")
    value = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(value)) or np.any(value <= 0.0):
        bad = int(np.argmax(~np.isfinite(value) | (value <= 0.0)))
        raise DataError(
            f"{p}: value {float(value[bad])!r} (size {sizes[bad]} B, run {runs[bad]}) "
            "is invalid: expected a positive finite number"
        )
    return Measurements(
        np.asarray(runs, dtype=np.int64),
        np.asarray(sizes, dtype=np.int64),
        value,
        units.pop(),
        benchmark,
    )


def write_benchmark_csv(path: str | Path, measurements: Measurements) -> int:
    """Write ``measurements`` as a benchmark CSV (values to 7 significant digits).

    Returns the number of rows written. The file reads back with
    :func:`read_benchmark_csv` (``measurements.benchmark`` as the label).
    """
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(_COLUMNS)
        writer.writerows(
            (int(r), int(n), f"{v:.7g}", measurements.unit, measurements.benchmark)
            for r, n, v in zip(
                measurements.run, measurements.size_bytes, measurements.value, strict=True
            )
        )
    return int(measurements.value.size)
