"""Data reduction (eq. 7): filters, conversions, size selection and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mpiuq.calibration.data.benchmark_csv import Measurements, read_benchmark_csv
from mpiuq.calibration.data.observations import (
    convert_values,
    filter_replicas,
    select_sizes_per_protocol,
    summarize,
)
from mpiuq.calibration.errors import DataError


def _meas(sizes: list[int], values: list[float], runs: list[int] | None = None) -> Measurements:
    r = list(range(len(values))) if runs is None else runs
    return Measurements(
        np.asarray(r, dtype=np.int64),
        np.asarray(sizes, dtype=np.int64),
        np.asarray(values, dtype=np.float64),
        "us",
        "pingpong_half_rtt",
    )


def _write(path: Path, rows: list[tuple[int, int, float, str, str]]) -> Path:
    lines = ["run,msg_size_bytes,value,unit,benchmark"] + [",".join(map(str, r)) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mean_and_variance_follow_eq7_with_ddof1() -> None:
    m = _meas([8, 8, 8, 64, 64], [1.0, 2.0, 3.0, 4.0, 6.0])
    obs = summarize(m, (8, 64), "time_us")
    np.testing.assert_allclose(obs.mean, [2.0, 5.0])
    np.testing.assert_allclose(obs.var, [1.0, 2.0])  # 1/(R-1) sum (y - mu)^2
    assert obs.n_replicas.tolist() == [3, 2]
    assert obs.output_names == ("time_us@8B", "time_us@64B")


def test_throughput_is_converted_per_replica_before_averaging() -> None:
    m = _meas([1000, 1000], [1.0, 2.0])  # 1000 B in 1 us = 1000 MB/s, in 2 us = 500 MB/s
    obs = summarize(m, (1000,), "throughput_MBps")
    np.testing.assert_allclose(obs.mean, [750.0])
    np.testing.assert_allclose(obs.var, [2 * 250.0**2])
    np.testing.assert_allclose(convert_values([500.0], [1000], "MB/s", "time_us"), [2.0])


def test_drop_warmup_removes_first_iteration_of_each_burst() -> None:
    runs = list(range(20))
    values = [10.0 if r % 10 == 0 else 1.0 + 0.01 * r for r in runs]
    m = filter_replicas(_meas([4] * 20, values, runs), True, False, 10)
    assert sorted(m.run.tolist()) == [r for r in runs if r % 10]
    assert m.value.max() < 10.0


def test_aggregate_bursts_averages_each_burst() -> None:
    runs = list(range(20))
    values = [1.0] * 10 + [3.0] * 10
    m = filter_replicas(_meas([4] * 20, values, runs), False, True, 10)
    np.testing.assert_allclose(np.sort(m.value), [1.0, 3.0])
    obs = summarize(m, (4,), "time_us")
    np.testing.assert_allclose(obs.var, [2.0])


def test_fewer_than_two_replicas_is_an_error() -> None:
    with pytest.raises(DataError, match=r"size 8 B has 1 replica\(s\).*at least 2"):
        summarize(_meas([8, 64, 64], [1.0, 2.0, 3.0]), (8, 64), "time_us")


def test_zero_variance_is_an_error_unless_floored() -> None:
    m = _meas([8, 8], [2.0, 2.0])
    with pytest.raises(DataError, match=r"size 8 B has zero spread.*sd_floor_rel"):
        summarize(m, (8,), "time_us")
    obs = summarize(m, (8,), "time_us", sd_floor_rel=0.05)
    np.testing.assert_allclose(obs.sd, [0.1])


def test_missing_size_names_the_size_and_neighbours() -> None:
    with pytest.raises(DataError, match=r"size 100 B is missing.*nearest: \[64, 8\]"):
        summarize(_meas([8, 8, 64, 64], [1.0, 2.0, 3.0, 4.0]), (100,), "time_us")


def test_sizes_per_protocol_are_log_spaced_within_each_regime() -> None:
    avail = np.unique(np.round(np.geomspace(1, 1_000_000, 400)).astype(int))
    chosen = select_sizes_per_protocol(avail, 3, 4096, 65536)
    small = [s for s in chosen if s <= 4096]
    eager = [s for s in chosen if 4096 < s <= 65536]
    rdv = [s for s in chosen if s > 65536]
    assert len(small) == len(eager) == len(rdv) == 3
    assert small[0] == 1 and rdv[-1] == 1_000_000
    assert all(s in set(avail.tolist()) for s in chosen)
    # log-spaced: the middle one sits near the geometric mean of the regime's ends
    assert abs(np.log(eager[1]) - 0.5 * np.log(eager[0] * eager[2])) < 0.05


def test_csv_reader_selects_label_and_reports_bad_rows(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "d.csv",
        [(0, 8, 1.5, "us", "pingpong_half_rtt"), (0, 8, 9.0, "MB/s", "stream_bw")],
    )
    m = read_benchmark_csv(f, "pingpong_half_rtt")
    assert m.unit == "us" and m.value.tolist() == [1.5]
    with pytest.raises(DataError, match=r"label 'nope' not found.*pingpong_half_rtt"):
        read_benchmark_csv(f, "nope")
    bad = _write(tmp_path / "b.csv", [(0, 8, -1.0, "us", "x")])
    with pytest.raises(DataError, match=r"value -1.0 .*positive finite"):
        read_benchmark_csv(bad, "x")
    (tmp_path / "h.csv").write_text("a,b\n")
    with pytest.raises(DataError, match="header"):
        read_benchmark_csv(tmp_path / "h.csv", "x")


def test_real_stampede_data_matches_its_readme(stampede_csv: Path) -> None:
    m = read_benchmark_csv(stampede_csv, "pingpong_half_rtt")
    obs = summarize(m, (1, 65626, 989921), "time_us")
    # README table: n, mean half-RTT and sd (printed to 3-4 digits)
    assert obs.n_replicas.tolist() == [1250, 50, 50]
    np.testing.assert_allclose(obs.mean, [1.355, 18.451, 201.480], atol=6e-4)
    np.testing.assert_allclose(obs.sd, [0.121, 0.166, 0.592], rtol=0.002)  # ddof 1


def test_warmup_signal_tells_real_bursts_from_synthetic_replicas(stampede_csv: Path) -> None:
    from mpiuq.calibration.data.observations import warmup_signal
    from mpiuq.calibration.data.synthetic_data import synthetic_measurements
    from mpiuq.simulator.benchmarks.run import simulate_benchmark

    excess, p = warmup_signal(read_benchmark_csv(stampede_csv, "pingpong_half_rtt"), 10)
    assert 0.03 < excess < 0.1 and p < 1e-6  # README: first of a burst ~6% slower
    result = simulate_benchmark("pingpong", [1, 100, 1000, 4000, 20000, 80000, 300000, 10**6])
    rng = np.random.default_rng(0)
    plain = synthetic_measurements(result, 40, 0.02, rng)
    excess0, p0 = warmup_signal(plain, 10)
    assert abs(excess0) < 0.02 and p0 > 0.05
    warm = synthetic_measurements(result, 40, 0.02, rng, warmup_excess=0.06)
    first = warm.run % 10 == 0
    ratio = np.median(warm.value[first]) / np.median(warm.value[~first])
    assert ratio == pytest.approx(1.06, abs=0.02)
    excess1, p1 = warmup_signal(warm, 10)
    assert excess1 == pytest.approx(0.06, abs=0.02) and p1 < 0.01
    # dropping the warm-up iterations removes exactly the slowed ones
    kept = filter_replicas(warm, True, False, 10)
    assert not np.any(kept.run % 10 == 0) and kept.value.size == warm.value.size * 9 // 10


def test_one_value_per_size_needs_an_assumed_noise_level() -> None:
    m = _meas([8, 64], [2.0, 5.0])
    with pytest.raises(DataError, match=r"1 replica\(s\).*sd_floor_rel > 0: an assumed noise"):
        summarize(m, (8, 64), "time_us")
    obs = summarize(m, (8, 64), "time_us", sd_floor_rel=0.05)
    np.testing.assert_allclose(obs.sd, [0.1, 0.25])
    logs = summarize(m, (8, 64), "time_us", sd_floor_rel=0.05, log_scale=True)
    np.testing.assert_allclose(logs.log_var, [0.05**2, 0.05**2])


def test_log_scale_summary_is_the_geometric_centre() -> None:
    m = _meas([8] * 4, [1.0, 2.0, 4.0, 8.0])
    obs = summarize(m, (8,), "time_us", log_scale=True)
    np.testing.assert_allclose(obs.mean, [np.sqrt(8.0)])  # geometric mean
    sd_log = np.std(np.log([1.0, 2.0, 4.0, 8.0]), ddof=1)
    np.testing.assert_allclose(obs.log_var, [sd_log**2])
    np.testing.assert_allclose(obs.sd, [np.sqrt(8.0) * sd_log])
    med = summarize(m, (8,), "time_us", summary="median", log_scale=True)
    np.testing.assert_allclose(med.mean, [np.sqrt(8.0)])  # median of the logs
